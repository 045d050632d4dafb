package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/testutil"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
)

// rawServer answers every request with status and body as written, the
// n-th request (from 0) with bodies[min(n, last)]: SSE the way servers
// really send it, odd corners included.
func rawServer(t *testing.T, status int, contentType string, bodies ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, bodies[min(i, len(bodies)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func rawProvider(srv *httptest.Server, sleeps *testutil.Sleeps) *openai.Provider {
	return openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "m", Sleep: sleeps.Sleep,
		Rand: func() float64 { return 0 }})
}

func chunk(content string) string {
	return `data: {"model":"m-1","choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}]}` + "\n\n"
}

const finish = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2}}` + "\n\n"

// Keep-alive comments (OpenRouter sends ": OPENROUTER PROCESSING"),
// CRLF line endings, an event field and multi-line data all decode; the
// answer is whole even without the [DONE] sentinel.
func TestStreamTolerance(t *testing.T) {
	body := ": OPENROUTER PROCESSING\r\n\r\n" + strings.ReplaceAll(chunk("Hel"), "\n", "\r\n") +
		"event: chunk\ndata: {\"choices\":[{\"index\":0,\n" + `data: "delta":{"content":"lo"}}]}` + "\n\n" + ":\n\n" + finish
	srv, _ := rawServer(t, 200, "text/event-stream", body)
	var d testutil.Deltas
	resp, err := rawProvider(srv, &testutil.Sleeps{}).Complete(context.Background(), userReq("hi"), d.Add)
	if err != nil {
		t.Fatalf("Complete() error = %v", err)
	}
	if resp.Text != "Hello" || strings.Join(d.All(), "|") != "Hel|lo" || resp.Model != "m-1" ||
		resp.Usage != (llm.Usage{InputTokens: 9, OutputTokens: 2}) || resp.StopReason != llm.StopEnd {
		t.Errorf("Complete() = %+v, deltas %q", resp, d.All())
	}
}

// An error object inside a 200 stream is an error of the code its type
// stands for; before any text it is retried like the status it names,
// after text it is not.
func TestErrorInStream(t *testing.T) {
	tests := []struct {
		name, body, code, msg string
		requests              int32
	}{
		{"server error before text is retried",
			`data: {"error":{"message":"The server had an error","type":"server_error","code":null}}` + "\n\n",
			bullpen.EUNAVAILABLE, "openai: error event in the stream: server_error: The server had an error (gave up after 4 attempts)", 4},
		{"rate limit by code", `data: {"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}` + "\n\n",
			bullpen.ERATELIMIT, "openai: error event in the stream: requests: slow down (gave up after 4 attempts)", 4},
		{"numeric code is the status (vLLM)", `data: {"error":{"message":"context too long","type":"BadRequestError","code":400}}` + "\n\n",
			bullpen.EINVALID, "openai: error event in the stream: BadRequestError: context too long", 1},
		{"bare string error", `data: {"error":"model crashed"}` + "\n\n",
			bullpen.EUNAVAILABLE, "openai: error event in the stream: error: model crashed (gave up after 4 attempts)", 4},
		{"after text: not retried", chunk("par") + `data: {"error":{"message":"boom","type":"server_error"}}` + "\n\n",
			bullpen.EUNAVAILABLE, "openai: error event in the stream: server_error: boom", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := rawServer(t, 200, "text/event-stream", tt.body)
			_, err := rawProvider(srv, &testutil.Sleeps{}).Complete(context.Background(), userReq("hi"), nil)
			if bullpen.ErrorCode(err) != tt.code || bullpen.ErrorMessage(err) != tt.msg {
				t.Errorf("Complete() error = %q (%s), want %q (%s)", bullpen.ErrorMessage(err), bullpen.ErrorCode(err), tt.msg, tt.code)
			}
			if n.Load() != tt.requests {
				t.Errorf("requests = %d, want %d", n.Load(), tt.requests)
			}
		})
	}
}

// A stream that stops before a finish_reason, or sends a chunk that is
// not JSON, fails rather than passing off half an answer as whole.
func TestTruncatedStream(t *testing.T) {
	for name, body := range map[string]string{
		"no finish_reason":          chunk("half an ans"),
		"cut inside an event":       chunk("half") + `data: {"choices":[{"index":0,"delta":{"content":"an`,
		"not JSON":                  "data: <html>oops</html>\n\n",
		"JSON body instead of SSE":  `{"choices":[{"message":{"content":"x"}}]}`,
		"nothing at all":            "",
		"only keep-alive comments":  ": ping\n\n: ping\n\n",
		"[DONE] before any finish":  chunk("a") + "data: [DONE]\n\n",
		"usage without any choices": `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}` + "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := rawServer(t, 200, "text/event-stream", body)
			p := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1})
			resp, err := p.Complete(context.Background(), userReq("hi"), nil)
			if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
				t.Errorf("Complete() = %+v, %v; want EUNAVAILABLE", resp, err)
			}
		})
	}
}

// Non-2xx JSON error bodies in the shapes servers use reach the message
// with the status's code.
func TestErrorBodies(t *testing.T) {
	tests := []struct {
		status     int
		body, code string
		msg        string
	}{
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			bullpen.EUNAUTHORIZED, "openai: HTTP 401 Unauthorized: Incorrect API key provided"},
		{404, `{"error":"model 'llama9' not found, try pulling it first"}`,
			bullpen.EINVALID, "openai: HTTP 404 Not Found: model 'llama9' not found, try pulling it first"},
		{422, `{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`,
			bullpen.EINVALID, "openai: HTTP 422 Unprocessable Entity: [map[loc:[body messages] msg:field required]]"},
		{402, `{"error":{"message":"Insufficient credits","code":402}}`,
			bullpen.ERATELIMIT, "openai: HTTP 402 Payment Required: Insufficient credits"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv, n := rawServer(t, tt.status, "application/json", tt.body)
			_, err := rawProvider(srv, &testutil.Sleeps{}).Complete(context.Background(), userReq("hi"), nil)
			if bullpen.ErrorCode(err) != tt.code || bullpen.ErrorMessage(err) != tt.msg || n.Load() != 1 {
				t.Errorf("Complete() error = %q (%s) after %d requests, want %q (%s) after 1",
					bullpen.ErrorMessage(err), bullpen.ErrorCode(err), n.Load(), tt.msg, tt.code)
			}
		})
	}
}

// A base URL that is not http(s) is a clear EINVALID before any request.
func TestBadBaseURL(t *testing.T) {
	for _, base := range []string{"127.0.0.1:11434/v1", "ftp://host/v1", "http://%zz"} {
		p := openai.New(openai.Config{BaseURL: base, Model: "m"})
		if _, err := p.Complete(context.Background(), userReq("hi"), nil); bullpen.ErrorCode(err) != bullpen.EINVALID {
			t.Errorf("Complete() with base URL %q: error %v, want EINVALID", base, err)
		}
	}
}

// A server that streams a tool call's arguments as a JSON object instead
// of a string (some compatible servers do) still yields the call.
func TestToolArgumentsAsObject(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"run","arguments":{"cmd":"ls"}}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n"
	srv, _ := rawServer(t, 200, "text/event-stream", body)
	resp, err := rawProvider(srv, &testutil.Sleeps{}).Complete(context.Background(), userReq("hi"), nil)
	if err != nil || len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Arguments) != `{"cmd":"ls"}` || resp.StopReason != llm.StopToolUse {
		t.Errorf("Complete() = %+v, %v; want one call run {\"cmd\":\"ls\"}", resp, err)
	}
}
