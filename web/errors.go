package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web/views"
	"github.com/gofiber/fiber/v2"
)

// statuses maps each error code to its HTTP status. This is the only place
// where that mapping lives; Fiber's own errors map back through it.
var statuses = map[string]int{
	bullpen.EINVALID:      http.StatusBadRequest,
	bullpen.EUNAUTHORIZED: http.StatusUnauthorized,
	bullpen.EFORBIDDEN:    http.StatusForbidden,
	bullpen.ENOTFOUND:     http.StatusNotFound,
	bullpen.ECONFLICT:     http.StatusConflict,
	bullpen.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	bullpen.ERATELIMIT:    http.StatusTooManyRequests,
	bullpen.EUNSUPPORTED:  http.StatusNotImplemented,
	bullpen.EUNAVAILABLE:  http.StatusServiceUnavailable,
}

// retryAfterSeconds is the Retry-After of an "unavailable" answer.
const retryAfterSeconds = "5"

// fiberStatuses are statuses Fiber and fasthttp produce that have no code
// of their own.
var fiberStatuses = map[int]string{
	http.StatusMethodNotAllowed:            bullpen.ENOTFOUND,
	http.StatusRequestHeaderFieldsTooLarge: bullpen.ETOOLARGE,
	http.StatusRequestURITooLong:           bullpen.ETOOLARGE,
	http.StatusUpgradeRequired:             bullpen.EINVALID,
}

// statusOf returns the HTTP status of an error code.
func statusOf(code string) int {
	if st, ok := statuses[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// codeOfStatus maps Fiber's own errors (body too large, bad method) to codes.
func codeOfStatus(status int) string {
	if code, ok := fiberStatuses[status]; ok {
		return code
	}
	for code, st := range statuses {
		if st == status {
			return code
		}
	}
	return bullpen.EINTERNAL
}

// errorBody is the one error shape of the API.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// Field names the request's field at fault, when one is.
		Field string `json:"field,omitempty"`
	} `json:"error"`
}

// handleError renders every error: JSON under /api, an HTML page elsewhere.
// Only internal errors are logged, through the request's logger so that
// the line names the request id the client got back.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	code, msg := bullpen.ErrorCode(err), bullpen.ErrorMessage(err)
	var fe *fiber.Error
	if errors.As(err, &fe) && fe.Code == http.StatusRequestTimeout {
		return c.SendStatus(fe.Code) // an idle keep-alive connection timed out
	}
	if errors.As(err, &fe) {
		code, msg = codeOfStatus(fe.Code), fe.Message
		if fe.Code == http.StatusRequestEntityTooLarge {
			msg = "request body is too large"
		}
	}
	status := statusOf(code)
	if code == bullpen.EUNAVAILABLE && c.GetRespHeader(fiber.HeaderRetryAfter) == "" {
		c.Set(fiber.HeaderRetryAfter, retryAfterSeconds) // a dependency that is down may be back soon
	}
	if code == bullpen.EINTERNAL {
		s.logFor(c).Error("internal error", "method", c.Method(), "path", c.Path(), "err", err)
	}
	// A request the server could not read (a request line or headers
	// longer than its buffer) has no path to go by: it gets the JSON
	// error, which an API client can read and a browser still shows.
	unread := fe != nil && len(c.Request().Header.RawHeaders()) == 0
	if p := c.Path(); unread || strings.HasPrefix(p, "/api/") || p == "/healthz" || p == "/metrics" || p == mcpPath {
		var body errorBody
		body.Error.Code, body.Error.Message, body.Error.Field = code, msg, bullpen.ErrorField(err)
		return c.Status(status).JSON(body)
	}
	if status == http.StatusUnauthorized {
		return c.Redirect("/login?next="+url.QueryEscape(c.OriginalURL()), http.StatusSeeOther)
	}
	c.Status(status)
	return render(c, views.Error(views.ErrorPage{Status: status, Code: code, Message: msg}))
}
