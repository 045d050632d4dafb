package agents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
)

// The inspector reads the system prefix and work packet out of the first
// request as each vendor received it, and out of the journal when that
// request was cut.
func TestInspectTurnPrompt(t *testing.T) {
	for _, vendor := range []string{"openai", "anthropic", "scripted"} {
		t.Run(vendor, func(t *testing.T) {
			var prov llm.Provider = scripted.New(DemoScript)
			requests := func() []llmtest.CapturedRequest { return nil }
			switch vendor {
			case "openai":
				f := llmtest.NewFakeOpenAI(demoHandler)
				defer f.Close()
				prov, requests = openai.New(openai.Config{BaseURL: f.BaseURL(), Model: "gpt-4o-mini"}), f.Requests
			case "anthropic":
				f := llmtest.NewFakeAnthropic(demoHandler)
				defer f.Close()
				prov, requests = anthropic.New(anthropic.Config{BaseURL: f.BaseURL(), APIKey: "k", Model: "claude-test"}), f.Requests
			}
			h := newHarness(t, store.SQLite, map[string]llm.Provider{vendor: prov}, func(c *Config) { c.DefaultProvider = vendor })
			runScenario(t, h)
			eng := mustHandle(t, h, "engineer")
			turns, _ := h.db.Turns(t.Context(), eng.ID, 1)
			d, err := h.svc.InspectTurn(t.Context(), h.admin, turns[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if d.PromptSource != "request" || !strings.Contains(d.SystemPrefix, "## Roster") || !strings.Contains(d.WorkPacket, "@engineer") {
				t.Errorf("prompt = %q, prefix %.60q…, packet %.80q…; want from the request, with roster and the mention", d.PromptSource, d.SystemPrefix, d.WorkPacket)
			}
			for _, r := range requests() {
				if string(r.Raw) == d.ModelCalls[0].Request && r.System != d.SystemPrefix { // the engineer's first request
					t.Errorf("prefix differs from what the %s fake received", vendor)
				}
			}
			if len(d.Wakes) != 1 || d.Wakes[0].Message == nil || d.Wakes[0].Message.Author != "lead" || len(d.Turn.ToolCalls) != 3 ||
				len(d.ModelCalls) != 4 || d.Simulated != (vendor == "scripted") {
				t.Errorf("detail = wakes %+v, %d tool calls, %d model calls, simulated %v", d.Wakes, len(d.Turn.ToolCalls), len(d.ModelCalls), d.Simulated)
			}
			packet := d.WorkPacket
			d.ModelCalls[0].RequestTruncated, d.WorkPacket, d.PromptSource = true, "", ""
			if err := h.svc.turnPrompt(t.Context(), &d); err != nil || d.PromptSource != "journal" || d.WorkPacket != packet {
				t.Errorf("cut request: prompt from %q (%v), packet equal %v; want the journal's packet", d.PromptSource, err, d.WorkPacket == packet)
			}
		})
	}
}

// Humans inspect turns of channels they see; an agent only its own.
func TestInspectTurnAccess(t *testing.T) {
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": scripted.New(DemoScript)}, nil)
	runScenario(t, h)
	lead, eng := mustHandle(t, h, "lead"), mustHandle(t, h, "engineer")
	turns, _ := h.db.Turns(t.Context(), eng.ID, 1)
	id := turns[0].ID
	var stamped int
	for _, ev := range h.events(0) {
		var m bullpen.Message
		if ev.Type == bullpen.EventMessagePosted && json.Unmarshal(ev.Payload, &m) == nil && m.AuthorID == eng.ID {
			if m.TurnID != id {
				t.Errorf("engineer's post %d has turn_id %d, want %d", m.ID, m.TurnID, id)
			}
			stored, _ := h.db.Message(t.Context(), m.ID)
			if stored.TurnID != id {
				t.Errorf("stored post %d has turn_id %d, want %d", m.ID, stored.TurnID, id)
			}
			stamped++
		}
	}
	if stamped != 1 {
		t.Errorf("found %d posts by the engineer, want 1", stamped)
	}
	if _, err := h.svc.InspectTurn(t.Context(), eng, id); err != nil {
		t.Errorf("engineer inspects its own turn: %v", err)
	}
	if _, err := h.svc.InspectTurn(t.Context(), lead, id); bullpen.ErrorCode(err) != bullpen.EFORBIDDEN {
		t.Errorf("lead inspects engineer's turn: %v, want EFORBIDDEN", err)
	}
	if _, err := h.svc.InspectTurn(t.Context(), h.admin, id+1000); bullpen.ErrorCode(err) != bullpen.ENOTFOUND {
		t.Errorf("unknown turn: %v, want ENOTFOUND", err)
	}
}

func TestTurnCost(t *testing.T) {
	turn := bullpen.Turn{Model: "gpt-4o-mini-2024-07-18", InputTokens: 2_000_000, CachedInputTokens: 1_000_000, OutputTokens: 1_000_000}
	c := turnCost(turn, false)
	// 1M plain × 0.15 + 1M cached × 0.075 + 1M out × 0.60
	if c == nil || c.Price.Model != "gpt-4o-mini" || c.USD < 0.8249 || c.USD > 0.8251 {
		t.Errorf("turnCost(gpt-4o-mini) = %+v, want 0.825 USD at the gpt-4o-mini price", c)
	}
	if c := turnCost(bullpen.Turn{Model: "openrouter/anthropic/claude-sonnet-4-5", InputTokens: 1_000_000}, false); c == nil || c.Price.Model != "claude-sonnet-4" {
		t.Errorf("turnCost(routed claude-sonnet-4-5) = %+v, want the claude-sonnet-4 price", c)
	}
	for _, m := range []string{"llama3.1:8b", "", "scripted"} {
		if c := turnCost(bullpen.Turn{Model: m, InputTokens: 10}, false); c != nil {
			t.Errorf("turnCost(%q) = %+v, want nil (unknown price)", m, c)
		}
	}
	if c := turnCost(turn, true); c != nil {
		t.Errorf("simulated turn cost = %+v, want nil", c)
	}
}

// promptOf reads the prefix and packet out of each wire format.
func TestPromptOfFormats(t *testing.T) {
	for _, tc := range []struct {
		name, body, system, packet string
		ok                         bool
	}{
		{"openai strings", `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"P"},{"role":"user","content":"later"}]}`, "S", "P", true},
		{"openai blocks", `{"messages":[{"role":"developer","content":[{"type":"text","text":"A"},{"type":"text","text":"B"}]},{"role":"user","content":[{"type":"text","text":"P"}]}]}`, "A\n\nB", "P", true},
		{"anthropic", `{"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"P"}]}`, "S", "P", true},
		{"no user message", `{"messages":[{"role":"system","content":"S"}]}`, "S", "", false},
		{"responses items", `{"instructions":"I","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"D"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"P"}]},{"type":"function_call_output","call_id":"c","output":"x"}]}`, "I\n\nD", "P", true},
		{"responses string", `{"instructions":"I","input":"P"}`, "I", "P", true},
		{"not JSON", `data: {}`, "", "", false},
	} {
		sys, users, ok := promptOf(bullpen.ModelCall{Request: tc.body})
		packet := ""
		if ok {
			packet = users[0]
		}
		if sys != tc.system || packet != tc.packet || ok != tc.ok {
			t.Errorf("%s: promptOf = %q, %q, %v; want %q, %q, %v", tc.name, sys, packet, ok, tc.system, tc.packet, tc.ok)
		}
	}
}
