package agents

import (
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// demoHandler scripts a fake vendor server with the demo script, reading
// the request as the vendor received it.
func demoHandler(req llmtest.CapturedRequest) llmtest.Reply {
	v := captureView(req)
	text, calls := DemoStep(v)
	return llmtest.Reply{Text: text, ToolCalls: calls}
}

func captureView(req llmtest.CapturedRequest) ScriptView {
	v := ScriptView{System: req.System}
	for _, t := range req.Tools {
		v.Tools = append(v.Tools, t.Name)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			if v.Packet == "" {
				v.Packet = m.Content
			}
		case "assistant":
			v.Steps++
		case "tool":
			v.Last = m.Content
		}
	}
	return v
}

// The scenario end to end over the real OpenAI and Anthropic SDKs
// against fake servers speaking their HTTP protocols (SSE, tool calls,
// usage), on every database dialect.
func TestScenarioOverHTTP(t *testing.T) {
	type vendor struct {
		name  string
		start func() (llm.Provider, func() []llmtest.CapturedRequest, func())
	}
	vendors := []vendor{
		{"openai", func() (llm.Provider, func() []llmtest.CapturedRequest, func()) {
			f := llmtest.NewFakeOpenAI(demoHandler)
			p := openai.New(openai.Config{BaseURL: f.BaseURL(), APIKey: "sk-test", Model: "gpt-test"})
			return p, f.Requests, f.Close
		}},
		{"anthropic", func() (llm.Provider, func() []llmtest.CapturedRequest, func()) {
			f := llmtest.NewFakeAnthropic(demoHandler)
			p := anthropic.New(anthropic.Config{BaseURL: f.BaseURL(), APIKey: "sk-ant-test", Model: "claude-test"})
			return p, f.Requests, f.Close
		}},
	}
	for _, d := range storetest.Dialects(t) {
		for _, vd := range vendors {
			t.Run(d+"/"+vd.name, func(t *testing.T) {
				prov, requests, stop := vd.start()
				defer stop()
				h := newHarness(t, d, map[string]llm.Provider{vd.name: prov}, func(c *Config) { c.DefaultProvider = vd.name })
				runScenario(t, h)
				reqs := requests()
				if len(reqs) != 8 { // lead 2, engineer 4, lead 2
					t.Errorf("%s fake got %d requests, want 8", vd.name, len(reqs))
				}
				for _, r := range reqs {
					if !r.Stream || len(r.Tools) == 0 || !strings.Contains(r.System, "## Roster") {
						t.Fatalf("request %d: stream=%v tools=%d, system without roster: want a streamed request with tools and the stable prefix", r.Seq, r.Stream, len(r.Tools))
					}
				}
				if vd.name == "anthropic" && !hasCacheBreakpoint(reqs[0]) {
					t.Errorf("anthropic request has no cache_control breakpoint on the stable prefix")
				}
				turns, err := h.svc.Turns(t.Context(), h.admin, mustHandle(t, h, "engineer").ID, 10)
				if err != nil || len(turns) != 1 || turns[0].InputTokens == 0 || turns[0].OutputTokens == 0 || turns[0].Provider != vd.name {
					t.Errorf("engineer turns = %+v, %v; want one %s turn with usage", turns, err, vd.name)
				}
			})
		}
	}
}

func hasCacheBreakpoint(r llmtest.CapturedRequest) bool {
	for _, c := range r.SystemCacheControl {
		if c != "" {
			return true
		}
	}
	for _, t := range r.Tools {
		if t.CacheControl != "" {
			return true
		}
	}
	return false
}
