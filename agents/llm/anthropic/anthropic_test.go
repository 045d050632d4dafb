package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/testutil"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

var tools = []llm.Tool{
	{Name: "post_message", Description: "Post to a channel.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"channel":{"type":"string"}},"required":["channel","text"],"additionalProperties":false}`)},
	{Name: "run_command", Description: "Run a shell command in the sandbox.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`)},
	{Name: "wiki_search", Description: "Search the wiki.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
}

const system = "You are @dev, a careful Go engineer in the Bullpen office.\nRoster: @pm, @dev, @qa."

func newProvider(t *testing.T, f *llmtest.FakeAnthropic, sleeps *testutil.Sleeps, mod func(*anthropic.Config)) *anthropic.Provider {
	t.Helper()
	cfg := anthropic.Config{BaseURL: f.BaseURL(), APIKey: "sk-ant-test", Model: "claude-test",
		Timeout: 5 * time.Second, BaseDelay: 100 * time.Millisecond, Rand: func() float64 { return 0 }}
	if sleeps != nil {
		cfg.Sleep = sleeps.Sleep
	}
	if mod != nil {
		mod(&cfg)
	}
	return anthropic.New(cfg)
}

func userReq(text string) llm.Request {
	return llm.Request{System: system, Tools: tools,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestStreamingText(t *testing.T) {
	const text = "Hello there, this answer arrives in pieces."
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: text, ChunkSize: 5}
	})
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	if got := p.Name(); got != "anthropic" {
		t.Errorf("Name() = %q", got)
	}
	var d testutil.Deltas
	resp, err := p.Complete(context.Background(), userReq("hi"), d.Add)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := []string{"Hello", " ther", "e, th", "is an", "swer ", "arriv", "es in", " piec", "es."}
	if got := d.All(); !reflect.DeepEqual(got, want) {
		t.Errorf("deltas = %q, want %q", got, want)
	}
	if resp.Text != text || resp.StopReason != llm.StopEnd || resp.Model != "claude-test" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.Usage.OutputTokens != llm.Count(text) {
		t.Errorf("output tokens = %d, want %d", resp.Usage.OutputTokens, llm.Count(text))
	}
	c := f.Requests()[0]
	if !c.Stream || c.MaxTokens != anthropic.DefaultMaxTokens || c.Model != "claude-test" || c.System != system {
		t.Errorf("captured stream/max/model/system = %v %d %q %q", c.Stream, c.MaxTokens, c.Model, c.System)
	}
	if c.Header.Get("X-Api-Key") != "sk-ant-test" || c.Header.Get("Anthropic-Version") == "" {
		t.Errorf("headers x-api-key=%q anthropic-version=%q", c.Header.Get("X-Api-Key"), c.Header.Get("Anthropic-Version"))
	}
}

func TestCacheBreakpoints(t *testing.T) {
	f := llmtest.NewFakeAnthropic(nil)
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	first, err := p.Complete(context.Background(), userReq("first question"), nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.Complete(context.Background(), userReq("a different question entirely"), nil)
	if err != nil {
		t.Fatal(err)
	}

	reqs := f.Requests()
	for i, c := range reqs {
		if !reflect.DeepEqual(c.SystemCacheControl, []string{"ephemeral"}) {
			t.Errorf("request %d: system cache_control = %v, want [ephemeral]", i, c.SystemCacheControl)
		}
		var cc []string
		for _, tool := range c.Tools {
			cc = append(cc, tool.CacheControl)
		}
		if want := []string{"", "", "ephemeral"}; !reflect.DeepEqual(cc, want) {
			t.Errorf("request %d: tools cache_control = %q, want %q", i, cc, want)
		}
	}
	if a, b := prefixJSON(t, reqs[0].Raw), prefixJSON(t, reqs[1].Raw); a != b {
		t.Errorf("tools+system bytes differ:\n%s\n%s", a, b)
	}
	if s := prefixJSON(t, reqs[0].Raw); !strings.Contains(s, `{"text":{"type":"string"},"channel":{"type":"string"}}`) ||
		!strings.Contains(s, `"additionalProperties":false`) {
		t.Errorf("schema not sent as given: %s", s)
	}

	// The stable prefix is written on the first call and read on the second.
	if first.Usage.CachedInputTokens != 0 || first.Usage.CacheWriteTokens == 0 {
		t.Errorf("first usage = %+v, want a cache write and no read", first.Usage)
	}
	if second.Usage.CachedInputTokens != first.Usage.CacheWriteTokens || second.Usage.CacheWriteTokens != 0 {
		t.Errorf("second usage = %+v, want cached = %d (first write) and no write", second.Usage, first.Usage.CacheWriteTokens)
	}
	if second.Usage.InputTokens <= second.Usage.CachedInputTokens {
		t.Errorf("second usage = %+v, want input (total) > cached", second.Usage)
	}

	// A changed system prompt misses the cache.
	req := userReq("first question")
	req.System += " Today is Tuesday."
	third, err := p.Complete(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The tools breakpoint still hits; the system part is written anew.
	if third.Usage.CachedInputTokens == 0 || third.Usage.CachedInputTokens >= second.Usage.CachedInputTokens || third.Usage.CacheWriteTokens == 0 {
		t.Errorf("third usage = %+v, want a partial hit (tools only) and a write", third.Usage)
	}
}

func prefixJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v struct{ Tools, System json.RawMessage }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return string(v.Tools) + string(v.System)
}

func TestUsageMapping(t *testing.T) {
	want := llm.Usage{InputTokens: 5000, CachedInputTokens: 4000, CacheWriteTokens: 600, OutputTokens: 77}
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "x", Usage: &want}
	})
	defer f.Close()
	resp, err := newProvider(t, f, nil, nil).Complete(context.Background(), userReq("q"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	f := llmtest.NewFakeAnthropic(llmtest.Sequence(
		llmtest.Reply{Text: "Checking.", ToolCalls: []llm.ToolCall{
			{Name: "wiki_search", Arguments: json.RawMessage(`{"query":"prompt cache breakpoints"}`)},
			{Name: "run_command", Arguments: json.RawMessage(`{"cmd":"go test ./..."}`)},
		}},
		llmtest.Reply{Text: "All green."},
	))
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	req := userReq("Is it green?")
	var d testutil.Deltas
	resp, err := p.Complete(context.Background(), req, d.Add)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []llm.ToolCall{
		{ID: "toolu_fake1_0", Name: "wiki_search", Arguments: json.RawMessage(`{"query":"prompt cache breakpoints"}`)},
		{ID: "toolu_fake1_1", Name: "run_command", Arguments: json.RawMessage(`{"cmd":"go test ./..."}`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, wantCalls) || resp.StopReason != llm.StopToolUse || resp.Text != "Checking." {
		t.Fatalf("resp = %+v, want calls %s", resp, wantCalls)
	}
	if got := strings.Join(d.All(), ""); got != "Checking." {
		t.Errorf("deltas = %q, want only the text", got)
	}

	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_fake1_0", Content: "Two breakpoints."},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_fake1_1", Content: "exit status 1", IsError: true},
	)
	resp, err = p.Complete(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "All green." || resp.StopReason != llm.StopEnd {
		t.Errorf("final resp = %+v", resp)
	}
	c := f.Requests()[1]
	want := []llmtest.CapturedMessage{
		{Role: "user", Content: "Is it green?"},
		{Role: "assistant", Content: "Checking.", ToolCalls: wantCalls},
		{Role: "tool", ToolCallID: "toolu_fake1_0", Content: "Two breakpoints."},
		{Role: "tool", ToolCallID: "toolu_fake1_1", Content: "exit status 1", IsError: true},
	}
	if !reflect.DeepEqual(c.Messages, want) {
		t.Errorf("messages =\n%+v\nwant\n%+v", c.Messages, want)
	}
	// Both results travel in the one user turn after the tool calls.
	wire := c.Body["messages"].([]any)
	if len(wire) != 3 {
		t.Fatalf("wire messages = %d, want 3 (user, assistant, user)", len(wire))
	}
	last := wire[2].(map[string]any)
	if blocks := last["content"].([]any); last["role"] != "user" || len(blocks) != 2 ||
		blocks[0].(map[string]any)["type"] != "tool_result" {
		t.Errorf("last wire message = %v", last)
	}
}

func TestRetries(t *testing.T) {
	t.Run("429 with Retry-After then success", func(t *testing.T) {
		f := llmtest.NewFakeAnthropic(llmtest.Sequence(
			llmtest.Reply{Status: 429, Message: "Number of request tokens has exceeded your per-minute rate limit", RetryAfter: "3"},
			llmtest.Reply{Status: 529},
			llmtest.Reply{Text: "ok"},
		))
		defer f.Close()
		var sleeps testutil.Sleeps
		resp, err := newProvider(t, f, &sleeps, nil).Complete(context.Background(), userReq("hi"), nil)
		if err != nil || resp.Text != "ok" {
			t.Fatalf("Complete = %+v, %v", resp, err)
		}
		if got, want := sleeps.All(), []time.Duration{3 * time.Second, 100 * time.Millisecond}; !reflect.DeepEqual(got, want) {
			t.Errorf("sleeps = %v, want %v (Retry-After, then backoff)", got, want)
		}
		reqs := f.Requests()
		if len(reqs) != 3 {
			t.Fatalf("requests = %d, want 3", len(reqs))
		}
		if !reqs[1].Time.After(reqs[0].Time) {
			t.Errorf("request times not increasing: %v, %v", reqs[0].Time, reqs[1].Time)
		}
	})
	t.Run("500 exhausts retries", func(t *testing.T) {
		f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
			return llmtest.Reply{Status: 500, Message: "Internal server error"}
		})
		defer f.Close()
		var sleeps testutil.Sleeps
		_, err := newProvider(t, f, &sleeps, nil).Complete(context.Background(), userReq("hi"), nil)
		if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
			t.Fatalf("err = %v, want EUNAVAILABLE", err)
		}
		if msg := bullpen.ErrorMessage(err); msg != "anthropic: HTTP 500 Internal Server Error: Internal server error (gave up after 4 attempts)" {
			t.Errorf("message = %q", msg)
		}
		if n := len(f.Requests()); n != 4 {
			t.Errorf("requests = %d, want 4 (1 + default 3 retries)", n)
		}
		want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}
		if got := sleeps.All(); !reflect.DeepEqual(got, want) {
			t.Errorf("sleeps = %v, want %v", got, want)
		}
	})
	t.Run("401 not retried", func(t *testing.T) {
		f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
			return llmtest.Reply{Status: 401, Message: "invalid x-api-key"}
		})
		defer f.Close()
		var sleeps testutil.Sleeps
		_, err := newProvider(t, f, &sleeps, nil).Complete(context.Background(), userReq("hi"), nil)
		if bullpen.ErrorCode(err) != bullpen.EUNAUTHORIZED {
			t.Fatalf("err = %v, want EUNAUTHORIZED", err)
		}
		if msg := bullpen.ErrorMessage(err); msg != "anthropic: HTTP 401 Unauthorized: invalid x-api-key" {
			t.Errorf("message = %q", msg)
		}
		if n := len(f.Requests()); n != 1 || len(sleeps.All()) != 0 {
			t.Errorf("requests = %d, sleeps = %v, want 1 and none", n, sleeps.All())
		}
	})
	t.Run("400 invalid", func(t *testing.T) {
		f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
			return llmtest.Reply{Status: 400, Message: "messages: roles must alternate"}
		})
		defer f.Close()
		_, err := newProvider(t, f, nil, nil).Complete(context.Background(), userReq("hi"), nil)
		if bullpen.ErrorCode(err) != bullpen.EINVALID || !strings.Contains(bullpen.ErrorMessage(err), "roles must alternate") {
			t.Fatalf("err = %v, want EINVALID with the vendor message", err)
		}
	})
	t.Run("Retry-After too long gives up", func(t *testing.T) {
		f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
			return llmtest.Reply{Status: 429, RetryAfter: "3600"}
		})
		defer f.Close()
		var sleeps testutil.Sleeps
		_, err := newProvider(t, f, &sleeps, nil).Complete(context.Background(), userReq("hi"), nil)
		if bullpen.ErrorCode(err) != bullpen.ERATELIMIT || len(f.Requests()) != 1 || len(sleeps.All()) != 0 {
			t.Fatalf("err = %v, requests = %d, sleeps = %v; want ERATELIMIT at once", err, len(f.Requests()), sleeps.All())
		}
		if msg := bullpen.ErrorMessage(err); msg != "anthropic: HTTP 429 Too Many Requests: Too Many Requests (retry after 1h0m0s)" {
			t.Errorf("message = %q", msg)
		}
	})
}

func TestTimeoutAndCancel(t *testing.T) {
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: strings.Repeat("slow ", 40), ChunkDelay: 50 * time.Millisecond}
	})
	defer f.Close()

	// The timeout covers the whole stream, not just the headers.
	p := newProvider(t, f, nil, func(c *anthropic.Config) { c.Timeout = 500 * time.Millisecond })
	var d testutil.Deltas
	_, err := p.Complete(context.Background(), userReq("hi"), d.Add)
	if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want EUNAVAILABLE wrapping DeadlineExceeded", err)
	}
	if n := len(d.All()); n == 0 || n >= 40 {
		t.Errorf("deltas before timeout = %d, want some but not all", n)
	}

	p = newProvider(t, f, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = p.Complete(ctx, userReq("hi"), nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(bullpen.ErrorMessage(err), "canceled") {
		t.Fatalf("err = %v, want a canceled error wrapping the caller's deadline", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("cancel took %v", el)
	}
}

func TestBrokenStreamNotRetried(t *testing.T) {
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "partial answer", CutOff: true}
	})
	defer f.Close()
	var d testutil.Deltas
	_, err := newProvider(t, f, &testutil.Sleeps{}, nil).Complete(context.Background(), userReq("hi"), d.Add)
	if bullpen.ErrorCode(err) != bullpen.EUNAVAILABLE {
		t.Fatalf("err = %v, want EUNAVAILABLE", err)
	}
	if n := len(f.Requests()); n != 1 || len(d.All()) != 1 {
		t.Errorf("requests = %d, deltas = %q; want 1 and 1", n, d.All())
	}
}

func TestMessageMapping(t *testing.T) {
	f := llmtest.NewFakeAnthropic(nil)
	defer f.Close()
	p := newProvider(t, f, nil, nil)
	// No system, no tools: no cache_control anywhere, empty turns skipped,
	// a tool call without arguments gets {}.
	req := llm.Request{MaxTokens: 100, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "one"},
		{Role: llm.RoleUser, Content: ""},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "noargs"}}},
		{Role: llm.RoleTool, ToolCallID: "t1"},
		{Role: llm.RoleUser, Content: "two"},
	}}
	if _, err := p.Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	c := f.Requests()[0]
	if c.MaxTokens != 100 || c.SystemCacheControl != nil || len(c.Tools) != 0 {
		t.Errorf("captured = max %d, system cc %v, tools %d", c.MaxTokens, c.SystemCacheControl, len(c.Tools))
	}
	if _, ok := c.Body["system"]; ok {
		t.Errorf("body has a system field without a system prompt: %s", c.Raw)
	}
	want := []llmtest.CapturedMessage{
		{Role: "user", Content: "one"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "t1", Name: "noargs", Arguments: json.RawMessage("{}")}}},
		{Role: "tool", ToolCallID: "t1"},
		{Role: "user", Content: "two"},
	}
	if !reflect.DeepEqual(c.Messages, want) {
		t.Errorf("messages =\n%+v\nwant\n%+v", c.Messages, want)
	}

	_, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "system", Content: "x"}}}, nil)
	if bullpen.ErrorCode(err) != bullpen.EINVALID {
		t.Errorf("unknown role: err = %v, want EINVALID", err)
	}
}
