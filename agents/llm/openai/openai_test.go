package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/testutil"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
)

var tools = []llm.Tool{
	{Name: "post_message", Description: "Post to a channel.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"channel":{"type":"string"}},"required":["channel","text"]}`)},
	{Name: "wiki_search", Description: "Search the wiki.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
}

const system = "You are @dev, a careful Go engineer in the Bullpen office.\nRoster: @pm, @dev, @qa."

func newProvider(t *testing.T, f *llmtest.FakeOpenAI, sleeps *testutil.Sleeps, mod func(*openai.Config)) *openai.Provider {
	t.Helper()
	cfg := openai.Config{BaseURL: f.BaseURL(), APIKey: "sk-test", Model: "gpt-test",
		Timeout: 5 * time.Second, BaseDelay: 100 * time.Millisecond, Rand: func() float64 { return 0 }}
	if sleeps != nil {
		cfg.Sleep = sleeps.Sleep
	}
	if mod != nil {
		mod(&cfg)
	}
	return openai.New(cfg)
}

func userReq(text string) llm.Request {
	return llm.Request{System: system, Tools: tools, MaxTokens: 500,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestStreamingText(t *testing.T) {
	const text = "Hello there, this answer arrives in pieces."
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: text, ChunkSize: 5}
	})
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	if got := p.Name(); got != "openai" {
		t.Errorf("Name() = %q, want openai", got)
	}
	temp := 0.2
	req := userReq("hi")
	req.Temperature = &temp
	var d testutil.Deltas
	resp, err := p.Complete(context.Background(), req, d.Add)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := []string{"Hello", " ther", "e, th", "is an", "swer ", "arriv", "es in", " piec", "es."}
	if got := d.All(); !reflect.DeepEqual(got, want) {
		t.Errorf("deltas = %q, want %q", got, want)
	}
	if resp.Text != text || resp.StopReason != llm.StopEnd || resp.Model != "gpt-test" {
		t.Errorf("resp = %+v, want text %q, stop end, model gpt-test", resp, text)
	}
	if resp.Usage.OutputTokens != llm.Count(text) || resp.Usage.InputTokens < llm.Count(system) {
		t.Errorf("usage = %+v, want output %d and input ≥ %d", resp.Usage, llm.Count(text), llm.Count(system))
	}

	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	c := reqs[0]
	if !c.Stream || !c.IncludeUsage {
		t.Errorf("stream = %v, include_usage = %v, want both true", c.Stream, c.IncludeUsage)
	}
	if c.System != system || c.Model != "gpt-test" || c.MaxTokens != 500 || c.Temperature == nil || *c.Temperature != 0.2 {
		t.Errorf("captured system/model/max/temp = %q %q %d %v", c.System, c.Model, c.MaxTokens, c.Temperature)
	}
	if _, ok := c.Body["max_tokens"]; !ok {
		t.Errorf("body has no max_tokens for a custom BaseURL: %s", c.Raw)
	}
	if got := c.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if len(c.Messages) != 1 || c.Messages[0].Role != "user" || c.Messages[0].Content != "hi" {
		t.Errorf("messages = %+v", c.Messages)
	}
	// The first message on the wire is the system prompt.
	msgs := c.Body["messages"].([]any)
	if first := msgs[0].(map[string]any); first["role"] != "system" || first["content"] != system {
		t.Errorf("first wire message = %v, want the system prompt", first)
	}
}

func TestToolsKeepOrderAndSchemaBytes(t *testing.T) {
	f := llmtest.NewFakeOpenAI(nil)
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	req := userReq("hi")
	// Not sorted on purpose: the provider must not reorder.
	req.Tools = []llm.Tool{tools[1], tools[0], {Name: "noargs", Description: "No arguments."}}
	for range 2 {
		if _, err := p.Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.Requests()
	var names []string
	for _, tool := range reqs[0].Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"wiki_search", "post_message", "noargs"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tool order = %v, want %v", names, want)
	}
	// Nested schema values are sent as given: "text" before "channel".
	if s := string(reqs[0].Tools[1].Parameters); !strings.Contains(s, `{"text":{"type":"string"},"channel":{"type":"string"}}`) {
		t.Errorf("post_message parameters = %s", s)
	}
	if !reflect.DeepEqual(toolsJSON(t, reqs[0].Raw), toolsJSON(t, reqs[1].Raw)) {
		t.Errorf("tools bytes differ between identical requests")
	}
}

func toolsJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v struct{ Tools json.RawMessage }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return string(v.Tools)
}

func TestToolCallRoundTrip(t *testing.T) {
	f := llmtest.NewFakeOpenAI(llmtest.Sequence(
		llmtest.Reply{Text: "Let me look.", ToolCalls: []llm.ToolCall{
			{Name: "wiki_search", Arguments: json.RawMessage(`{"query":"prompt cache breakpoints"}`)},
			{ID: "call_given", Name: "post_message", Arguments: json.RawMessage(`{"channel":"dev","text":"on it"}`)},
		}},
		llmtest.Reply{Text: "The wiki says two breakpoints."},
	))
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	req := userReq("How do we cache?")
	resp, err := p.Complete(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []llm.ToolCall{
		{ID: "call_fake1_0", Name: "wiki_search", Arguments: json.RawMessage(`{"query":"prompt cache breakpoints"}`)},
		{ID: "call_given", Name: "post_message", Arguments: json.RawMessage(`{"channel":"dev","text":"on it"}`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, wantCalls) || resp.StopReason != llm.StopToolUse || resp.Text != "Let me look." {
		t.Fatalf("resp = %+v, want calls %+v, stop tool_use", resp, wantCalls)
	}

	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_fake1_0", Content: "Two breakpoints: tools and system."},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_given", Content: "channel is archived", IsError: true},
	)
	resp, err = p.Complete(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "The wiki says two breakpoints." || resp.StopReason != llm.StopEnd || len(resp.ToolCalls) != 0 {
		t.Errorf("final resp = %+v", resp)
	}
	got := f.Requests()[1].Messages
	want := []llmtest.CapturedMessage{
		{Role: "user", Content: "How do we cache?"},
		{Role: "assistant", Content: "Let me look.", ToolCalls: wantCalls},
		{Role: "tool", ToolCallID: "call_fake1_0", Content: "Two breakpoints: tools and system."},
		{Role: "tool", ToolCallID: "call_given", Content: "Error: channel is archived"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("second request messages =\n%+v\nwant\n%+v", got, want)
	}
}

func TestUsage(t *testing.T) {
	f := llmtest.NewFakeOpenAI(nil)
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	first, err := p.Complete(context.Background(), userReq("first question"), nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.Complete(context.Background(), userReq("a different question"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.CachedInputTokens != 0 {
		t.Errorf("first call cached = %d, want 0", first.Usage.CachedInputTokens)
	}
	// The tools + system prefix repeats, the user message does not.
	if c := second.Usage.CachedInputTokens; c == 0 || c >= second.Usage.InputTokens {
		t.Errorf("second call usage = %+v, want 0 < cached < input", second.Usage)
	}

	want := llm.Usage{InputTokens: 1234, CachedInputTokens: 1024, CacheWriteTokens: 7, OutputTokens: 56}
	f.SetHandler(func(llmtest.CapturedRequest) llmtest.Reply { return llmtest.Reply{Text: "x", Usage: &want} })
	resp, err := p.Complete(context.Background(), userReq("q"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	f := llmtest.NewFakeOpenAI(llmtest.Sequence(
		llmtest.Reply{Status: 429, Message: "Rate limit reached for requests", RetryAfter: "2"},
		llmtest.Reply{Text: "ok after wait"},
	))
	defer f.Close()
	var sleeps testutil.Sleeps
	p := newProvider(t, f, &sleeps, nil)
	resp, err := p.Complete(context.Background(), userReq("hi"), nil)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Text != "ok after wait" {
		t.Errorf("text = %q", resp.Text)
	}
	if got := sleeps.All(); !reflect.DeepEqual(got, []time.Duration{2 * time.Second}) {
		t.Errorf("sleeps = %v, want [2s] from Retry-After", got)
	}
	if n := len(f.Requests()); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		maxRetries int
		code       string
		requests   int
		sleeps     []time.Duration
		inMessage  []string
	}{
		{"500 exhausts retries", 500, 2, bullpen.EUNAVAILABLE, 3,
			[]time.Duration{50 * time.Millisecond, 100 * time.Millisecond},
			[]string{"openai", "HTTP 500", "boom", "gave up after 3 attempts"}},
		{"429 exhausts retries", 429, 1, bullpen.ERATELIMIT, 2,
			[]time.Duration{50 * time.Millisecond}, []string{"openai", "HTTP 429", "boom"}},
		{"401 is not retried", 401, 3, bullpen.EUNAUTHORIZED, 1, nil, []string{"openai", "HTTP 401", "boom"}},
		{"403 is not retried", 403, 3, bullpen.EUNAUTHORIZED, 1, nil, []string{"HTTP 403"}},
		{"400 is invalid", 400, 3, bullpen.EINVALID, 1, nil, []string{"HTTP 400", "boom"}},
		{"no retries", 503, -1, bullpen.EUNAVAILABLE, 1, nil, []string{"HTTP 503"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
				return llmtest.Reply{Status: tt.status, Message: "boom"}
			})
			defer f.Close()
			var sleeps testutil.Sleeps
			p := newProvider(t, f, &sleeps, func(c *openai.Config) { c.MaxRetries = tt.maxRetries })
			_, err := p.Complete(context.Background(), userReq("hi"), nil)
			if got := bullpen.ErrorCode(err); got != tt.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.code)
			}
			msg := bullpen.ErrorMessage(err)
			for _, s := range tt.inMessage {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			if n := len(f.Requests()); n != tt.requests {
				t.Errorf("requests = %d, want %d", n, tt.requests)
			}
			if got := sleeps.All(); !reflect.DeepEqual(got, tt.sleeps) {
				t.Errorf("sleeps = %v, want %v", got, tt.sleeps)
			}
		})
	}
}

// A compatible server or proxy may answer with a body that is not OpenAI's
// error JSON; the status and text still reach the message.
func TestPlainTextError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream model server is down", http.StatusBadGateway)
	}))
	defer srv.Close()
	p := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1, Name: "ollama"})
	_, err := p.Complete(context.Background(), userReq("hi"), nil)
	if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
		t.Fatalf("err = %v, want EUNAVAILABLE", err)
	}
	if msg := bullpen.ErrorMessage(err); msg != "ollama: HTTP 502 Bad Gateway: upstream model server is down" {
		t.Errorf("message = %q", msg)
	}
}

func TestTimeout(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "late", Delay: 10 * time.Second}
	})
	defer f.Close()
	var sleeps testutil.Sleeps
	p := newProvider(t, f, &sleeps, func(c *openai.Config) { c.Timeout = 150 * time.Millisecond })
	start := time.Now()
	_, err := p.Complete(context.Background(), userReq("hi"), nil)
	if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want EUNAVAILABLE wrapping DeadlineExceeded", err)
	}
	if !strings.Contains(bullpen.ErrorMessage(err), "within 150ms") {
		t.Errorf("message = %q", bullpen.ErrorMessage(err))
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v, want about 150ms", el)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("requests = %d, want 1 (a timeout is not retried)", n)
	}
}

func TestCancelMidStream(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: strings.Repeat("word ", 50), ChunkDelay: 20 * time.Millisecond}
	})
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var deltas int
	_, err := p.Complete(ctx, userReq("hi"), func(string) {
		deltas++
		if deltas == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
		t.Fatalf("err = %v, want EUNAVAILABLE wrapping context.Canceled", err)
	}
	if deltas > 3 {
		t.Errorf("deltas after cancel: %d", deltas)
	}
}

// A stream that breaks after text was delivered is not retried, so the
// caller never sees the same text twice.
func TestBrokenStreamNotRetried(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "partial answer", CutOff: true}
	})
	defer f.Close()
	var sleeps testutil.Sleeps
	p := newProvider(t, f, &sleeps, nil)
	var d testutil.Deltas
	_, err := p.Complete(context.Background(), userReq("hi"), d.Add)
	if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
		t.Fatalf("err = %v, want EUNAVAILABLE", err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
	if got := d.All(); len(got) != 1 {
		t.Errorf("deltas = %q, want exactly the one before the cut", got)
	}
}

func TestNoModel(t *testing.T) {
	p := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1/v1"})
	_, err := p.Complete(context.Background(), userReq("hi"), nil)
	if bullpen.ErrorCode(err) != bullpen.EINVALID {
		t.Errorf("err = %v, want EINVALID", err)
	}
}
