package gateway

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// apiCase is one API and mode driven through the gateway.
type apiCase struct {
	name      string
	kind      string
	path      string
	cred      string // how the client sends its token
	body      string
	stream    bool
	wantUsage llm.Usage
}

var anthropicUsage = llm.Usage{InputTokens: 1500, CachedInputTokens: 1200, CacheWriteTokens: 100, OutputTokens: 42}
var chatUsage = llm.Usage{InputTokens: 800, CachedInputTokens: 640, OutputTokens: 17}

func apiCases() []apiCase {
	msgs := `"messages":[{"role":"user","content":"say hello"}]`
	return []apiCase{
		{"anthropic stream", KindAnthropic, "/anthropic/v1/messages?beta=true", "x-api-key",
			`{"model":"claude-test","max_tokens":100,"stream":true,` + msgs + `}`, true, anthropicUsage},
		{"anthropic json", KindAnthropic, "/anthropic/v1/messages", "bearer",
			`{"model":"claude-test","max_tokens":100,` + msgs + `}`, false, anthropicUsage},
		{"chat stream", KindOpenAI, "/openai/v1/chat/completions", "bearer",
			`{"model":"gpt-test","max_tokens":100,"stream":true,"stream_options":{"include_usage":true},` + msgs + `}`, true, chatUsage},
		{"chat json", KindOpenAI, "/openai/v1/chat/completions", "bearer",
			`{"model":"gpt-test","max_completion_tokens":100,` + msgs + `}`, false, chatUsage},
		{"responses stream", KindOpenAI, "/openai/v1/responses", "bearer",
			`{"model":"gpt-test","stream":true,"max_output_tokens":100,"input":"say hello"}`, true, llm.Usage{InputTokens: respInput, CachedInputTokens: respCached, OutputTokens: respOutput}},
		{"responses json", KindOpenAI, "/openai/v1/responses", "bearer",
			`{"model":"gpt-test","max_output_tokens":100,"input":"say hello"}`, false, llm.Usage{InputTokens: respInput, CachedInputTokens: respCached, OutputTokens: respOutput}},
	}
}

// upstreamFor starts the fake upstream a case talks to.
func upstreamFor(t *testing.T, tc apiCase) Upstream {
	t.Helper()
	reply := func(u llm.Usage) llmtest.Handler {
		return func(llmtest.CapturedRequest) llmtest.Reply {
			return llmtest.Reply{Text: "Hello from the fake upstream, streamed in small pieces.", Usage: &u, ChunkSize: 5,
				ToolCalls: []llm.ToolCall{{Name: "post_message", Arguments: []byte(`{"body":"hi"}`)}}}
		}
	}
	switch {
	case tc.kind == KindAnthropic:
		f := llmtest.NewFakeAnthropic(reply(tc.wantUsage))
		t.Cleanup(f.Close)
		return Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey, Name: "anthropic"}
	case strings.Contains(tc.path, "/responses"):
		return Upstream{Kind: KindOpenAI, BaseURL: newFakeResponses(t).URL + "/v1", APIKey: realKey, Name: "openai"}
	}
	f := llmtest.NewFakeOpenAI(reply(tc.wantUsage))
	t.Cleanup(f.Close)
	return Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "openai"}
}

// TestPassThrough drives every API, streamed and whole, through the
// gateway: the client gets exactly the upstream's bytes, the upstream sees
// the real key and never the turn token, the client never sees the key,
// and the turn gets the answer's usage and a record of the call.
func TestPassThrough(t *testing.T) {
	for _, tc := range apiCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, upstreamFor(t, tc), nil)
			status, hdr, got := r.post(t, tc.path, tc.cred, turnToken, tc.body)
			if status != http.StatusOK {
				t.Fatalf("status = %d, body %s", status, got)
			}
			if r.tap.count() != 1 {
				t.Fatalf("upstream requests = %d, want 1", r.tap.count())
			}
			sent := r.tap.body(0)
			if !bytes.Equal(got, sent) {
				t.Errorf("client got %d bytes that differ from the %d the upstream sent:\n%s\n---\n%s", len(got), len(sent), got, sent)
			}
			if tc.stream && (!strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") || bytes.Count(got, []byte("data:")) < 4) {
				t.Errorf("not relayed as a stream: %s, %d events", hdr.Get("Content-Type"), bytes.Count(got, []byte("data:")))
			}
			checkCredentials(t, r.tap.headers[0], tc.kind, hdr, got)
			r.turns.usageSoon(tc.wantUsage)
			u, adds, _ := r.turns.snapshot()
			if u != tc.wantUsage || adds != 1 {
				t.Errorf("turn usage = %+v in %d adds, want %+v in 1", u, adds, tc.wantUsage)
			}
			checkRecord(t, r.rec, tc, got)
		})
	}
}

// checkCredentials asserts the upstream got the real key only and the
// client saw no trace of it.
func checkCredentials(t *testing.T, up http.Header, kind string, clientHdr http.Header, clientBody []byte) {
	t.Helper()
	for k, vs := range up {
		if strings.Contains(strings.Join(vs, " "), turnToken) {
			t.Errorf("upstream header %s carries the turn token", k)
		}
	}
	if kind == KindAnthropic && up.Get("X-Api-Key") != realKey {
		t.Errorf("upstream x-api-key = %q, want the real key", up.Get("X-Api-Key"))
	}
	if kind == KindOpenAI && up.Get("Authorization") != "Bearer "+realKey {
		t.Errorf("upstream Authorization = %q, want the real key", up.Get("Authorization"))
	}
	if bytes.Contains(clientBody, []byte(realKey)) {
		t.Error("the client's body carries the real key")
	}
	for k, vs := range clientHdr {
		if strings.Contains(strings.Join(vs, " "), realKey) {
			t.Errorf("client header %s carries the real key", k)
		}
	}
}

func checkRecord(t *testing.T, rec *memRecorder, tc apiCase, got []byte) {
	t.Helper()
	calls := rec.all()
	if len(calls) != 1 {
		t.Fatalf("recorded %d model calls, want 1", len(calls))
	}
	c := calls[0]
	if c.TurnID != 42 || c.AgentID != 3 || c.Via != "gateway" || c.Status != 200 || c.Method != "POST" {
		t.Errorf("record = turn %d agent %d via %q status %d %s", c.TurnID, c.AgentID, c.Via, c.Status, c.Method)
	}
	if c.Request != tc.body || c.RequestBytes != len(tc.body) || c.RequestTruncated {
		t.Errorf("recorded request = %q (%d bytes, cut %v), want the body sent", c.Request, c.RequestBytes, c.RequestTruncated)
	}
	if c.Response != string(got) || c.ResponseBytes != len(got) || c.ResponseTruncated {
		t.Errorf("recorded response differs from the %d bytes the client got (%d, cut %v)", len(got), c.ResponseBytes, c.ResponseTruncated)
	}
	u := llm.Usage{InputTokens: c.InputTokens, CachedInputTokens: c.CachedInputTokens, CacheWriteTokens: c.CacheWriteTokens, OutputTokens: c.OutputTokens}
	if u != tc.wantUsage {
		t.Errorf("recorded usage = %+v, want %+v", u, tc.wantUsage)
	}
	if strings.Contains(c.URL, "?") || !strings.HasPrefix(c.URL, "http://127.0.0.1") || c.Model == "" {
		t.Errorf("recorded URL %q model %q", c.URL, c.Model)
	}
}
