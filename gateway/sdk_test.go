package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	openai "github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// countingRig wraps a rig's gateway to count the requests it gets, so a
// test sees whether an SDK retried.
func countingRig(t *testing.T, up Upstream) (*rig, *atomic.Int32) {
	t.Helper()
	r := newRig(t, up, nil)
	var hits atomic.Int32
	inner := r.srv.Config.Handler
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		inner.ServeHTTP(w, req)
	}))
	t.Cleanup(outer.Close)
	r.srv = outer
	return r, &hits
}

// TestAnthropicSDK drives the gateway with the real Anthropic Go SDK, as
// Claude Code would be driven: base URL .../anthropic, the turn token as
// its API key, a streamed answer with a tool call; then over budget.
func TestAnthropicSDK(t *testing.T) {
	f := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "Hello through the gateway.", Usage: &anthropicUsage,
			ToolCalls: []llm.ToolCall{{Name: "post_message", Arguments: []byte(`{"body":"hi"}`)}}}
	})
	t.Cleanup(f.Close)
	r, hits := countingRig(t, Upstream{Kind: KindAnthropic, BaseURL: f.BaseURL(), APIKey: realKey, Name: "anthropic"})
	client := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(r.srv.URL+"/anthropic"), aoption.WithAPIKey(turnToken))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	stream := client.Messages.NewStreaming(context.Background(), params)
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 2 || msg.Content[0].Text != "Hello through the gateway." || msg.Content[1].Name != "post_message" {
		t.Errorf("accumulated message = %+v", msg.Content)
	}
	if got := f.Requests()[0].Header.Get("X-Api-Key"); got != realKey {
		t.Errorf("upstream key = %q", got)
	}
	if u := r.turns.usageSoon(anthropicUsage); u != anthropicUsage {
		t.Errorf("turn usage = %+v, want %+v", u, anthropicUsage)
	}
	r.turns.stop = Budget{Limit: "daily_tokens", Detail: "@engineer has used its daily token budget"}
	hits.Store(0)
	_, err := client.Messages.New(context.Background(), params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || hits.Load() != 1 {
		t.Errorf("over budget: err %v, %d gateway requests (want one 429, no retry)", err, hits.Load())
	}
}

// TestOpenAISDK drives Chat Completions (streamed, with usage) and
// Responses through the gateway with the real openai-go SDK, as Codex
// would be driven: base URL .../openai/v1, the turn token as its key.
func TestOpenAISDK(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "Hello through the gateway.", Usage: &chatUsage}
	})
	t.Cleanup(f.Close)
	r, hits := countingRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "openai"})
	client := openai.NewClient(ooption.WithBaseURL(r.srv.URL+"/openai/v1"), ooption.WithAPIKey(turnToken))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-test",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "Hello through the gateway." || acc.Usage.PromptTokens != int64(chatUsage.InputTokens) {
		t.Errorf("accumulated = %+v usage %+v", acc.Choices, acc.Usage)
	}
	if u := r.turns.usageSoon(chatUsage); u != chatUsage {
		t.Errorf("turn usage = %+v, want %+v", u, chatUsage)
	}
	r.turns.stop = Budget{Limit: "turn_tokens", Detail: "@engineer stopped"}
	hits.Store(0)
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Type != "insufficient_quota" || hits.Load() != 1 {
		t.Errorf("over budget: err %v, %d gateway requests (want one 429, no retry)", err, hits.Load())
	}
}

func TestOpenAISDKResponses(t *testing.T) {
	up := Upstream{Kind: KindOpenAI, BaseURL: newFakeResponses(t).URL + "/v1", APIKey: realKey, Name: "openai"}
	r := newRig(t, up, nil)
	client := openai.NewClient(ooption.WithBaseURL(r.srv.URL+"/openai/v1"), ooption.WithAPIKey(turnToken))
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	var done responses.Response
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "response.completed" {
			done = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if done.OutputText() != "Hello from Responses" || done.Usage.InputTokens != respInput {
		t.Errorf("completed response %q usage %+v", done.OutputText(), done.Usage)
	}
	want := llm.Usage{InputTokens: respInput, CachedInputTokens: respCached, OutputTokens: respOutput}
	if u := r.turns.usageSoon(want); u != want {
		t.Errorf("turn usage = %+v, want %+v", u, want)
	}
}
