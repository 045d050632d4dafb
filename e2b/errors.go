package e2b

import (
	"encoding/json"
	"errors"
	"net/http"

	"connectrpc.com/connect"
	"github.com/bullpen-hq/bullpen"
)

// apiStatus maps Bullpen's error codes to the HTTP statuses E2B answers.
var apiStatus = map[string]int{
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

func statusOf(err error) int {
	if st, ok := apiStatus[bullpen.ErrorCode(err)]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// apiError is E2B's error body: {"code": <HTTP status>, "message": …}.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// writeError answers err as E2B's API does. Internal errors are logged
// and answered without their detail.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	st := statusOf(err)
	msg := bullpen.ErrorMessage(err)
	if st == http.StatusInternalServerError {
		s.log.Error("e2b: request failed", "err", err)
		msg = "internal error"
	}
	writeJSON(w, st, apiError{Code: st, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// connectCodes maps Bullpen's error codes to Connect's, as envd answers.
var connectCodes = map[string]connect.Code{
	bullpen.EINVALID:      connect.CodeInvalidArgument,
	bullpen.EUNAUTHORIZED: connect.CodeUnauthenticated,
	bullpen.EFORBIDDEN:    connect.CodePermissionDenied,
	bullpen.ENOTFOUND:     connect.CodeNotFound,
	bullpen.ECONFLICT:     connect.CodeFailedPrecondition,
	bullpen.ETOOLARGE:     connect.CodeResourceExhausted,
	bullpen.ERATELIMIT:    connect.CodeResourceExhausted,
	bullpen.EUNSUPPORTED:  connect.CodeUnimplemented,
	bullpen.EUNAVAILABLE:  connect.CodeUnavailable,
}

// rpcError turns err into a Connect error with envd's code.
func (s *Server) rpcError(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce
	}
	code, ok := connectCodes[bullpen.ErrorCode(err)]
	if !ok {
		s.log.Error("e2b: rpc failed", "err", err)
		return connect.NewError(connect.CodeInternal, errors.New("internal error"))
	}
	return connect.NewError(code, errors.New(bullpen.ErrorMessage(err)))
}
