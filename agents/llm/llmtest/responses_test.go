package llmtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

func responsesClient(f *llmtest.FakeResponses) openai.Client {
	return openai.NewClient(option.WithBaseURL(f.BaseURL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
}

// TestResponsesStreaming: the real OpenAI SDK streams text deltas, a
// function call and usage from the fake, and the fake captured the
// instructions, the input and the tools.
func TestResponsesStreaming(t *testing.T) {
	f := llmtest.NewFakeResponses(llmtest.Sequence(llmtest.Reply{Text: "hello there",
		ToolCalls: []llm.ToolCall{{Name: "shell", Arguments: []byte(`{"cmd":"ls"}`)}}}))
	defer f.Close()
	c := responsesClient(f)
	st := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-x", Instructions: openai.String("be brief"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "shell",
			Parameters: map[string]any{"type": "object"}}}},
	})
	var text strings.Builder
	var final responses.Response
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			final = ev.Response
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "hello there" {
		t.Errorf("text deltas = %q", text.String())
	}
	var call responses.ResponseFunctionToolCall
	for _, it := range final.Output {
		if it.Type == "function_call" {
			call = it.AsFunctionCall()
		}
	}
	if call.Name != "shell" || call.Arguments != `{"cmd":"ls"}` || call.CallID == "" {
		t.Errorf("function call = %+v", call)
	}
	if final.Usage.InputTokens == 0 || final.Usage.OutputTokens == 0 {
		t.Errorf("usage = %+v", final.Usage)
	}
	req := f.Requests()[0]
	if req.System != "be brief" || len(req.Messages) != 1 || req.Messages[0].Content != "hi" ||
		len(req.Tools) != 1 || req.Tools[0].Name != "shell" || !req.Stream {
		t.Errorf("captured %+v", req)
	}
}

// TestResponsesCacheAndToolOutput: a second request that repeats the
// first one's prefix reports it as cached; function call outputs and
// namespaced tools (Codex's MCP servers) are decoded.
func TestResponsesCacheAndToolOutput(t *testing.T) {
	f := llmtest.NewFakeResponses(llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "mcp__bullpen__post_message", Arguments: []byte(`{"body":"x"}`)}}},
		llmtest.Reply{Text: "done"}))
	defer f.Close()
	body := `{"model":"m","instructions":"sys","tools":[{"type":"namespace","name":"mcp__bullpen","tools":[{"type":"function","name":"post_message","parameters":{}}]}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	_, v := post(t, f.BaseURL()+"/responses", body+`]}`)
	out := v["output"].([]any)[0].(map[string]any)
	if out["namespace"] != "mcp__bullpen" || out["name"] != "post_message" {
		t.Fatalf("namespaced call = %v", out)
	}
	_, v = post(t, f.BaseURL()+"/responses", body+`,{"type":"function_call","call_id":"c1","namespace":"mcp__bullpen","name":"post_message","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"posted"}]}`)
	u := v["usage"].(map[string]any)
	if cached := u["input_tokens_details"].(map[string]any)["cached_tokens"].(float64); cached == 0 || cached >= u["input_tokens"].(float64) {
		t.Errorf("usage = %v: want part of the input cached", u)
	}
	msgs := f.Requests()[1].Messages
	if len(msgs) != 3 || msgs[1].ToolCalls[0].Name != "mcp__bullpen__post_message" || msgs[2].Role != "tool" || msgs[2].Content != "posted" {
		t.Errorf("decoded input = %+v", msgs)
	}
	res, _ := post(t, f.BaseURL()+"/responses", `{"input":"x"}`)
	if res.StatusCode != 400 {
		t.Errorf("request without a model: status %d", res.StatusCode)
	}
}
