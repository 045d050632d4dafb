package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// TestRecordTruncated: bodies over the record cap are cut at the cap (on a
// character boundary) and marked, with their whole sizes; the client still
// gets everything.
func TestRecordTruncated(t *testing.T) {
	long := strings.Repeat("é", 3000) // two bytes each: a cut may fall mid-character
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply { return llmtest.Reply{Text: long, ChunkSize: 500} })
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey}, func(c *Config) { c.RecordCap = 1001 })
	body := `{"model":"m","max_tokens":9000,"stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`
	status, _, got := r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, body)
	if status != 200 || !strings.Contains(string(got), "message_stop") {
		t.Fatalf("status %d, stream incomplete", status)
	}
	c := r.rec.all()[0]
	for _, part := range []struct {
		name  string
		rec   string
		size  int
		cut   bool
		whole int
	}{{"request", c.Request, c.RequestBytes, c.RequestTruncated, len(body)}, {"response", c.Response, c.ResponseBytes, c.ResponseTruncated, len(got)}} {
		if !part.cut || part.size != part.whole || len(part.rec) > 1001 || len(part.rec) < 999 || !utf8.ValidString(part.rec) {
			t.Errorf("%s record: %d bytes kept (valid UTF-8 %v), size %d of %d, cut %v", part.name, len(part.rec),
				utf8.ValidString(part.rec), part.size, part.whole, part.cut)
		}
	}
	if c.Provider != KindAnthropic || c.OutputTokens == 0 {
		t.Errorf("record provider %q output tokens %d", c.Provider, c.OutputTokens)
	}
}

// TestOAuthUpstream: a subscription token goes upstream as a Bearer with
// the oauth beta flag added to the client's flags, and no x-api-key.
func TestOAuthUpstream(t *testing.T) {
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply { return llmtest.Reply{Text: "hi"} })
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey, OAuthToken: realOAuth}, nil)
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/anthropic/v1/messages?beta=true",
		strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+turnToken)
	req.Header.Set("Anthropic-Beta", "claude-code-20250219,fine-grained-tool-streaming-2025-05-14")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := f.Requests()
	if resp.StatusCode != 200 || len(got) != 1 {
		t.Fatalf("status %d, %d upstream requests", resp.StatusCode, len(got))
	}
	h := got[0].Header
	if h.Get("Authorization") != "Bearer "+realOAuth || h.Get("X-Api-Key") != "" {
		t.Errorf("upstream auth = %q, x-api-key %q", h.Get("Authorization"), h.Get("X-Api-Key"))
	}
	if beta := h.Get("Anthropic-Beta"); beta != "claude-code-20250219,fine-grained-tool-streaming-2025-05-14,"+OAuthBeta {
		t.Errorf("upstream anthropic-beta = %q", beta)
	}
}

// TestProviderErrorRedacted: a provider error that quotes the real key
// reaches the client with its status and shape, the key blanked.
func TestProviderErrorRedacted(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Status: 401, Message: "Incorrect API key provided: " + realKey + "."}
	})
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey}, nil)
	status, hdr, body := r.post(t, "/openai/v1/chat/completions", "bearer", turnToken, `{"model":"m","messages":[]}`)
	_, msg := errorShape(t, KindOpenAI, body)
	if status != 401 || !strings.Contains(msg, "[redacted]") {
		t.Errorf("provider 401 relayed as %d %q", status, msg)
	}
	checkCredentials(t, r.tap.headers[0], KindOpenAI, hdr, body)
	if c := r.rec.all(); len(c) != 1 || strings.Contains(c[0].Response, realKey) || c[0].Status != 401 {
		t.Errorf("record = %+v", c)
	}
}

// TestChatWithoutIncludeUsage: a Chat stream whose client did not ask for
// usage is forwarded without stream_options (only the output bound the
// budget needs is set), and the turn is charged an estimate.
func TestChatWithoutIncludeUsage(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "a reply of several tokens to be estimated"}
	})
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey}, nil)
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"count me please"}]}`
	if status, _, got := r.post(t, "/openai/v1/chat/completions", "bearer", turnToken, body); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	sent := `{"max_tokens":16384,` + body[1:] // the budget's bound, set as the request has none
	if raw := string(f.Requests()[0].Raw); raw != sent {
		t.Errorf("upstream body = %s, want the client's with max_tokens set: %s", raw, sent)
	}
	u, _, _ := r.turns.snapshot()
	want := llm.Usage{InputTokens: llm.Count(sent), OutputTokens: llm.Count("a reply of several tokens to be estimated")}
	if u != want {
		t.Errorf("estimated usage = %+v, want %+v", u, want)
	}
}

// TestClientGoneCancelsUpstream: when the CLI disconnects mid-stream the
// upstream request is cancelled, and the call is charged its reservation.
func TestClientGoneCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":70,\"output_tokens\":1}}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never finishes on its own
		close(cancelled)
	}))
	t.Cleanup(up.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: up.URL, APIKey: realKey}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.srv.URL+"/anthropic/v1/messages",
		strings.NewReader(`{"model":"m","max_tokens":5,"stream":true,"messages":[]}`))
	req.Header.Set("X-Api-Key", turnToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	<-cancelled   // the test hangs here (and times out) if the upstream call lives on
	r.srv.Close() // waits for the handler, so its record is done
	// The stream never finished: its whole reservation is charged, not
	// the 70 input and 1 output token of message_start.
	in := llm.Count(`{"model":"m","max_tokens":5,"stream":true,"messages":[]}`)
	if u, _, _ := r.turns.snapshot(); u.InputTokens != in || u.OutputTokens != 5 {
		t.Errorf("usage after disconnect = %+v, want the reservation: %d in, 5 out", u, in)
	}
}

// TestIdleTimeout: an upstream that goes silent mid-stream is cut off at
// the idle timeout and the record says why.
func TestIdleTimeout(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(up.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: up.URL, APIKey: realKey},
		func(c *Config) { c.Timeouts = llm.Timeouts{Idle: 100 * time.Millisecond} })
	status, _, body := r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, `{"model":"m","max_tokens":5,"stream":true,"messages":[]}`)
	if status != 200 || !strings.Contains(string(body), "ping") {
		t.Errorf("status %d body %q", status, body)
	}
	if c := r.rec.all(); len(c) != 1 || !strings.Contains(c[0].Error, "idle timeout") {
		t.Errorf("record = %+v, want an idle timeout", c)
	}
}

// TestFirstByteTimeout: a provider that accepts and never answers is given
// up at the first-byte timeout, with a 503 saying so.
func TestFirstByteTimeout(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only after the body
		<-r.Context().Done()
	}))
	t.Cleanup(up.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: up.URL, APIKey: realKey},
		func(c *Config) { c.Timeouts = llm.Timeouts{FirstByte: 100 * time.Millisecond} })
	status, _, body := r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, `{"model":"m","max_tokens":5,"messages":[]}`)
	if _, msg := errorShape(t, KindAnthropic, body); status != 503 || !strings.Contains(msg, "first-byte timeout") {
		t.Errorf("hung provider = %d %q", status, msg)
	}
}
