package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
)

// allModelCalls returns the model calls of every turn of the given agents.
func allModelCalls(t *testing.T, h *harness, handles ...string) ([]bullpen.ModelCall, []bullpen.Turn) {
	t.Helper()
	var calls []bullpen.ModelCall
	var turns []bullpen.Turn
	for _, handle := range handles {
		ts, err := h.db.Turns(t.Context(), mustHandle(t, h, handle).ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, turn := range ts {
			cs, err := h.db.ModelCalls(t.Context(), turn.ID)
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, cs...)
			turns = append(turns, turn)
		}
	}
	return calls, turns
}

// A built-in turn over the real SDKs records each request byte for byte
// as the vendor's server received it, the raw SSE response, its status
// and usage; per turn, the calls' usage adds up to the turn's.
func TestModelCallsRecordedOverHTTP(t *testing.T) {
	for _, vendor := range []string{"openai", "anthropic"} {
		t.Run(vendor, func(t *testing.T) {
			var prov llm.Provider
			var requests func() []llmtest.CapturedRequest
			end := "data: [DONE]"
			if vendor == "openai" {
				f := llmtest.NewFakeOpenAI(demoHandler)
				defer f.Close()
				prov, requests = openai.New(openai.Config{BaseURL: f.BaseURL(), APIKey: "sk-test", Model: "gpt-test"}), f.Requests
			} else {
				f := llmtest.NewFakeAnthropic(demoHandler)
				defer f.Close()
				prov, requests = anthropic.New(anthropic.Config{BaseURL: f.BaseURL(), APIKey: "sk-ant-test", Model: "claude-test"}), f.Requests
				end = "event: message_stop"
			}
			h := newHarness(t, store.SQLite, map[string]llm.Provider{vendor: prov}, func(c *Config) { c.DefaultProvider = vendor })
			runScenario(t, h)
			calls, turns := allModelCalls(t, h, "lead", "engineer")
			reqs := requests()
			if len(calls) != len(reqs) || len(reqs) != 8 {
				t.Fatalf("recorded %d model calls, the fake received %d requests; want 8 each", len(calls), len(reqs))
			}
			sent := map[string]int{}
			for _, r := range reqs {
				sent[string(r.Raw)]++
			}
			for _, c := range calls {
				if sent[c.Request] == 0 {
					t.Errorf("turn %d call %d: recorded request is not a body the fake received:\n%.300s", c.TurnID, c.Seq, c.Request)
				}
				sent[c.Request]--
				if c.Via != bullpen.ViaBuiltin || c.Provider != vendor || c.Status != 200 || c.RequestTruncated || c.ResponseTruncated ||
					c.RequestBytes != len(c.Request) || !strings.Contains(c.Response, end) || c.InputTokens == 0 || c.OutputTokens == 0 ||
					!strings.HasPrefix(c.URL, "http://127.0.0.1:") || c.Method != "POST" {
					t.Errorf("call = via %q provider %q status %d cut %v/%v url %q, usage %d/%d, response ends %q; want a whole 200 %s call with usage",
						c.Via, c.Provider, c.Status, c.RequestTruncated, c.ResponseTruncated, c.URL, c.InputTokens, c.OutputTokens, tail(c.Response), vendor)
				}
			}
			for _, turn := range turns {
				var in, out, seq int
				for _, c := range calls {
					if c.TurnID == turn.ID {
						in, out = in+c.InputTokens, out+c.OutputTokens
						if seq++; c.Seq != seq {
							t.Errorf("turn %d: call seq %d, want %d", turn.ID, c.Seq, seq)
						}
					}
				}
				if in != turn.InputTokens || out != turn.OutputTokens || seq != turn.Steps {
					t.Errorf("turn %d: calls sum to %d in / %d out over %d calls; turn has %d / %d over %d steps",
						turn.ID, in, out, seq, turn.InputTokens, turn.OutputTokens, turn.Steps)
				}
			}
		})
	}
}

func tail(s string) string { return s[max(0, len(s)-40):] }

// The scripted provider records its calls too, marked simulated: the
// request is the llm.Request the loop built, with its work packet.
func TestScriptedCallsRecordedSimulated(t *testing.T) {
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": scripted.New(DemoScript)}, nil)
	runScenario(t, h)
	calls, _ := allModelCalls(t, h, "engineer")
	if len(calls) != 4 {
		t.Fatalf("engineer recorded %d model calls, want 4", len(calls))
	}
	var req llm.Request
	if err := json.Unmarshal([]byte(calls[0].Request), &req); err != nil {
		t.Fatalf("simulated request is not an llm.Request: %v", err)
	}
	if !calls[0].Simulated || calls[0].URL != scripted.SimulatedURL || !strings.Contains(req.System, "## Roster") ||
		len(req.Messages) != 1 || !strings.Contains(req.Messages[0].Content, "@engineer") {
		t.Errorf("simulated call = %+v; want simulated, with the prefix and the work packet", calls[0])
	}
}

// The pruner removes the model calls of turns older than the retention by
// the service's clock, and keeps newer ones.
func TestPruneByRetention(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": scripted.New(DemoScript)},
		func(c *Config) { c.Now = func() time.Time { return clock() }; c.TurnRetention = 48 * time.Hour })
	runScenario(t, h)
	before, _ := allModelCalls(t, h, "lead", "engineer")
	ctx := context.Background()
	if res, err := h.svc.pruner.prune(ctx); err != nil || res.ModelCalls != 0 || len(before) != 8 {
		t.Fatalf("prune at once = %+v, %v with %d calls; want nothing pruned of 8", res, err, len(before))
	}
	clock = func() time.Time { return now.Add(49 * time.Hour) }
	if res, err := h.svc.pruner.prune(ctx); err != nil || res.ModelCalls != 8 {
		t.Fatalf("prune after 49 h = %+v, %v; want 8 model calls", res, err)
	}
	if after, _ := allModelCalls(t, h, "lead", "engineer"); len(after) != 0 {
		t.Errorf("%d model calls left after retention, want 0", len(after))
	}
}
