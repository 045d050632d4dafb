// Package bullpen holds the domain types shared by every part of Bullpen:
// members, channels, messages, events, and the error codes that the web
// layer maps to HTTP statuses. It does no I/O.
package bullpen

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status in the web layer.
const (
	ECONFLICT     = "conflict"     // 409: a unique name is taken, a stale revision
	EINTERNAL     = "internal"     // 500: a bug or an outage; logged
	EINVALID      = "invalid"      // 400 or 422: bad input
	ENOTFOUND     = "not_found"    // 404
	EUNAUTHORIZED = "unauthorized" // 401: no or a bad credential
	EFORBIDDEN    = "forbidden"    // 403: a credential without the right
	ETOOLARGE     = "too_large"    // 413: a body or a value over a limit
	EUNSUPPORTED  = "unsupported"  // 501: the host cannot do this
	ERATELIMIT    = "rate_limited" // 429: a budget or a rate limit said no
	EUNAVAILABLE  = "unavailable"  // 503: a dependency is down or not configured
)

// Error is an application error with a code and a message fit to show a user.
type Error struct {
	Code    string
	Message string
	// Field, when set, names the request's field at fault (its JSON
	// name), so that a form can show the message beside that field.
	Field string
	Err   error // optional cause, never shown to users
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("bullpen: %s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("bullpen: %s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf returns an *Error with the given code and message about
// the request's field (its JSON name).
func FieldErrorf(field, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Field: field}
}

// ErrorField returns the field named by the first *Error in err's chain,
// "" when none is.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err. Internal errors get a
// generic message so that no internals leak.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	}
	return "internal error"
}

// IsCode reports whether err carries the given code.
func IsCode(err error, code string) bool { return ErrorCode(err) == code }
