package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openai "github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// Usages the fake Chat provider reports, per answer.
var (
	toolTurnUsage = llm.Usage{InputTokens: 310, CachedInputTokens: 128, OutputTokens: 37}
	textTurnUsage = llm.Usage{InputTokens: 420, CachedInputTokens: 256, OutputTokens: 11}
)

// chatOnlyToolFake is a Chat-Completions-only provider that first calls
// both tools (a function and a custom one), then, once it has their
// results, answers in text.
func chatOnlyToolFake(t *testing.T) *llmtest.FakeOpenAI {
	t.Helper()
	f := llmtest.NewFakeOpenAI(func(c llmtest.CapturedRequest) llmtest.Reply {
		for _, m := range c.Messages {
			if m.Role == "tool" {
				return llmtest.Reply{Text: "It is sunny in Paris.", Usage: &textTurnUsage}
			}
		}
		return llmtest.Reply{Text: "Let me check.", Usage: &toolTurnUsage, ToolCalls: []llm.ToolCall{
			{ID: "call_w", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)},
			{ID: "call_p", Name: "apply_patch", Arguments: []byte(`{"input":"*** Begin Patch\n+sunny\n*** End Patch"}`)}}}
	})
	t.Cleanup(f.Close)
	return f
}

func weatherTools() []responses.ToolUnionParam {
	return []responses.ToolUnionParam{
		{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Description: openai.String("The weather in a city."),
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}},
		{OfCustom: &responses.CustomToolParam{Name: "apply_patch", Description: openai.String("Apply a patch.")}},
	}
}

// TestResponsesViaChatSDK drives /responses with the openai-go SDK's
// Responses client in front of a provider that serves only Chat
// Completions: the gateway finds that out (the provider's 404 on
// /responses), translates the request, and streams back the Responses
// events of a function call and a custom tool call with the provider's
// usage, exact. The client then continues with previous_response_id and
// the tools' outputs, not streamed, and the provider sees the whole
// conversation.
func TestResponsesViaChatSDK(t *testing.T) {
	f := chatOnlyToolFake(t)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "local"}, nil)
	r.turns.grant = 300
	client := openai.NewClient(ooption.WithBaseURL(r.srv.URL+"/openai/v1"), ooption.WithAPIKey(turnToken))
	ctx := context.Background()

	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-local",
		Instructions: openai.String("You are terse."), Tools: weatherTools(),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")}})
	var types []string
	var done responses.Response
	var argDeltas, customDeltas strings.Builder
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.completed":
			done = ev.Response
		case "response.function_call_arguments.delta":
			argDeltas.WriteString(ev.Delta)
		case "response.custom_tool_call_input.delta":
			customDeltas.WriteString(ev.Delta)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.custom_tool_call_input.done", "response.output_item.done", "response.completed"} {
		if !contains(types, want) {
			t.Errorf("no %s event in %q", want, types)
		}
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Errorf("events start with %s and end with %s", types[0], types[len(types)-1])
	}
	if argDeltas.String() != `{"city":"Paris"}` || customDeltas.String() != "*** Begin Patch\n+sunny\n*** End Patch" {
		t.Errorf("argument deltas %q, custom input deltas %q", argDeltas.String(), customDeltas.String())
	}
	if len(done.Output) != 3 || done.Output[0].Type != "message" || done.Output[1].Type != "function_call" || done.Output[2].Type != "custom_tool_call" {
		t.Fatalf("completed output = %+v", done.Output)
	}
	if fc := done.Output[1]; fc.CallID != "call_w" || fc.Name != "get_weather" || fc.Arguments.OfString != `{"city":"Paris"}` {
		t.Errorf("function call = %+v", fc)
	}
	if ct := done.Output[2]; ct.CallID != "call_p" || ct.Input != "*** Begin Patch\n+sunny\n*** End Patch" {
		t.Errorf("custom tool call = %+v", ct)
	}
	if u := done.Usage; u.InputTokens != int64(toolTurnUsage.InputTokens) || u.InputTokensDetails.CachedTokens != int64(toolTurnUsage.CachedInputTokens) ||
		u.OutputTokens != int64(toolTurnUsage.OutputTokens) {
		t.Errorf("completed usage = %+v, want %+v", u, toolTurnUsage)
	}
	if u := r.turns.usageSoon(toolTurnUsage); u != toolTurnUsage {
		t.Errorf("turn usage = %+v, want the provider's %+v", u, toolTurnUsage)
	}
	first := lastChat(t, f)
	if first.System != "You are terse." || !first.Stream || !first.IncludeUsage || first.MaxTokens != 300 || len(first.Tools) != 2 {
		t.Errorf("chat request: system %q stream %v include_usage %v max %d tools %d", first.System, first.Stream, first.IncludeUsage, first.MaxTokens, len(first.Tools))
	}

	// Continue: the tools' outputs after previous_response_id, whole.
	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-local", Tools: weatherTools(),
		PreviousResponseID: openai.String(done.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String("call_w"),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("sunny, 24°C")}}},
			{OfCustomToolCallOutput: &responses.ResponseCustomToolCallOutputParam{CallID: "call_p",
				Output: responses.ResponseCustomToolCallOutputOutputUnionParam{OfString: openai.String("patched")}}},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "It is sunny in Paris." || resp.Status != "completed" || resp.Usage.OutputTokens != int64(textTurnUsage.OutputTokens) {
		t.Errorf("second answer %q status %s usage %+v", resp.OutputText(), resp.Status, resp.Usage)
	}
	second := lastChat(t, f)
	var roles []string
	for _, m := range second.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool" || len(second.Messages[1].ToolCalls) != 2 || second.System != "" {
		t.Fatalf("continued conversation: roles %v, system %q, messages %+v", roles, second.System, second.Messages)
	}
	if second.Messages[0].Content != "Weather in Paris?" || second.Messages[1].Content != "Let me check." ||
		string(second.Messages[1].ToolCalls[1].Arguments) != `{"input":"*** Begin Patch\n+sunny\n*** End Patch"}` ||
		second.Messages[2].Content != "sunny, 24°C" || second.Messages[3].Content != "patched" {
		t.Errorf("continued conversation = %+v", second.Messages)
	}
	want := toolTurnUsage.Add(textTurnUsage)
	if u := r.turns.usageSoon(want); u != want {
		t.Errorf("turn usage = %+v, want %+v", u, want)
	}
	if n := len(f.Requests()); n != 2 {
		t.Errorf("the Chat provider got %d requests, want 2", n)
	}
}

func lastChat(t *testing.T, f *llmtest.FakeOpenAI) llmtest.CapturedRequest {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatal("the Chat provider got no request")
	}
	return reqs[len(reqs)-1]
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestResponsesNativePrevious: in front of a Responses provider, a
// request with previous_response_id goes out with the stored conversation
// as its input (so the provider need not have stored anything), and an
// answer the client asked not to store cannot be continued.
func TestResponsesNativePrevious(t *testing.T) {
	f := llmtest.NewFakeResponses(llmtest.Text("noted"))
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "openai"}, nil)
	client := openai.NewClient(ooption.WithBaseURL(r.srv.URL+"/openai/v1"), ooption.WithAPIKey(turnToken))
	ctx := context.Background()
	first, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("remember 42")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("what was it?")}}); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	body := reqs[len(reqs)-1].Body
	if _, ok := body["previous_response_id"]; ok {
		t.Errorf("previous_response_id reached the provider: %v", body)
	}
	in, _ := json.Marshal(body["input"])
	if !strings.Contains(string(in), "remember 42") || !strings.Contains(string(in), "noted") || !strings.Contains(string(in), "what was it?") {
		t.Errorf("the provider's input = %s", in)
	}
	unstored, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("secret")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", PreviousResponseID: openai.String(unstored.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("again")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "not found") {
		t.Errorf("continuing an unstored response: %v", err)
	}
}
