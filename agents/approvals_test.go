package agents

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
)

// A sensitive call becomes an approval; the turn ends; only a human can
// answer; the answer wakes the agent, which gets the approved call's result.
func TestApprovalFlow(t *testing.T) {
	var packets []string
	prov := scripted.New(func(req llm.Request) (llm.Response, error) {
		v := ViewOf(req)
		if v.Steps > 0 {
			return llm.Response{}, nil
		}
		packets = append(packets, v.Packet)
		if strings.Contains(v.Packet, "Approval #") {
			return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolPostMessage, map[string]any{"body": "fetched it"})}}, nil
		}
		return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolSandboxExec, map[string]any{"command": "curl https://example.com"})}}, nil
	})
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": prov}, nil)
	role, _ := h.svc.Catalog().Role("starter/engineer")
	role.Sandbox.Network = bullpen.NetworkOpen
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role})
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	h.post(h.admin, h.general.ID, 0, "@engineer fetch example.com")
	h.waitIdle()
	if len(h.box.execs) != 0 {
		t.Fatalf("the sensitive command ran before approval: %q", h.box.execs)
	}
	pending, err := h.svc.Approvals(context.Background(), h.admin, bullpen.ApprovalPending)
	if err != nil || len(pending) != 1 || pending[0].Tool != bullpen.ToolSandboxExec {
		t.Fatalf("pending approvals = %+v, %v; want one for sandbox_exec", pending, err)
	}
	id := pending[0].ID
	if _, err := h.svc.Answer(context.Background(), hired.Agent.Member, id, true, ""); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
		t.Errorf("agent answers its own approval: err = %v, want forbidden", err)
	}
	if _, err := h.svc.Answer(context.Background(), h.admin, id, true, "ok once"); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	if _, err := h.svc.Answer(context.Background(), h.admin, id, false, ""); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Errorf("second answer: err = %v, want conflict", err)
	}
	h.waitIdle()
	if len(h.box.execs) != 1 {
		t.Errorf("after approval, execs = %q, want the approved command once", h.box.execs)
	}
	last := packets[len(packets)-1]
	if !strings.Contains(last, "was approved by @admin") || !strings.Contains(last, "example.com") {
		t.Errorf("resumed turn's packet lacks the answer and result:\n%s", last)
	}
	types := map[string]int{}
	for _, ev := range h.events(0) {
		types[ev.Type]++
	}
	if types[bullpen.EventApprovalRequested] != 1 || types[bullpen.EventApprovalAnswered] != 1 {
		t.Errorf("approval events = %v", types)
	}
}

// Budgets stop turns with a visible event and message: steps per turn,
// tokens per day, turns per hour.
func TestBudgets(t *testing.T) {
	loop := scripted.New(func(req llm.Request) (llm.Response, error) {
		return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolListMembers, map[string]any{})}}, nil
	})
	tests := []struct {
		name    string
		budgets bullpen.Budgets
		posts   int
		limit   string
	}{
		{"steps", bullpen.Budgets{MaxSteps: 3}, 1, bullpen.LimitSteps},
		{"turn tokens", bullpen.Budgets{MaxTurnTokens: 1000}, 1, bullpen.LimitTurnTokens},
		{"daily tokens", bullpen.Budgets{MaxSteps: 2, DailyTokens: 1000}, 2, bullpen.LimitDailyTokens},
		{"rate", bullpen.Budgets{MaxSteps: 1, TurnsPerHour: 1}, 2, bullpen.LimitRate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": loop}, nil)
			role, _ := h.svc.Catalog().Role("starter/pm")
			role.Budgets = tt.budgets
			if _, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role}); err != nil {
				t.Fatal(err)
			}
			h.start()
			since := h.off.Hub().Last()
			for i := 0; i < tt.posts; i++ {
				h.post(h.admin, h.general.ID, 0, "@pm go")
				h.waitIdle()
			}
			var found bool
			for _, ev := range h.events(since) {
				found = found || (ev.Type == bullpen.EventLimitReached && strings.Contains(string(ev.Payload), `"limit":"`+tt.limit+`"`))
			}
			notice := false
			for _, m := range h.messages(since) {
				notice = notice || strings.HasPrefix(m, "@pm: ⚠️")
			}
			if !found || !notice {
				t.Errorf("limit %s: event %v, notice %v; messages %q", tt.limit, found, notice, h.messages(since))
			}
		})
	}
}

// A tool outside the role's allow-list is refused, and unknown arguments
// (an author, say) are rejected: an agent can only post as itself.
func TestToolAllowListAndIdentity(t *testing.T) {
	var results []string
	prov := scripted.New(func(req llm.Request) (llm.Response, error) {
		v := ViewOf(req)
		switch v.Steps {
		case 0:
			return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolSandboxExec, map[string]any{"command": "id"})}}, nil
		case 1:
			results = append(results, v.Last)
			return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolPostMessage, map[string]any{"body": "hi", "author": "admin"})}}, nil
		case 2:
			results = append(results, v.Last)
			return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolPostMessage, map[string]any{"body": "as myself"})}}, nil
		}
		for _, tl := range req.Tools {
			if strings.HasPrefix(tl.Name, "sandbox_") {
				results = append(results, "offered "+tl.Name)
			}
		}
		return llm.Response{}, nil
	})
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": prov}, nil)
	h.hire("starter/pm") // no sandbox tools
	h.start()
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@pm hi")
	h.waitIdle()
	if len(results) != 2 || !strings.Contains(results[0], "not available to you") || !strings.Contains(results[1], "unknown field") {
		t.Errorf("tool results = %q, want a refusal and an unknown-field error", results)
	}
	msgs := h.messages(since)
	if len(msgs) != 2 || msgs[1] != "@pm: as myself" {
		t.Errorf("messages = %q, want the question and one post by @pm", msgs)
	}
	if len(h.box.execs) != 0 {
		t.Errorf("a disallowed tool ran: %q", h.box.execs)
	}
}
