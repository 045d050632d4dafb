package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

func post(t *testing.T, url, body string) (*http.Response, map[string]any) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return res, v
}

func TestOpenAIErrorFormat(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Status: 429, Message: "slow down", RetryAfter: "4"}
	})
	defer f.Close()
	res, v := post(t, f.BaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "4" {
		t.Errorf("status %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	e := v["error"].(map[string]any)
	if e["message"] != "slow down" || e["code"] != "rate_limit_exceeded" {
		t.Errorf("error body = %v", v)
	}
	res, _ = post(t, f.URL+"/v1/embeddings", `{}`)
	if res.StatusCode != 404 {
		t.Errorf("unknown path status = %d, want 404", res.StatusCode)
	}
}

func TestOpenAINonStreaming(t *testing.T) {
	f := llmtest.NewFakeOpenAI(llmtest.Sequence(llmtest.Reply{Text: "hi", ToolCalls: []llm.ToolCall{
		{Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}}))
	defer f.Close()
	_, v := post(t, f.BaseURL()+"/chat/completions", `{"model":"m","messages":[
		{"role":"developer","content":[{"type":"text","text":"be brief"}]},
		{"role":"user","content":"hi"}]}`)
	choice := v["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if v["object"] != "chat.completion" || msg["content"] != "hi" || choice["finish_reason"] != "tool_calls" {
		t.Errorf("response = %v", v)
	}
	if calls := msg["tool_calls"].([]any); len(calls) != 1 {
		t.Errorf("tool_calls = %v", calls)
	}
	if c := f.Requests()[0]; c.System != "be brief" || c.Stream || len(c.Messages) != 1 {
		t.Errorf("captured = %+v", c)
	}
}

func TestAnthropicErrorFormatAndCountTokens(t *testing.T) {
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Status: 529}
	})
	defer f.Close()
	res, v := post(t, f.URL+"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	e := v["error"].(map[string]any)
	if res.StatusCode != 529 || v["type"] != "error" || e["type"] != "overloaded_error" || e["message"] != "Overloaded" {
		t.Errorf("status %d, body %v", res.StatusCode, v)
	}
	_, v = post(t, f.URL+"/v1/messages/count_tokens", `{"model":"m","system":"hello world","messages":[{"role":"user","content":"hi"}]}`)
	if v["input_tokens"] != float64(llm.Count("hello world")+llm.Count("hi")+3) {
		t.Errorf("count_tokens = %v", v)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("requests = %d, want 1 (count_tokens is not recorded)", n)
	}
}

func TestAnthropicNonStreamingAndDecoding(t *testing.T) {
	f := llmtest.NewFakeAnthropic(llmtest.Text("done"))
	defer f.Close()
	_, v := post(t, f.URL+"/v1/messages", `{"model":"m","max_tokens":5,"system":"plain system",
		"messages":[{"role":"user","content":[{"type":"text","text":"run it","cache_control":{"type":"ephemeral"}}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"sh","input":{"cmd":"ls"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.go","is_error":false},{"type":"text","text":"and?"}]}]}`)
	content := v["content"].([]any)[0].(map[string]any)
	if v["type"] != "message" || content["text"] != "done" || v["stop_reason"] != "end_turn" {
		t.Errorf("response = %v", v)
	}
	c := f.Requests()[0]
	want := []llmtest.CapturedMessage{
		{Role: "user", Content: "run it", CacheControl: "ephemeral"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "t1", Name: "sh", Arguments: json.RawMessage(`{"cmd":"ls"}`)}}},
		{Role: "tool", ToolCallID: "t1", Content: "a.go"},
		{Role: "user", Content: "and?"},
	}
	if c.System != "plain system" || c.SystemCacheControl[0] != "" || !reflect.DeepEqual(c.Messages, want) {
		t.Errorf("captured system %q %v messages\n%+v\nwant\n%+v", c.System, c.SystemCacheControl, c.Messages, want)
	}
	// A cache_control on a message block is a breakpoint too.
	_, v = post(t, f.URL+"/v1/messages", `{"model":"m","max_tokens":5,"system":"plain system",
		"messages":[{"role":"user","content":[{"type":"text","text":"run it","cache_control":{"type":"ephemeral"}}]}]}`)
	if u := v["usage"].(map[string]any); u["cache_read_input_tokens"].(float64) == 0 {
		t.Errorf("usage = %v, want a cache read of the first message", u)
	}
}
