package agents

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

func toolNamesOf(ts []*Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// A role that allows the sandbox and wiki tools gets them through
// ToolsFor and CallTool (the MCP endpoint's door); one that does not is
// refused them, and nothing runs.
func TestCallToolSandboxAllowList(t *testing.T) {
	h := newHarness(t, store.SQLite, nil, nil)
	defer h.close()
	ctx := context.Background()
	eng, pm := h.hire("starter/engineer"), h.hire("starter/pm")
	engTools, err := h.svc.ToolsFor(ctx, eng)
	if err != nil {
		t.Fatal(err)
	}
	// Every tool but memory's, which a role opts into (the starter packs
	// keep their prompt prefix, and the harness has no memory backend).
	notMemory := slices.DeleteFunc(slices.Clone(ToolNames), func(n string) bool { return strings.HasPrefix(n, "memory_") })
	if got := toolNamesOf(engTools); !slices.Equal(got, notMemory) {
		t.Errorf("engineer's tools = %v, want every tool but memory's %v", got, notMemory)
	}
	pmTools, _ := h.svc.ToolsFor(ctx, pm)
	if got := toolNamesOf(pmTools); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "sandbox_") }) {
		t.Errorf("pm's tools = %v, want no sandbox tools", got)
	}

	since := h.off.Hub().Last()
	out, err := h.svc.CallTool(ctx, eng, 0, bullpen.ToolSandboxExec, json.RawMessage(`{"command":"echo hi"}`))
	if err != nil || !slices.Contains(h.box.execs, "engineer: echo hi") {
		t.Fatalf("engineer's sandbox_exec = %q, %v; ran %q", out, err, h.box.execs)
	}
	if _, err := h.svc.CallTool(ctx, pm, 0, bullpen.ToolSandboxExec, json.RawMessage(`{"command":"rm -rf /"}`)); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
		t.Errorf("pm's sandbox_exec = %v, want EFORBIDDEN", err)
	}
	if len(h.box.execs) != 1 {
		t.Errorf("sandbox ran %q, want only the engineer's command", h.box.execs)
	}
	// Outside a turn the events have no turn and no call record, and only
	// the caller (and admins) see them.
	var kinds []string
	for _, ev := range h.events(since) {
		te, err := bullpen.ToolOf(ev)
		if err != nil {
			continue
		}
		kinds = append(kinds, te.Handle+" "+ev.Type+" "+te.Tool+" "+te.State)
		if te.TurnID != 0 || te.CallID != 0 || !slices.Equal(ev.Audience, []int64{te.AgentID}) {
			t.Errorf("%s: turn %d call %d audience %v; want 0, 0, [%d]", ev.Type, te.TurnID, te.CallID, ev.Audience, te.AgentID)
		}
	}
	want := []string{"engineer agent.tool_started sandbox_exec ", "engineer agent.tool_finished sandbox_exec ok",
		"pm agent.tool_started sandbox_exec ", "pm agent.tool_finished sandbox_exec error"}
	if !slices.Equal(kinds, want) {
		t.Errorf("tool events = %q, want %q", kinds, want)
	}
}

// A fired agent, and a member that is no agent, have no tools to call.
func TestCallToolNeedsAnActiveAgent(t *testing.T) {
	h := newHarness(t, store.SQLite, nil, nil)
	defer h.close()
	ctx := context.Background()
	eng := h.hire("starter/engineer")
	if _, err := h.svc.CallTool(ctx, h.admin, 0, bullpen.ToolListMembers, nil); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
		t.Errorf("a human's CallTool = %v, want EFORBIDDEN", err)
	}
	if _, err := h.svc.Fire(ctx, h.admin, eng.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.CallTool(ctx, eng, 0, bullpen.ToolListMembers, nil); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
		t.Errorf("a fired agent's CallTool = %v, want EFORBIDDEN", err)
	}
	if _, err := h.svc.CallTool(ctx, eng, 999, bullpen.ToolListMembers, nil); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
		t.Errorf("a fired agent's CallTool in a turn = %v, want EFORBIDDEN", err)
	}
}
