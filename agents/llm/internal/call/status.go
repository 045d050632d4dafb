package call

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// StatusError is a non-2xx answer from a model API, or an error event in
// the middle of a 200 stream.
type StatusError struct {
	Status  int
	Message string // the vendor's error message, if it sent one
	Header  http.Header
	// Event is the vendor's error type when the error came as an event in
	// the stream ("overloaded_error"); Status is then the HTTP status that
	// type stands for, which decides the error code and whether to retry.
	Event string
}

func (e *StatusError) Error() string {
	head := fmt.Sprintf("HTTP %d", e.Status)
	if e.Event != "" {
		head = "error event in the stream: " + e.Event
	}
	if e.Message == "" {
		return head
	}
	return head + ": " + e.Message
}

// Capture records the last non-2xx response of an attempt (Post sends
// through it), so status, headers and the vendor's message are known
// whatever shape of error body an OpenAI-compatible server sends.
//
// When the request's context carries an llm.Recorder it also keeps the
// request and response bodies as they went over the wire, and Report
// hands them on.
type Capture struct {
	mu  sync.Mutex
	err *StatusError
	x   exchange
}

// send runs next (the HTTP client) on req, keeping what Capture keeps.
func (c *Capture) send(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	recording := llm.RecorderFrom(req.Context()) != nil
	if recording {
		if err := c.x.keep(req); err != nil {
			return nil, err
		}
	}
	res, err := next(req)
	if err == nil && recording {
		c.x.answered(res)
	}
	if err != nil || res.StatusCode < 400 {
		return res, err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	c.err = &StatusError{Status: res.StatusCode, Message: vendorMessage(body), Header: res.Header.Clone()}
	c.mu.Unlock()
	return res, nil
}

// Err returns the captured status error, or nil if every response was 2xx.
func (c *Capture) Err() *StatusError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// vendorMessage digs the human message out of an error body: OpenAI and
// Anthropic use {"error":{"message":…}}, some compatible servers
// {"error":"…"}, {"message":…} or {"detail":…}, proxies plain text.
func vendorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return clip(inner.Message)
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return clip(s)
		case v.Message != "":
			return clip(v.Message)
		case v.Detail != nil:
			return clip(fmt.Sprint(v.Detail))
		}
		return ""
	}
	return clip(strings.TrimSpace(string(body)))
}

func clip(s string) string {
	const max = 300
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// RetryAfter reads a server-directed delay: retry-after-ms (sent by OpenAI
// and Anthropic), then Retry-After in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
