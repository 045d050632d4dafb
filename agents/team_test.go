package agents

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

var (
	taskIDRE  = regexp.MustCompile(`#(\d+) \[`)
	changesRE = regexp.MustCompile(`changes requested on task (\d+)`)
)

// teamWork is what each worker does in its sandbox or on the wiki.
var teamWork = map[string]llm.ToolCall{
	"engineer": call(bullpen.ToolSandboxExec, map[string]any{"command": "make test"}),
	"designer": call(bullpen.ToolWikiWrite, map[string]any{"title": "Login design", "body": "A form with a button."}),
	"pm":       call(bullpen.ToolWikiWrite, map[string]any{"title": "Login spec", "body": "Users log in with a token."}),
}

// teamScript is the scripted model of the team test: the lead splits a
// human's request into three assigned sub-tasks; each worker lists its
// tasks, claims its own, works and submits; a worker asked for changes
// fixes and resubmits.
func teamScript(req llm.Request) (llm.Response, error) {
	v := ViewOf(req)
	me := submatch(meRE, v.System)
	var results []string
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			results = append(results, m.Content)
		}
	}
	step := func(calls ...llm.ToolCall) (llm.Response, error) { return llm.Response{ToolCalls: calls}, nil }
	switch {
	case me == "lead" && v.Steps == 0 && strings.Contains(v.Packet, "feature"):
		sub := func(title, owner string) map[string]any {
			return map[string]any{"title": title, "owner": owner, "review": "human"}
		}
		return step(call(bullpen.ToolTaskCreate, map[string]any{"title": "Login feature", "subtasks": []any{
			sub("Build the login API", "engineer"), sub("Design the login form", "designer"), sub("Write the login spec", "pm")}}))
	case me == "lead" && v.Steps == 1:
		return step(call(bullpen.ToolPostMessage, map[string]any{"body": "Split into three tasks, one each for the engineer, the designer and the pm."}))
	case changesRE.MatchString(v.Packet) && teamWork[me].Name != "":
		id, _ := strconv.Atoi(submatch(changesRE, v.Packet))
		switch v.Steps {
		case 0:
			fix := call(bullpen.ToolWikiWrite, map[string]any{"title": "Login design v2", "body": "A form with a bigger button."})
			return step(fix)
		case 1:
			return step(call(bullpen.ToolTaskSubmit, map[string]any{"task_id": id, "note": "fixed"}))
		}
	case strings.Contains(v.Packet, "Assigned to @"+me) && teamWork[me].Name != "":
		id := 0
		for _, r := range results {
			if m := taskIDRE.FindStringSubmatch(r); m != nil {
				id, _ = strconv.Atoi(m[1])
				break
			}
		}
		switch v.Steps {
		case 0:
			return step(call(bullpen.ToolTaskList, map[string]any{"filter": "mine"}))
		case 1:
			return step(call(bullpen.ToolTaskClaim, map[string]any{"task_id": id}))
		case 2:
			return step(teamWork[me])
		case 3:
			return step(call(bullpen.ToolTaskSubmit, map[string]any{"task_id": id, "note": "done: " + me}))
		}
	}
	if v.Steps == 0 {
		return llm.Response{Text: "Noted."}, nil
	}
	return llm.Response{}, nil
}

// A scripted team, end to end: a human asks @lead for a feature; the lead
// splits it into three sub-tasks assigned to @engineer, @designer and
// @pm; each claims its task, works in its sandbox or on the wiki and
// submits; the human approves two and requests changes on one, whose
// owner fixes and resubmits; once it is approved the parent closes.
func TestScriptedTeamTasks(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			h := newHarness(t, d, map[string]llm.Provider{"scripted": scripted.New(teamScript)}, nil)
			for _, r := range []string{"starter/lead", "starter/engineer", "starter/designer", "starter/pm"} {
				h.hire(r)
			}
			h.start()
			ctx := context.Background()
			h.post(h.admin, h.general.ID, 0, "@lead please build the login feature")
			h.waitIdle()
			parent, subs := teamTasks(t, h)
			if len(subs) != 3 || parent.WhenSubtasksDone != bullpen.SubtasksDoneClose {
				t.Fatalf("parent %+v with %d sub-tasks, want 3", parent, len(subs))
			}
			for owner, sub := range subs {
				if sub.State != bullpen.TaskInReview || sub.Tokens.Turns == 0 || sub.Tokens.Input == 0 {
					t.Errorf("@%s's task = %+v, want in_review with its turns' tokens", owner, sub)
				}
			}
			if len(h.box.execs) != 1 || !strings.HasPrefix(h.box.execs[0], "engineer: ") || len(h.wiki.pages) != 2 {
				t.Errorf("work done: execs %q, wiki pages %d; want one exec by @engineer, two pages", h.box.execs, len(h.wiki.pages))
			}
			// Each submission asked a person for review through the
			// approval mechanism (the dashboard's panel, Telegram's
			// buttons). Answer two there, one through the task's own door.
			asked := h.pendingReviews(t)
			if len(asked) != 3 {
				t.Fatalf("pending review approvals = %v, want one per sub-task", asked)
			}
			h.answer(asked[subs["engineer"].ID], true, "")
			h.review(subs["pm"].ID, true, "")
			h.answer(asked[subs["designer"].ID], false, "make the button bigger")
			if a, _ := h.db.Approval(ctx, asked[subs["pm"].ID]); a.State != bullpen.ApprovalApproved {
				t.Errorf("pm's approval after the task's review = %s, want approved", a.State)
			}
			h.waitIdle()
			if got, _ := h.db.Task(ctx, subs["designer"].ID); got.State != bullpen.TaskInReview || h.wiki.by["Login design v2"] != "designer" {
				t.Fatalf("designer's task after changes = %s (fix by %q), want resubmitted", got.State, h.wiki.by["Login design v2"])
			}
			if got, _ := h.db.Task(ctx, parent.ID); got.State != bullpen.TaskOpen {
				t.Errorf("parent before the last approval = %s, want open", got.State)
			}
			again := h.pendingReviews(t)
			if len(again) != 1 || again[subs["designer"].ID] == 0 {
				t.Fatalf("pending review approvals after the resubmission = %v, want the designer's", again)
			}
			h.answer(again[subs["designer"].ID], true, "")
			if got, _ := h.db.Task(ctx, parent.ID); got.State != bullpen.TaskDone {
				t.Errorf("parent after every sub-task is approved = %s, want done", got.State)
			}
			var types []string
			for _, ev := range h.events(0) {
				if strings.HasPrefix(ev.Type, "task.") {
					types = append(types, ev.Type)
				}
			}
			for _, want := range []string{bullpen.EventTaskCreated, bullpen.EventTaskClaimed, bullpen.EventTaskSubmitted, bullpen.EventTaskReviewed} {
				if !slices.Contains(types, want) {
					t.Errorf("task events %v lack %s", types, want)
				}
			}
		})
	}
}

// teamTasks returns the parent task and its sub-tasks by owner handle.
func teamTasks(t *testing.T, h *harness) (bullpen.Task, map[string]bullpen.Task) {
	t.Helper()
	ctx := context.Background()
	all, err := h.db.Tasks(ctx, bullpen.TaskFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var parent bullpen.Task
	subs := map[string]bullpen.Task{}
	handles := h.svc.dir.handles(ctx)
	for _, task := range all {
		if task.ParentID == 0 {
			parent = task
		} else {
			subs[handles[task.OwnerID]] = task
		}
	}
	return parent, subs
}

// review answers a submission as the admin.
func (h *harness) review(id int64, approve bool, note string) {
	h.tb.Helper()
	if _, err := h.tasks.Review(context.Background(), h.admin, id, approve, note); err != nil {
		h.tb.Fatalf("review task %d: %v", id, err)
	}
}

// pendingReviews maps each task waiting on a review approval to it.
func (h *harness) pendingReviews(t *testing.T) map[int64]int64 {
	t.Helper()
	as, err := h.db.Approvals(context.Background(), bullpen.ApprovalPending, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]int64{}
	for _, a := range as {
		var args struct {
			TaskID int64 `json:"task_id"`
		}
		if a.Tool != bullpen.ApprovalTaskReview || json.Unmarshal([]byte(a.Arguments), &args) != nil {
			t.Errorf("pending approval %+v is not a task review", a)
		}
		out[args.TaskID] = a.ID
	}
	return out
}

// answer answers an approval as the admin, as the approvals panel does.
func (h *harness) answer(id int64, approve bool, note string) {
	h.tb.Helper()
	if _, err := h.svc.Answer(context.Background(), h.admin, id, approve, note); err != nil {
		h.tb.Fatalf("answer approval %d: %v", id, err)
	}
}
