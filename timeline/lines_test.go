package timeline_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/timeline"
)

// notProduced are kinds this scenario cannot make happen: it runs no
// task service, so the task and routine kinds' lines are checked on
// their payloads by the root's TestTaskAndRoutineLines.
var notProduced = map[string]bool{
	bullpen.EventTaskCreated: true, bullpen.EventTaskUpdated: true, bullpen.EventTaskClaimed: true, bullpen.EventTaskReleased: true,
	bullpen.EventTaskHandedOff: true, bullpen.EventTaskSubmitted: true, bullpen.EventTaskReviewed: true, bullpen.EventTaskTurn: true,
	bullpen.EventRoutineCreated: true, bullpen.EventRoutineUpdated: true, bullpen.EventRoutineDeleted: true,
	bullpen.EventRoutineFired: true, bullpen.EventRoutineSkipped: true,
}

// TestLinesOfRealEvents runs the office through a scenario that emits
// every stored event kind (people, channels, messages, the wiki, agents'
// turns, tools, budgets and approvals, sandboxes and their commands), then
// checks the line and link of each event against a table. The events are
// the ones the services wrote, read back from the database.
func TestLinesOfRealEvents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ids := runScenario(t, f)
	page, err := f.db.EventPage(ctx, store.EventViewer{Admin: true}, bullpen.EventFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := f.names()
	lines := timeline.Lines{}
	byKind := map[string][]bullpen.EventLine{}
	for _, ev := range page.Items {
		l := lines.Line(ev, n)
		if strings.Contains(l.Text, "unreadable") || l.Text == "" {
			t.Errorf("event %d %s: line %q", ev.Seq, ev.Type, l.Text)
		}
		byKind[ev.Type] = append(byKind[ev.Type], l)
	}
	for _, k := range lines.Kinds() {
		if len(byKind[k]) == 0 && !notProduced[k] {
			t.Errorf("the scenario produced no %s event", k)
		}
	}
	for _, c := range expectedLines(ids) {
		if !anyMatch(byKind[c.kind], c.text, c.link) {
			t.Errorf("%s: no line matches %q → %q; lines:\n%s", c.kind, c.text, c.link, dump(byKind[c.kind]))
		}
	}
}

type scenarioIDs struct {
	ask, approvalAsk, loopAsk int64 // message ids
	sandboxID                 string
}

func runScenario(t *testing.T, f *fixture) scenarioIDs {
	ctx := context.Background()
	var ids scenarioIDs
	hire := func(role string) bullpen.AgentView {
		h, err := f.agents.Hire(ctx, f.admin, bullpen.HireInput{Role: role})
		if err != nil {
			t.Fatalf("Hire(%s): %v", role, err)
		}
		return h.Agent
	}
	eng, pm := hire("starter/engineer"), hire("starter/pm")

	// A mention: a real command, a new wiki page, an answer that mentions
	// @pm, whom the hop budget (1) then stops.
	f.script(call(bullpen.ToolSandboxExec, map[string]string{"command": "df -h"}),
		call(bullpen.ToolWikiWrite, map[string]any{"title": "Launch plan", "body": "one\ntwo\n"}),
		scripted.Step{Text: "Disk is fine. @pm fyi"})
	ids.ask = f.post(f.admin, f.general.ID, 0, "@engineer please check the disk").ID
	f.waitIdle()

	// A model that fails.
	f.script(scripted.Step{Err: fmt.Errorf("model exploded")})
	f.post(f.admin, f.general.ID, ids.ask, "@engineer again please")
	f.waitIdle()

	// A command that needs approval (open network), denied.
	open := bullpen.SandboxSpec{Image: "host", Network: bullpen.NetworkOpen}
	if _, err := f.agents.Update(ctx, f.admin, eng.ID, bullpen.AgentUpdate{Sandbox: &open}); err != nil {
		t.Fatalf("Update sandbox: %v", err)
	}
	// The call waits for a human, which ends the turn; the answer wakes a new one.
	f.script(call(bullpen.ToolSandboxExec, map[string]string{"command": "curl example.com"}),
		scripted.Step{Text: "Understood, no network."})
	ids.approvalAsk = f.post(f.admin, f.general.ID, 0, "@engineer fetch the page").ID
	f.waitIdle()
	answerApprovals(t, f)
	f.waitIdle()

	// A turn stopped by its step budget.
	if _, err := f.agents.Update(ctx, f.admin, eng.ID, bullpen.AgentUpdate{Budgets: &bullpen.Budgets{MaxSteps: 1}}); err != nil {
		t.Fatalf("Update budgets: %v", err)
	}
	f.script(call(bullpen.ToolListMembers, map[string]string{}), call(bullpen.ToolListMembers, map[string]string{}))
	ids.loopAsk = f.post(f.admin, f.general.ID, 0, "@engineer loop forever").ID
	f.waitIdle()

	officeChanges(t, f)
	ids.sandboxID = pauseWorkspace(t, f, eng.ID)
	on := true
	if _, err := f.boxes.UpdateSettings(ctx, f.admin, bullpen.SandboxSettingsInput{PullOnCreate: &on}); err != nil {
		t.Fatalf("UpdateSettings: %v", err)
	}
	if _, err := f.agents.Fire(ctx, f.admin, pm.ID); err != nil {
		t.Fatalf("Fire: %v", err)
	}
	f.waitIdle()
	abandonTurn(t, f)
	return ids
}

// abandonTurn holds a turn in its model call while a second agents
// service starts on the database, as after a crash: it takes the turn
// over as abandoned and runs its wake again.
func abandonTurn(t *testing.T, f *fixture) {
	ctx := context.Background()
	f.mu.Lock()
	f.steps = nil // the step-limited turn left its second step unused
	f.mu.Unlock()
	f.script(scripted.Step{Text: holdText}, scripted.Step{Text: "Picked up again."})
	f.post(f.admin, f.general.ID, 0, "@engineer one more thing")
	waitEvent(t, f, bullpen.EventTurnStarted, 1)
	second, err := agents.New(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, f, bullpen.EventTurnAbandoned, 1)
	close(f.hold)
	second.Close()
}

// waitEvent waits until n events of the type after the scenario so far
// are stored.
func waitEvent(t *testing.T, f *fixture, typ string, n int) {
	t.Helper()
	since := f.off.Hub().Last()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p, err := f.db.EventPage(context.Background(), store.EventViewer{Admin: true}, bullpen.EventFilter{After: since - 5, Limit: 1000, Kinds: []string{typ}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s event within 30 s", typ)
}

func answerApprovals(t *testing.T, f *fixture) {
	ctx := context.Background()
	pending, err := f.agents.Approvals(ctx, f.admin, bullpen.ApprovalPending)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending approvals = %v, %v; want 1", pending, err)
	}
	if _, err := f.agents.Answer(ctx, f.admin, pending[0].ID, false, "no network today"); err != nil {
		t.Fatalf("Answer: %v", err)
	}
}

// officeChanges makes the office core's and the wiki's events.
func officeChanges(t *testing.T, f *fixture) {
	ctx := context.Background()
	must := func(what string, err error) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mallory, err := f.off.CreateMember(ctx, f.admin, bullpen.MemberInput{Handle: "mallory", DisplayName: "Ada Lovelace", Kind: bullpen.KindHuman})
	must("CreateMember", err)
	muted := true
	_, err = f.off.UpdateMember(ctx, f.admin, mallory.ID, bullpen.MemberUpdate{Muted: &muted})
	must("UpdateMember", err)
	launch, err := f.off.CreateChannel(ctx, f.admin, bullpen.ChannelInput{Name: "launch"})
	must("CreateChannel", err)
	_, err = f.off.JoinChannel(ctx, mallory, launch.ID)
	must("JoinChannel", err)
	_, err = f.off.LeaveChannel(ctx, mallory, launch.ID)
	must("LeaveChannel", err)
	m := f.post(f.admin, launch.ID, 0, "draft")
	_, err = f.off.Edit(ctx, f.admin, m.ID, "final")
	must("Edit", err)
	_, err = f.off.Delete(ctx, f.admin, m.ID)
	must("Delete", err)
	p, err := f.wiki.Page(ctx, f.admin, "launch-plan", false)
	must("Page", err)
	_, err = f.wiki.Save(ctx, f.admin, bullpen.WikiSaveInput{Slug: p.Slug, Title: p.Title, Body: "one\nthree\nfour\n", BaseRevision: p.Revision})
	must("Save", err)
	_, err = f.wiki.Delete(ctx, f.admin, p.Slug)
	must("wiki Delete", err)
	_, err = f.wiki.Undelete(ctx, f.admin, p.Slug)
	must("Undelete", err)
}

func pauseWorkspace(t *testing.T, f *fixture, owner int64) string {
	ctx := context.Background()
	list, err := f.boxes.List(ctx, f.admin, nil)
	if err != nil || len(list) == 0 {
		t.Fatalf("sandboxes = %v, %v; want the engineer's workspace", list, err)
	}
	id := list[0].ID
	if err := f.boxes.Pause(ctx, f.admin, id); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if err := f.boxes.Resume(ctx, f.admin, id); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	return id
}

type want struct{ kind, text, link string }

// expectedLines is the table: a regexp for the line and one for the link
// of at least one event of each kind.
func expectedLines(ids scenarioIDs) []want {
	thread := func(id int64) string { return fmt.Sprintf(`^/c/general#thread-%d$`, id) }
	sb := regexp.QuoteMeta(ids.sandboxID)
	return []want{
		{bullpen.EventMessagePosted, `^@admin posted in #general: “@engineer please check the disk”$`, thread(ids.ask)},
		{bullpen.EventMessagePosted, `^@engineer replied in #general: “(simulation — )?Disk is fine\. @pm fyi”$`, thread(ids.ask)},
		{bullpen.EventMessageEdited, `^@admin edited a message in #launch$`, `^/c/launch#thread-\d+$`},
		{bullpen.EventMessageDeleted, `^@admin deleted a message in #launch$`, `^/c/launch#thread-\d+$`},
		{bullpen.EventChannelCreated, `^@admin created #launch$`, `^/c/launch$`},
		{bullpen.EventChannelJoined, `^@mallory joined #launch$`, `^/c/launch$`},
		{bullpen.EventChannelLeft, `^@mallory left #launch$`, `^/c/launch$`},
		{bullpen.EventMemberCreated, `^Ada Lovelace \(@mallory\), human, joined the office$`, `^$`},
		{bullpen.EventMemberUpdated, `^@mallory was muted$`, `^$`},
		{bullpen.EventWikiPageSaved, `^@engineer created \[\[Launch plan\]\] \(\+2 −0\)$`, `^#wiki/launch-plan$`},
		{bullpen.EventWikiPageSaved, `^@admin edited \[\[Launch plan\]\] \(\+2 −1\)$`, `^#wiki-diff/launch-plan/2$`},
		{bullpen.EventWikiPageDeleted, `^@admin deleted \[\[Launch plan\]\]$`, `^#wiki/launch-plan$`},
		{bullpen.EventWikiPageUndeleted, `^@admin restored \[\[Launch plan\]\]$`, `^#wiki/launch-plan$`},
		{bullpen.EventAgentHired, `^@engineer was hired as Engineer \(role starter/engineer\)$`, `^$`},
		{bullpen.EventAgentUpdated, `^@engineer's role was updated$`, `^$`},
		{bullpen.EventAgentFired, `^@pm was let go$`, `^$`},
		{bullpen.EventWakeQueued, `^@engineer was woken \(mentioned in #general\)$`, thread(ids.ask)},
		{bullpen.EventWakeQueued, `^@engineer was woken \(an approval answered in #general\)$`, `^$`},
		{bullpen.EventTurnStarted, `^@engineer started a turn \(mentioned in #general\)$`, `^/turns/\d+$`},
		{bullpen.EventTurnFinished, `^@engineer finished a turn in [\d.]+ m?s \(3 steps, \d+ tokens\)$`, `^/turns/\d+$`},
		{bullpen.EventTurnFailed, `^@engineer's turn failed: .+$`, `^/turns/\d+$`},
		{bullpen.EventTurnAbandoned, `^@engineer's turn was abandoned: the worker stopped mid-turn; its wakes are queued again$`, `^/turns/\d+$`},
		{bullpen.EventToolStarted, "^@engineer started running `df -h` in its sandbox$", `^/turns/\d+$`},
		{bullpen.EventToolStarted, `^@engineer started looking up the team$`, `^/turns/\d+$`},
		{bullpen.EventToolFinished, `^@engineer called sandbox_exec → ok in [\d.]+ m?s$`, `^/turns/\d+$`},
		{bullpen.EventLimitReached, fmt.Sprintf(`^@pm stopped: hop budget \(1\) reached in thread %d$`, ids.ask), thread(ids.ask)},
		{bullpen.EventLimitReached, `^@engineer stopped: step limit reached in #general$`, `^/turns/\d+$`},
		{bullpen.EventApprovalRequested, `^@engineer asks approval for sandbox_exec in #general: .*network.*$`, `^/turns/\d+$`},
		{bullpen.EventApprovalAnswered, `^@admin denied @engineer's sandbox_exec$`, `^/turns/\d+$`},
		{"sandbox.created", `^@engineer's sandbox \S+ was created$`, `^#sandbox/` + sb + `$`},
		{"sandbox.state", `^@engineer's sandbox \S+ was paused$`, `^#sandbox/` + sb + `$`},
		{"sandbox.state", `^@engineer's sandbox \S+ resumed$`, `^#sandbox/` + sb + `$`},
		{"sandbox.exec_started", "^@engineer is running `df -h` in \\S+$", `^#sandbox/` + sb + `/exec/\S+$`},
		{"sandbox.exec_finished", "^@engineer ran `df -h` → exit 0 in [\\d.]+ m?s$", `^#sandbox/` + sb + `/exec/\S+$`},
		{bullpen.EventSandboxSettings, `^@admin turned on pulling unknown images when a sandbox is created$`, `^$`},
	}
}

func anyMatch(lines []bullpen.EventLine, text, link string) bool {
	tre, lre := regexp.MustCompile(text), regexp.MustCompile(link)
	for _, l := range lines {
		if tre.MatchString(l.Text) && lre.MatchString(l.Link) {
			return true
		}
	}
	return false
}

func dump(lines []bullpen.EventLine) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "  %q → %q\n", l.Text, l.Link)
	}
	return b.String()
}
