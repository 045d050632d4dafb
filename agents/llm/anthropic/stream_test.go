package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/testutil"
)

// rawServer answers every request with status and body as written: SSE
// the way servers really send it, odd corners included.
func rawServer(t *testing.T, status int, contentType, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func rawProvider(srv *httptest.Server) *anthropic.Provider {
	return anthropic.New(anthropic.Config{BaseURL: srv.URL, Model: "claude-test",
		Sleep: (&testutil.Sleeps{}).Sleep, Rand: func() float64 { return 0 }})
}

func ev(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

var (
	start = ev("message_start", `{"type":"message_start","message":{"id":"msg_1","model":"claude-x","content":[],`+
		`"usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":1}}}`)
	textBlock = ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi "}}`)
	stop = ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
)

// Pings, comments, CRLF endings, a thinking block and an event name
// without a type in its data all decode; message_delta's usage replaces
// only the counts it sends.
func TestStreamTolerance(t *testing.T) {
	body := ": keep-alive\n\n" + start + ev("ping", `{"type": "ping"}`) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		strings.ReplaceAll(ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`), "\n", "\r\n") +
		"event: content_block_delta\ndata: {\"index\":1,\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"there\"}}\n\n" +
		ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"run","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":"}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"ls\"}"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":2}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
	srv, _ := rawServer(t, 200, "text/event-stream", body)
	var d testutil.Deltas
	resp, err := rawProvider(srv).Complete(context.Background(), userReq("hi"), d.Add)
	if err != nil {
		t.Fatalf("Complete() error = %v", err)
	}
	want := llm.Response{Text: "there", Model: "claude-x", StopReason: llm.StopToolUse,
		ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "run", Arguments: json.RawMessage(`{"cmd":"ls"}`)}},
		Usage:     llm.Usage{InputTokens: 130, CachedInputTokens: 100, CacheWriteTokens: 20, OutputTokens: 30}}
	if !reflect.DeepEqual(resp, want) || strings.Join(d.All(), "|") != "there" {
		t.Errorf("Complete() = %+v, deltas %q\nwant %+v", resp, d.All(), want)
	}
}

// An error event mid-stream is an error of the code its type stands for:
// overloaded before any text is retried like a 529, after text it is not,
// and an invalid request is not retried at all.
func TestErrorEvent(t *testing.T) {
	overloaded := ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	tests := []struct {
		name, body, code, msg string
		requests              int32
	}{
		{"overloaded before text", start + ev("ping", `{"type":"ping"}`) + overloaded, bullpen.EUNAVAILABLE,
			"anthropic: error event in the stream: overloaded_error: Overloaded (gave up after 4 attempts)", 4},
		{"overloaded after text", start + textBlock + overloaded, bullpen.EUNAVAILABLE,
			"anthropic: error event in the stream: overloaded_error: Overloaded", 1},
		{"invalid request", start + ev("error", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`),
			bullpen.EINVALID, "anthropic: error event in the stream: invalid_request_error: prompt is too long", 1},
		{"rate limit", ev("error", `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`),
			bullpen.ERATELIMIT, "anthropic: error event in the stream: rate_limit_error: slow (gave up after 4 attempts)", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := rawServer(t, 200, "text/event-stream", tt.body)
			var d testutil.Deltas
			_, err := rawProvider(srv).Complete(context.Background(), userReq("hi"), d.Add)
			if bullpen.ErrorCode(err) != tt.code || bullpen.ErrorMessage(err) != tt.msg {
				t.Errorf("Complete() error = %q (%s), want %q (%s)", bullpen.ErrorMessage(err), bullpen.ErrorCode(err), tt.msg, tt.code)
			}
			if n.Load() != tt.requests {
				t.Errorf("requests = %d, want %d", n.Load(), tt.requests)
			}
		})
	}
}

// A stream that ends before message_stop, or breaks the protocol, fails
// rather than passing off half an answer as whole.
func TestTruncatedStream(t *testing.T) {
	for name, body := range map[string]string{
		"no message_stop":           start + textBlock,
		"cut inside an event":       start + textBlock + "event: message_delta\ndata: {\"type\":\"message_del",
		"message_stop unterminated": start + textBlock + stop[:len(stop)-1],
		"not JSON":                  start + "event: content_block_delta\ndata: <html>\n\n",
		"JSON body instead of SSE":  `{"type":"message","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn"}`,
		"nothing":                   "",
		"delta for a missing block": start +
			ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`) + stop,
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := rawServer(t, 200, "text/event-stream", body)
			p := anthropic.New(anthropic.Config{BaseURL: srv.URL, Model: "m", MaxRetries: -1})
			resp, err := p.Complete(context.Background(), userReq("hi"), nil)
			if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
				t.Errorf("Complete() = %+v, %v; want EUNAVAILABLE", resp, err)
			}
		})
	}
	// The same stream with its stop is whole: the cases above fail for
	// what they lack.
	srv, _ := rawServer(t, 200, "text/event-stream", start+textBlock+stop)
	if resp, err := rawProvider(srv).Complete(context.Background(), userReq("hi"), nil); err != nil || resp.Text != "Hi " {
		t.Errorf("whole stream: Complete() = %+v, %v", resp, err)
	}
}

// Non-2xx error bodies reach the message with the status's code.
func TestErrorBodies(t *testing.T) {
	tests := []struct {
		status     int
		body, code string
		msg        string
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			bullpen.EUNAVAILABLE, "anthropic: HTTP 529: Overloaded (gave up after 4 attempts)"},
		{413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}`,
			bullpen.EINVALID, "anthropic: HTTP 413 Request Entity Too Large: Request exceeds the maximum size"},
		{403, `{"type":"error","error":{"type":"permission_error","message":"no access to model"}}`,
			bullpen.EUNAUTHORIZED, "anthropic: HTTP 403 Forbidden: no access to model"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv, _ := rawServer(t, tt.status, "application/json", tt.body)
			_, err := rawProvider(srv).Complete(context.Background(), userReq("hi"), nil)
			if bullpen.ErrorCode(err) != tt.code || bullpen.ErrorMessage(err) != tt.msg {
				t.Errorf("Complete() error = %q (%s), want %q (%s)", bullpen.ErrorMessage(err), bullpen.ErrorCode(err), tt.msg, tt.code)
			}
		})
	}
}

// An OAuth setup (settings passes the token as headers and no API key)
// sends the headers as given and no empty x-api-key beside them.
func TestHeadersWithoutAPIKey(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, start+textBlock+stop)
	}))
	defer srv.Close()
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, Model: "m",
		Headers: map[string]string{"Authorization": "Bearer sk-ant-oat-1", "anthropic-beta": "oauth-2025-04-20"}})
	if _, err := p.Complete(context.Background(), userReq("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if got.Get("Authorization") != "Bearer sk-ant-oat-1" || got.Get("Anthropic-Beta") != "oauth-2025-04-20" ||
		got.Get("Anthropic-Version") != anthropic.Version || got.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", got)
	}
	if _, ok := got["X-Api-Key"]; ok {
		t.Errorf("x-api-key sent without an API key: %v", got)
	}
}
