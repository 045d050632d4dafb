package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
)

// TestOutputClamped: a call's output limit is clamped to what its budget
// leaves, in each API's own field, and set when the request has none, so
// the provider cannot answer past the budget; the input is counted before
// the call leaves.
func TestOutputClamped(t *testing.T) {
	var seen []llmtest.CapturedRequest
	capture := func(c llmtest.CapturedRequest) llmtest.Reply {
		seen = append(seen, c)
		return llmtest.Reply{Text: "ok"}
	}
	fa := llmtest.NewFakeAnthropic(capture)
	fo := llmtest.NewFakeOpenAI(capture)
	t.Cleanup(fa.Close)
	t.Cleanup(fo.Close)
	fr := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		seen = append(seen, llmtest.CapturedRequest{Raw: raw})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(responseObject("m", "completed", true))
	}))
	t.Cleanup(fr.Close)
	ant := Upstream{Kind: KindAnthropic, BaseURL: fa.BaseURL(), APIKey: realKey}
	oai := Upstream{Kind: KindOpenAI, BaseURL: fo.BaseURL(), APIKey: realKey}
	cases := []struct {
		name, path, body, field string
		up                      Upstream
		want                    int
	}{
		{"messages over", "/anthropic/v1/messages", `{"model":"m","max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", ant, 300},
		{"messages under", "/anthropic/v1/messages", `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", ant, 50},
		{"chat none", "/openai/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens", oai, 300},
		{"chat completion tokens", "/openai/v1/chat/completions", `{"max_completion_tokens":9000,"model":"o3","messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens", oai, 300},
		{"chat reasoning none", "/openai/v1/chat/completions", `{"model":"o4-mini","messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens", oai, 300},
		{"responses", "/openai/v1/responses", `{"model":"m","input":"hi","max_output_tokens":4000}`, "max_output_tokens", Upstream{Kind: KindOpenAI, BaseURL: fr.URL + "/v1", APIKey: realKey}, 300},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			r := newRig(t, tc.up, nil)
			r.turns.grant = 300
			if status, _, body := r.post(t, tc.path, "bearer", turnToken, tc.body); status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			if len(seen) != 1 {
				t.Fatalf("%d requests forwarded", len(seen))
			}
			var got map[string]any
			if err := json.Unmarshal(seen[0].Raw, &got); err != nil {
				t.Fatalf("forwarded body %s: %v", seen[0].Raw, err)
			}
			if n, _ := got[tc.field].(float64); int(n) != tc.want {
				t.Errorf("forwarded %s = %v in %s, want %d", tc.field, got[tc.field], seen[0].Raw, tc.want)
			}
			if res := r.turns.reserved; len(res) != 1 || res[0].Input != llm.Count(tc.body) {
				t.Errorf("reserved %+v, want the input counted as %d", res, llm.Count(tc.body))
			}
		})
	}
}

// TestUnfinishedAnswersCharged: an answer whose usage never arrived whole
// (a stream cut short, a whole answer the client hung up on) is charged its
// whole reservation, not the 1 output token of message_start; a provider's
// error answer is charged nothing; a whole answer its usage.
func TestUnfinishedAnswersCharged(t *testing.T) {
	reply := llmtest.Reply{Text: "a long answer, cut", CutOff: true, Usage: &llm.Usage{InputTokens: 40, OutputTokens: 900}}
	fa := llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply { return reply })
	t.Cleanup(fa.Close)
	r := newRig(t, Upstream{Kind: KindAnthropic, BaseURL: fa.BaseURL(), APIKey: realKey}, nil)
	body := `{"model":"m","max_tokens":2000,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, body)
	in := llm.Count(body)
	if u := r.turns.usageSoon(llm.Usage{InputTokens: in, OutputTokens: 2000}); u.InputTokens != in || u.OutputTokens != 2000 {
		t.Errorf("cut stream charged %+v, want its reservation %d in, 2000 out", u, in)
	}
	reply = llmtest.Reply{Status: 529, Message: "overloaded"}
	r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, body)
	reply = llmtest.Reply{Text: "whole", Usage: &llm.Usage{InputTokens: 40, OutputTokens: 9}}
	r.post(t, "/anthropic/v1/messages", "x-api-key", turnToken, body)
	want := llm.Usage{InputTokens: in + 40, OutputTokens: 2009}
	if u := r.turns.usageSoon(want); u != want {
		t.Errorf("after an error and a whole answer, charged %+v, want %+v", u, want)
	}
}
