package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// Another agent's turn token, for scoping tests.
const otherTok = "bp_turn_token_other_agent"

var designer = bullpen.Member{ID: 8, Handle: "designer", Kind: bullpen.KindAgent}

// twoAgents knows the engineer's turn token (turn 42) and the designer's
// (also turn 42 in fakeTurns' eyes: only the member differs).
type twoAgents struct{}

func (twoAgents) AuthenticateTurn(ctx context.Context, secret string) (bullpen.Member, int64, error) {
	if secret == otherTok {
		return designer, 42, nil
	}
	return fakeAuth{}.AuthenticateTurn(ctx, secret)
}

// TestResponsesScopedToAgent: a response id and a compaction summary of
// one agent are "not found" for another, on either kind of provider, and
// nothing reaches the provider; the owner continues them.
func TestResponsesScopedToAgent(t *testing.T) {
	for _, native := range []bool{true, false} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			var base string
			var count func() int
			if native {
				f := llmtest.NewFakeResponses(llmtest.Text("ok"))
				t.Cleanup(f.Close)
				base, count = f.BaseURL(), func() int { return len(f.Requests()) }
			} else {
				f := llmtest.NewFakeOpenAI(llmtest.Text("summary: the user likes 42"))
				t.Cleanup(f.Close)
				base, count = f.BaseURL(), func() int { return len(f.Requests()) }
			}
			api := APIResponses
			if !native {
				api = APIChat
			}
			r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: base, APIKey: realKey, Name: "p", API: api}, func(c *Config) { c.Auth = twoAgents{} })
			st, _, body := r.post(t, "/openai/v1/responses", "bearer", turnToken, `{"model":"m","input":"remember 42"}`)
			var first struct{ ID string }
			if err := json.Unmarshal(body, &first); st != 200 || err != nil || first.ID == "" {
				t.Fatalf("first: %d %s", st, body)
			}
			n := count()
			cont := `{"model":"m","previous_response_id":"` + first.ID + `","input":"and?"}`
			st, _, body = r.post(t, "/openai/v1/responses", "bearer", otherTok, cont)
			if st != http.StatusBadRequest || !strings.Contains(string(body), "not found") || !strings.Contains(string(body), `"type":"invalid_request_error"`) {
				t.Errorf("another agent continuing: %d %s", st, body)
			}
			if count() != n {
				t.Errorf("the provider got the other agent's request")
			}
			if st, _, body = r.post(t, "/openai/v1/responses", "bearer", turnToken, cont); st != 200 {
				t.Errorf("the owner continuing: %d %s", st, body)
			}
			if native {
				return
			}
			// A compaction made for the engineer is not the designer's.
			st, _, body = r.post(t, "/openai/v1/responses/compact", "bearer", turnToken, `{"model":"m","input":"remember 42"}`)
			var comp struct{ Output []map[string]any }
			if err := json.Unmarshal(body, &comp); st != 200 || err != nil || len(comp.Output) == 0 {
				t.Fatalf("compact: %d %s", st, body)
			}
			item, _ := json.Marshal(comp.Output[len(comp.Output)-1])
			in := `{"model":"m","input":[` + string(item) + `,{"role":"user","content":"go on"}]}`
			n = count()
			if st, _, body = r.post(t, "/openai/v1/responses", "bearer", otherTok, in); st != http.StatusBadRequest || count() != n {
				t.Errorf("another agent's compaction item: %d %s", st, body)
			}
			if st, _, body = r.post(t, "/openai/v1/responses", "bearer", turnToken, in); st != 200 {
				t.Errorf("own compaction item: %d %s", st, body)
			}
		})
	}
}

// TestResponsesBadInput: malformed requests get the API's JSON error with
// a 400 (never a 500), and nothing reaches the provider or is charged.
func TestResponsesBadInput(t *testing.T) {
	f := llmtest.NewFakeOpenAI(llmtest.Text("ok"))
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "p", API: APIChat}, nil)
	cases := map[string]string{
		"not json":           `{"model":`,
		"array body":         `[1,2]`,
		"input a number":     `{"model":"m","input":42}`,
		"input item scalar":  `{"model":"m","input":["hi"]}`,
		"item without type":  `{"model":"m","input":[{"content":"hi"}]}`,
		"bad role":           `{"model":"m","input":[{"role":"robot","content":"hi"}]}`,
		"stream a string":    `{"model":"m","input":"hi","stream":"yes"}`,
		"max output zero":    `{"model":"m","input":"hi","max_output_tokens":0}`,
		"max output string":  `{"model":"m","input":"hi","max_output_tokens":"many"}`,
		"unknown prev id":    `{"model":"m","input":"hi","previous_response_id":"resp_nope"}`,
		"prev id a number":   `{"model":"m","input":"hi","previous_response_id":7}`,
		"built-in tool":      `{"model":"m","input":"hi","tools":[{"type":"web_search"}]}`,
		"tool without name":  `{"model":"m","input":"hi","tools":[{"type":"function"}]}`,
		"bad tool_choice":    `{"model":"m","input":"hi","tool_choice":"sometimes"}`,
		"item reference":     `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`,
		"call without id":    `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`,
		"content a number":   `{"model":"m","input":[{"role":"user","content":5}]}`,
		"file part":          `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`,
		"bad text format":    `{"model":"m","input":"hi","text":{"format":{"type":"yaml"}}}`,
		"foreign compaction": `{"model":"m","input":[{"type":"compaction","encrypted_content":"bpc_sum_nope"}]}`,
		"no input":           `{"model":"m"}`,
	}
	for name, body := range cases {
		paths := []string{"/openai/v1/responses", "/openai/v1/responses/compact"}
		if strings.Contains(body, `"tool`) || strings.Contains(body, `"text"`) {
			paths = paths[:1] // /compact takes neither tools nor a format
		}
		for _, path := range paths {
			st, h, b := r.post(t, path, "bearer", turnToken, body)
			var e struct {
				Error *struct{ Message, Type string }
			}
			if st != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error == nil || e.Error.Type != "invalid_request_error" ||
				!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("%s %s: %d %s", name, path, st, b)
			}
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("the provider got %d requests", n)
	}
	if u, _, _ := r.turns.snapshot(); u != (llm.Usage{}) {
		t.Errorf("charged %+v for refused requests", u)
	}
}

// TestResponsesCompactViaChat: /responses/compact against a Chat provider
// answers the user messages and one compaction item; sent back, the item
// becomes the summary, and the call was budgeted like any other.
func TestResponsesCompactViaChat(t *testing.T) {
	sumUsage := llm.Usage{InputTokens: 90, OutputTokens: 12}
	f := llmtest.NewFakeOpenAI(func(c llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "The user asked about Paris weather; it was sunny.", Usage: &sumUsage}
	})
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "p"}, nil)
	r.turns.grant = 200
	in := `{"model":"m","input":[{"role":"user","content":"Weather in Paris?"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Sunny."}]}]}`
	st, _, body := r.post(t, "/openai/v1/responses/compact", "bearer", turnToken, in)
	var comp struct {
		Object string
		Output []map[string]any
		Usage  struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}
	}
	if err := json.Unmarshal(body, &comp); st != 200 || err != nil || comp.Object != "response.compaction" || len(comp.Output) != 2 {
		t.Fatalf("compact: %d %s", st, body)
	}
	if comp.Output[0]["role"] != "user" || comp.Output[1]["type"] != "compaction" || comp.Usage.OutputTokens != sumUsage.OutputTokens {
		t.Errorf("compaction output = %s", body)
	}
	sumReq := lastChat(t, f)
	if sumReq.MaxTokens != 200 || sumReq.Stream {
		t.Errorf("summary request: max %d stream %v", sumReq.MaxTokens, sumReq.Stream)
	}
	if u := r.turns.usageSoon(sumUsage); u != sumUsage {
		t.Errorf("turn usage = %+v, want %+v", u, sumUsage)
	}
	items, _ := json.Marshal(append(comp.Output, map[string]any{"role": "user", "content": "And tomorrow?"}))
	if st, _, body = r.post(t, "/openai/v1/responses", "bearer", turnToken, `{"model":"m","input":`+string(items)+`}`); st != 200 {
		t.Fatalf("continue after compaction: %d %s", st, body)
	}
	msgs := lastChat(t, f).Messages
	if len(msgs) != 3 || !strings.Contains(msgs[1].Content, "it was sunny") || msgs[2].Content != "And tomorrow?" {
		t.Errorf("messages after compaction = %+v", msgs)
	}
}

// TestResponsesInputTokens: /responses/input_tokens is the provider's
// count where it has one, else the gateway's own; it uses no budget.
func TestResponsesInputTokens(t *testing.T) {
	counted := 0
	native := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/responses/input_tokens" {
			http.NotFound(w, r)
			return
		}
		counted++
		fmt.Fprint(w, `{"object":"response.input_tokens","input_tokens":1234}`)
	}))
	t.Cleanup(native.Close)
	chat := llmtest.NewFakeOpenAI(llmtest.Text("ok"))
	t.Cleanup(chat.Close)
	body := `{"model":"m","instructions":"Be brief.","input":"How many tokens is this sentence, roughly?"}`
	for _, tc := range []struct {
		name, base string
		want       int
	}{{"native", native.URL + "/v1", 1234}, {"chat only", chat.BaseURL(), countTokens([]byte(body))}} {
		r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: tc.base, APIKey: realKey, Name: "p"}, nil)
		st, _, b := r.post(t, "/openai/v1/responses/input_tokens", "bearer", turnToken, body)
		var v struct {
			Object      string
			InputTokens int `json:"input_tokens"`
		}
		if json.Unmarshal(b, &v); st != 200 || v.Object != "response.input_tokens" || v.InputTokens != tc.want || v.InputTokens < 10 {
			t.Errorf("%s: %d %s, want %d tokens", tc.name, st, b, tc.want)
		}
		if len(r.turns.reserved) != 0 {
			t.Errorf("%s: counting reserved tokens", tc.name)
		}
	}
	if counted != 1 {
		t.Errorf("the native provider counted %d times", counted)
	}
}

// TestResponsesReasoningViaChat: a Chat provider's reasoning_content
// becomes a reasoning item, streamed as reasoning_text events, before the
// message; the reasoning tokens are reported.
func TestResponsesReasoningViaChat(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{`{"role":"assistant","reasoning_content":"Think"}`, `{"reasoning_content":"ing."}`, `{"content":"Done."}`} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", d)
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":30,\"total_tokens\":80,\"completion_tokens_details\":{\"reasoning_tokens\":20}}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: srv.URL, APIKey: realKey, Name: "p", API: APIChat}, nil)
	st, _, body := r.post(t, "/openai/v1/responses", "bearer", turnToken, `{"model":"m","input":"think","stream":true}`)
	if st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	var types []string
	var final map[string]any
	for _, l := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(l, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		types = append(types, ev["type"].(string))
		if ev["type"] == "response.completed" {
			final = ev["response"].(map[string]any)
		}
	}
	want := "response.created,response.in_progress,response.output_item.added,response.content_part.added,response.reasoning_text.delta," +
		"response.reasoning_text.delta,response.reasoning_text.done,response.content_part.done,response.output_item.done," +
		"response.output_item.added,response.content_part.added,response.output_text.delta,response.output_text.done," +
		"response.content_part.done,response.output_item.done,response.completed"
	if got := strings.Join(types, ","); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	out, _ := json.Marshal(final["output"])
	u, _ := json.Marshal(final["usage"])
	if !strings.Contains(string(out), `"text":"Thinking."`) || !strings.Contains(string(out), `"text":"Done."`) ||
		!strings.Contains(string(u), `"reasoning_tokens":20`) || !strings.Contains(string(u), `"output_tokens":30`) {
		t.Errorf("output %s usage %s", out, u)
	}
}

// TestResponsesViaChatBudget: through the translation the budget holds as
// for any call: the output limit is clamped to the grant, a stream cut
// short is charged its whole reservation (and the client told), and a
// spent budget is a 429 that reaches no provider.
func TestResponsesViaChatBudget(t *testing.T) {
	f := llmtest.NewFakeOpenAI(func(llmtest.CapturedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "a long answer cut short", CutOff: true}
	})
	t.Cleanup(f.Close)
	r := newRig(t, Upstream{Kind: KindOpenAI, BaseURL: f.BaseURL(), APIKey: realKey, Name: "p", API: APIChat}, nil)
	r.turns.grant = 64
	st, _, body := r.post(t, "/openai/v1/responses", "bearer", turnToken, `{"model":"m","input":"go","stream":true,"max_output_tokens":5000}`)
	if st != 200 || !strings.Contains(string(body), "event: error") || strings.Contains(string(body), "response.completed") {
		t.Errorf("cut stream: %d %s", st, body)
	}
	if got := lastChat(t, f).MaxTokens; got != 64 {
		t.Errorf("max_tokens sent = %d, want the grant 64", got)
	}
	res := r.turns.reserved[0]
	want := llm.Usage{InputTokens: res.Input, OutputTokens: res.Output}
	if u := r.turns.usageSoon(want); u != want {
		t.Errorf("cut stream charged %+v, want its reservation %+v", u, want)
	}
	r.turns.stop = Budget{Limit: bullpen.LimitTurnTokens, Detail: "@engineer stopped: budget"}
	n := len(f.Requests())
	st, h, body := r.post(t, "/openai/v1/responses", "bearer", turnToken, `{"model":"m","input":"go"}`)
	if st != http.StatusTooManyRequests || h.Get("x-should-retry") != "false" || !strings.Contains(string(body), "insufficient_quota") || len(f.Requests()) != n {
		t.Errorf("over budget: %d %s", st, body)
	}
}

// TestMemoryResponsesBounded: the memory store forgets its oldest
// responses past its bounds, and never hands one agent's to another.
func TestMemoryResponsesBounded(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryResponses(2)
	for i, id := range []string{"a", "b", "c"} {
		if err := m.PutResponse(ctx, id, 7, int64(i), []byte(`[]`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.GetResponse(ctx, 7, "a"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Errorf("the oldest response was kept past the bound: %v", err)
	}
	if _, err := m.GetResponse(ctx, 7, "c"); err != nil {
		t.Errorf("the newest response: %v", err)
	}
	if _, err := m.GetResponse(ctx, 8, "c"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Errorf("another agent got the response: %v", err)
	}
	m.maxBytes = 10
	_ = m.PutResponse(ctx, "big", 7, 1, []byte(`["0123456789"]`))
	if _, err := m.GetResponse(ctx, 7, "c"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		t.Errorf("past the byte bound the older response was kept: %v", err)
	}
	if _, err := m.GetResponse(ctx, 7, "big"); err != nil {
		t.Errorf("the newest response is kept even alone over the bound: %v", err)
	}
}
