package agents

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// milestone matches one event of the scenario.
type milestone struct {
	what  string
	match func(ev bullpen.Event, p map[string]any) bool
}

func posted(author, contains string) milestone {
	return milestone{"message by @" + author + " with " + contains, func(ev bullpen.Event, p map[string]any) bool {
		a, _ := p["author"].(map[string]any)
		return ev.Type == bullpen.EventMessagePosted && a["handle"] == author && strings.Contains(fmt.Sprint(p["body"]), contains)
	}}
}

func agentEvent(typ, handle, tool string) milestone {
	return milestone{typ + " @" + handle + " " + tool, func(ev bullpen.Event, p map[string]any) bool {
		return ev.Type == typ && p["handle"] == handle && (tool == "" || p["tool"] == tool)
	}}
}

// checkOrder fails unless the milestones occur in order among evs.
func checkOrder(t *testing.T, evs []bullpen.Event, ms []milestone) {
	t.Helper()
	i := 0
	for _, ev := range evs {
		if i == len(ms) {
			break
		}
		var p map[string]any
		json.Unmarshal(ev.Payload, &p)
		if ms[i].match(ev, p) {
			i++
		}
	}
	if i < len(ms) {
		var seen []string
		for _, ev := range evs {
			seen = append(seen, fmt.Sprintf("%d %s %s", ev.Seq, ev.Type, clip(string(ev.Payload), 160)))
		}
		t.Fatalf("milestone %d (%s) not found in order; events:\n%s", i, ms[i].what, strings.Join(seen, "\n"))
	}
}

// scenarioMilestones is the scenario: a human asks @lead; lead
// @mentions engineer; engineer runs a command in its sandbox and writes a
// wiki page; lead replies to the human.
func scenarioMilestones() []milestone {
	return []milestone{
		posted("admin", "@lead"),
		agentEvent(bullpen.EventWakeQueued, "lead", ""),
		agentEvent(bullpen.EventTurnStarted, "lead", ""),
		agentEvent(bullpen.EventToolStarted, "lead", bullpen.ToolPostMessage),
		posted("lead", "@engineer"),
		agentEvent(bullpen.EventWakeQueued, "engineer", ""),
		agentEvent(bullpen.EventTurnStarted, "engineer", ""),
		agentEvent(bullpen.EventToolStarted, "engineer", bullpen.ToolSandboxExec),
		agentEvent(bullpen.EventToolFinished, "engineer", bullpen.ToolSandboxExec),
		agentEvent(bullpen.EventToolStarted, "engineer", bullpen.ToolWikiWrite),
		agentEvent(bullpen.EventToolFinished, "engineer", bullpen.ToolWikiWrite),
		posted("engineer", "@lead"),
		agentEvent(bullpen.EventWakeQueued, "lead", ""),
		agentEvent(bullpen.EventTurnStarted, "lead", ""),
		posted("lead", "@admin"),
		agentEvent(bullpen.EventTurnFinished, "lead", ""),
	}
}

func runScenario(t *testing.T, h *harness) {
	t.Helper()
	h.hire("starter/lead")
	h.hire("starter/engineer")
	h.start()
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@lead please check that our build machine works")
	h.waitIdle()
	evs := h.events(since)
	checkOrder(t, evs, scenarioMilestones())
	counts := map[string]int{}
	for _, ev := range evs {
		counts[ev.Type]++
	}
	if counts[bullpen.EventTurnStarted] != 3 || counts[bullpen.EventTurnFinished] != 3 || counts[bullpen.EventTurnFailed] != 0 || counts[bullpen.EventLimitReached] != 0 {
		t.Errorf("event counts = %v, want 3 turns started and finished, none failed or limited", counts)
	}
	if got := h.messages(since); len(got) != 4 {
		t.Errorf("messages = %q, want 4 (ask, hand-off, report, answer)", got)
	}
	if len(h.wiki.pages) != 1 {
		t.Errorf("wiki has %d pages, want 1", len(h.wiki.pages))
	}
	for title, by := range h.wiki.by {
		if by != "engineer" {
			t.Errorf("wiki page %q written by @%s, want @engineer", title, by)
		}
	}
	if len(h.box.execs) != 1 || !strings.HasPrefix(h.box.execs[0], "engineer: ") {
		t.Errorf("sandbox execs = %q, want one by @engineer", h.box.execs)
	}
}

func TestScenarioScripted(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			prov := scripted.New(DemoScript)
			h := newHarness(t, d, map[string]llm.Provider{"scripted": prov}, nil)
			runScenario(t, h)
			turns, err := h.svc.Turns(t.Context(), h.admin, mustHandle(t, h, "engineer").ID, 10)
			if err != nil || len(turns) != 1 || len(turns[0].ToolCalls) != 3 || turns[0].InputTokens == 0 {
				t.Errorf("engineer turns = %+v, %v; want 1 turn with 3 tool calls and usage", turns, err)
			}
		})
	}
}

func mustHandle(t *testing.T, h *harness, handle string) bullpen.Member {
	t.Helper()
	m, err := h.db.MemberByHandle(t.Context(), handle)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
