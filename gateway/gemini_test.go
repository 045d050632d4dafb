package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// geminiResp is a GenerateContentResponse as a client reads it.
type geminiResp struct {
	Candidates []struct {
		Content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         string `json:"text"`
				Thought      bool   `json:"thought"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		TotalTokenCount         int `json:"totalTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
}

// text joins the candidate's text parts (thoughts left out).
func (g geminiResp) text() string {
	var sb strings.Builder
	for _, c := range g.Candidates {
		for _, p := range c.Content.Parts {
			if !p.Thought {
				sb.WriteString(p.Text)
			}
		}
	}
	return sb.String()
}

// geminiPost sends body to /gemini/v1beta/models/{model}:{method}{query}
// with the turn token as x-goog-api-key (key "" sends none).
func (r *rig) geminiPost(t *testing.T, model, method, query, key, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/gemini/v1beta/models/"+model+":"+method+query, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-goog-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// sseChunks decodes an alt=sse answer's frames ("data: {…}\r\n\r\n").
func sseChunks(t *testing.T, body []byte) []geminiResp {
	t.Helper()
	var out []geminiResp
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(strings.TrimRight(sc.Text(), "\r"), "data: ")
		if !ok {
			continue
		}
		var g geminiResp
		if err := json.Unmarshal([]byte(data), &g); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		out = append(out, g)
	}
	if !bytes.Contains(body, []byte("\r\n\r\n")) {
		t.Errorf("frames are not separated as the API separates them: %q", body)
	}
	return out
}

// weatherRequest is Gemini CLI's first request of a tool turn, in short:
// a system instruction, one user message, a function declared with a
// JSON Schema and one with the API's OpenAPI schema (upper-case types).
const weatherRequest = `{"systemInstruction":{"parts":[{"text":"You are terse."}]},
 "contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],
 "tools":[{"functionDeclarations":[
   {"name":"get_weather","description":"The weather in a city.","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
   {"name":"get_time","description":"The time.","parameters":{"type":"OBJECT","properties":{"zone":{"type":"STRING","nullable":true}},"propertyOrdering":["zone"]}}]}],
 "generationConfig":{"maxOutputTokens":500,"temperature":0.5,"topP":0.9,"topK":40,"stopSequences":["END"],"thinkingConfig":{"includeThoughts":true}}}`

// weatherFollowUp continues it: the model's call and Gemini CLI's
// answer to it, tied by id.
const weatherFollowUp = `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]},
 {"role":"model","parts":[{"text":"Let me check."},{"functionCall":{"id":"call_w","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"sig"}]},
 {"role":"user","parts":[{"functionResponse":{"id":"call_w","name":"get_weather","response":{"output":"sunny, 24°C"}}}]}],
 "tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{"type":"object"}}]}]}`

// TestGeminiViaChat: Gemini's API in front of a Chat Completions
// provider. A streamed request (alt=sse) with tools and a generation
// config reaches the provider as Chat (system, tools with JSON Schema
// parameters, the output limit clamped to the budget, sampling and stop
// carried over, usage asked for), and its tool call comes back as a
// functionCall part with the provider's id, the usage as usageMetadata,
// exact. The follow-up with the function's result, not streamed, reaches
// the provider as a tool message answering that id.
func TestGeminiViaChat(t *testing.T) {
	f := chatOnlyToolFake(t)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "local"}, nil)
	r.turns.grant = 300
	status, hdr, body := r.geminiPost(t, "gpt-local", "streamGenerateContent", "?alt=sse", turnToken, weatherRequest)
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q: %s", status, hdr.Get("Content-Type"), body)
	}
	chunks := sseChunks(t, body)
	if len(chunks) < 2 {
		t.Fatalf("%d chunks: %s", len(chunks), body)
	}
	var text strings.Builder
	for _, c := range chunks[:len(chunks)-1] {
		text.WriteString(c.text())
		if c.UsageMetadata != nil || c.Candidates[0].FinishReason != "" {
			t.Errorf("a chunk before the last has usage or a finish reason: %+v", c)
		}
	}
	last := chunks[len(chunks)-1]
	if text.String() != "Let me check." || last.Candidates[0].FinishReason != "STOP" || last.ModelVersion != "gpt-local" {
		t.Errorf("streamed text %q, last chunk %+v", text.String(), last)
	}
	calls := last.Candidates[0].Content.Parts
	if len(calls) != 2 || calls[0].FunctionCall == nil || calls[0].FunctionCall.ID != "call_w" || calls[0].FunctionCall.Name != "get_weather" ||
		string(calls[0].FunctionCall.Args) != `{"city":"Paris"}` || calls[1].FunctionCall.Name != "apply_patch" {
		t.Fatalf("last chunk's parts = %s", body)
	}
	checkGeminiUsage(t, last, toolTurnUsage)
	first := lastChat(t, f)
	if first.System != "You are terse." || !first.Stream || !first.IncludeUsage || first.MaxTokens != 300 || len(first.Tools) != 2 {
		t.Errorf("chat request: system %q stream %v include_usage %v max %d tools %d", first.System, first.Stream, first.IncludeUsage, first.MaxTokens, len(first.Tools))
	}
	if first.Temperature == nil || *first.Temperature != 0.5 || first.Body["top_p"] != 0.9 || first.Body["top_k"] != nil ||
		first.Body["thinkingConfig"] != nil || strings.Join(anyStrings(first.Body["stop"]), ",") != "END" {
		t.Errorf("chat request sampling: %s", first.Raw)
	}
	if got := string(first.Tools[1].Parameters); got != `{"properties":{"zone":{"type":["string","null"]}},"type":"object"}` {
		t.Errorf("the OpenAPI schema as JSON Schema: %s", got)
	}
	if h := first.Header; h.Get("Authorization") != "Bearer "+realKey || h.Get("X-Goog-Api-Key") != "" || strings.Contains(first.Path, "alt") {
		t.Errorf("upstream header %v, path %q", h, first.Path)
	}
	if u := r.turns.usageSoon(toolTurnUsage); u != toolTurnUsage {
		t.Errorf("turn usage = %+v, want the provider's %+v", u, toolTurnUsage)
	}

	status, _, body = r.geminiPost(t, "gpt-local", "generateContent", "", turnToken, weatherFollowUp)
	var whole geminiResp
	if status != 200 || json.Unmarshal(body, &whole) != nil || whole.text() != "It is sunny in Paris." || whole.Candidates[0].FinishReason != "STOP" {
		t.Fatalf("follow-up: %d %s", status, body)
	}
	checkGeminiUsage(t, whole, textTurnUsage)
	second := lastChat(t, f)
	var roles []string
	for _, m := range second.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool" || second.Messages[1].Content != "Let me check." ||
		len(second.Messages[1].ToolCalls) != 1 || second.Messages[1].ToolCalls[0].ID != "call_w" ||
		second.Messages[2].ToolCallID != "call_w" || second.Messages[2].Content != "sunny, 24°C" || second.Stream {
		t.Errorf("follow-up conversation = %+v", second.Messages)
	}
	if want := toolTurnUsage.Add(textTurnUsage); r.turns.usageSoon(want) != want {
		t.Errorf("turn usage = %+v, want %+v", r.turns.usageSoon(want), want)
	}
	if calls := r.rec.all(); len(calls) != 2 || !strings.HasSuffix(calls[0].URL, "/chat/completions") || calls[0].InputTokens != toolTurnUsage.InputTokens {
		t.Errorf("records = %+v", calls)
	}
}

func checkGeminiUsage(t *testing.T, g geminiResp, want llm.Usage) {
	t.Helper()
	u := g.UsageMetadata
	if u == nil || u.PromptTokenCount != want.InputTokens || u.CandidatesTokenCount != want.OutputTokens ||
		u.TotalTokenCount != want.InputTokens+want.OutputTokens || u.CachedContentTokenCount != want.CachedInputTokens {
		t.Errorf("usageMetadata = %+v, want the provider's %+v", u, want)
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

// anthropicToolFake calls get_weather until it has its result, then
// answers in text; both answers report usage with cache reads and writes.
func anthropicToolFake(t *testing.T) *llmtest.FakeAnthropic {
	t.Helper()
	f := llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply {
		for _, m := range c.Messages {
			if m.Role == "tool" {
				return llmtest.Reply{Text: "It is sunny in Paris.", Usage: &textTurnUsage}
			}
		}
		return llmtest.Reply{Text: "Let me check.", Usage: &anthropicUsage,
			ToolCalls: []llm.ToolCall{{ID: "toolu_w", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}}}
	})
	t.Cleanup(f.Close)
	return f
}
