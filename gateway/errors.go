package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/bullpen-hq/bullpen"
)

// statusOf maps an error code to the HTTP status the CLI sees.
var statusOf = map[string]int{
	bullpen.EINVALID:      http.StatusBadRequest,
	bullpen.EUNAUTHORIZED: http.StatusUnauthorized,
	bullpen.EFORBIDDEN:    http.StatusForbidden,
	bullpen.ENOTFOUND:     http.StatusNotFound,
	bullpen.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	bullpen.ERATELIMIT:    http.StatusTooManyRequests,
	bullpen.EUNAVAILABLE:  http.StatusServiceUnavailable,
	bullpen.EINTERNAL:     http.StatusInternalServerError,
}

// anthropicTypes are Anthropic's error types by status.
var anthropicTypes = map[int]string{
	http.StatusBadRequest:            "invalid_request_error",
	http.StatusUnauthorized:          "authentication_error",
	http.StatusForbidden:             "permission_error",
	http.StatusNotFound:              "not_found_error",
	http.StatusRequestEntityTooLarge: "request_too_large",
	http.StatusTooManyRequests:       "rate_limit_error",
	http.StatusServiceUnavailable:    "api_error",
	http.StatusInternalServerError:   "api_error",
}

// openAITypes are OpenAI's error type and code by status.
var openAITypes = map[int][2]string{
	http.StatusBadRequest:            {"invalid_request_error", ""},
	http.StatusUnauthorized:          {"invalid_request_error", "invalid_api_key"},
	http.StatusForbidden:             {"invalid_request_error", "forbidden"},
	http.StatusNotFound:              {"invalid_request_error", "not_found"},
	http.StatusRequestEntityTooLarge: {"invalid_request_error", "request_too_large"},
	http.StatusTooManyRequests:       {"insufficient_quota", "insufficient_quota"},
	http.StatusServiceUnavailable:    {"server_error", ""},
	http.StatusInternalServerError:   {"server_error", ""},
}

// errorBody is err in the error JSON of the API kind, and its status.
// Internal errors show a generic message (bullpen.ErrorMessage).
func errorBody(kind string, err error) (int, []byte) {
	status, ok := statusOf[bullpen.ErrorCode(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	msg := bullpen.ErrorMessage(err)
	var v any
	if kind == KindGemini {
		return status, geminiErrorBody(status, msg)
	}
	if kind == KindAnthropic {
		v = map[string]any{"type": "error", "error": map[string]any{"type": anthropicTypes[status], "message": msg}}
	} else {
		t := openAITypes[status]
		var code any
		if t[1] != "" {
			code = t[1]
		}
		v = map[string]any{"error": map[string]any{"message": msg, "type": t[0], "param": nil, "code": code}}
	}
	b, _ := json.Marshal(v)
	return status, b
}

// writeError answers with err in the API's own error shape. Unless retry
// is set it also says x-should-retry: false, which the vendors' SDKs (and
// so the CLIs) honour: a spent budget or a missing provider does not get
// better with back-off, and Claude Code would otherwise retry a 429 for
// minutes.
func writeError(w http.ResponseWriter, kind string, err error, retry bool) {
	status, body := errorBody(kind, err)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if !retry {
		h.Set("x-should-retry", "false")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// geminiStatuses are the Google API's canonical status names by HTTP
// status, as its error bodies carry them.
var geminiStatuses = map[int]string{
	http.StatusBadRequest:            "INVALID_ARGUMENT",
	http.StatusUnauthorized:          "UNAUTHENTICATED",
	http.StatusForbidden:             "PERMISSION_DENIED",
	http.StatusNotFound:              "NOT_FOUND",
	http.StatusConflict:              "ABORTED",
	http.StatusRequestEntityTooLarge: "INVALID_ARGUMENT",
	http.StatusTooManyRequests:       "RESOURCE_EXHAUSTED",
	499:                              "CANCELLED",
	http.StatusInternalServerError:   "INTERNAL",
	http.StatusNotImplemented:        "UNIMPLEMENTED",
	http.StatusBadGateway:            "UNAVAILABLE",
	http.StatusServiceUnavailable:    "UNAVAILABLE",
	http.StatusGatewayTimeout:        "DEADLINE_EXCEEDED",
}

// geminiErrorBody is the Gemini API's error shape:
// {"error":{"code":429,"message":…,"status":"RESOURCE_EXHAUSTED"}}.
func geminiErrorBody(status int, msg string) []byte {
	name, ok := geminiStatuses[status]
	if !ok {
		name = "UNKNOWN"
		if status < 500 {
			name = "FAILED_PRECONDITION"
		}
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": name}})
	return b
}

// writeGeminiError answers with a Gemini error of the given status.
func writeGeminiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(geminiErrorBody(status, msg))
}
