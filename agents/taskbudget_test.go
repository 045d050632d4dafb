package agents

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// hireTaskBudgeted hires a pm whose role bounds the tokens per task.
func (h *harness) hireTaskBudgeted(taskTokens int) bullpen.Member {
	h.tb.Helper()
	role, _ := h.svc.Catalog().Role("starter/pm")
	role.Budgets.TaskTokens, role.Budgets.MaxSteps = taskTokens, 20
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role})
	if err != nil {
		h.tb.Fatal(err)
	}
	return hired.Agent.Member
}

// newTask creates an unassigned task in #general as the admin.
func (h *harness) newTask(title string) bullpen.Task {
	h.tb.Helper()
	t, err := h.tasks.Create(context.Background(), h.admin, bullpen.TaskInput{Title: title, ChannelID: h.general.ID})
	if err != nil {
		h.tb.Fatal(err)
	}
	return t
}

// TestTaskTokenBudget: a role's budgets.task_tokens stops a built-in turn
// working a task once the task's tokens (its finished turns' and this
// turn's) reach it, with the limit event and the notice of the other
// budgets; the next turn in the task's thread stops before any model
// call; a turn outside the task works as usual.
func TestTaskTokenBudget(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			var calls atomic.Int64
			// Each call costs 600 tokens; in a task's thread the model
			// keeps calling tools (it would go on to the step limit).
			model := scripted.New(func(req llm.Request) (llm.Response, error) {
				calls.Add(1)
				u := llm.Usage{InputTokens: 500, OutputTokens: 100}
				if v := ViewOf(req); strings.Contains(v.Packet, "work on it") {
					return llm.Response{Usage: u, ToolCalls: []llm.ToolCall{call(bullpen.ToolTaskList, map[string]any{"filter": "mine"})}}, nil
				}
				return llm.Response{Usage: u, Text: "Noted."}, nil
			})
			h := newHarness(t, d, map[string]llm.Provider{"scripted": model}, nil)
			h.hireTaskBudgeted(1000)
			h.start()
			ctx := context.Background()
			task := h.newTask("Write the spec")

			since := h.off.Hub().Last()
			h.post(h.admin, h.general.ID, task.ThreadID, "@pm please work on it")
			h.waitIdle()
			want := fmt.Sprintf("@pm stopped: task %d has used 1200 tokens (task budget 1000). An admin can raise budgets.task_tokens.", task.ID)
			if n := calls.Load(); n != 2 {
				t.Errorf("model calls = %d, want 2 (600 tokens each against a task budget of 1000)", n)
			}
			if n := h.limitEvents(since, bullpen.LimitTaskTokens); n != 1 {
				t.Errorf("task budget limit events = %d, want 1", n)
			}
			if got := h.messages(since); !containsLine(got, "@pm: ⚠️ "+want) {
				t.Errorf("messages = %q, want the notice %q", got, want)
			}
			got, err := h.db.Task(ctx, task.ID)
			if err != nil || got.Tokens.Input+got.Tokens.Output != 1200 {
				t.Fatalf("task tokens = %+v, %v; want 1200", got.Tokens, err)
			}

			// The task's budget is spent: the next turn there stops at once.
			since = h.off.Hub().Last()
			h.post(h.admin, h.general.ID, task.ThreadID, "@pm work on it again")
			h.waitIdle()
			if n := calls.Load(); n != 2 {
				t.Errorf("model calls after the budget was spent = %d, want still 2", n)
			}
			if n := h.limitEvents(since, bullpen.LimitTaskTokens); n != 1 {
				t.Errorf("second turn's task budget limit events = %d, want 1", n)
			}

			// Outside the task, the agent works as usual.
			since = h.off.Hub().Last()
			h.post(h.admin, h.general.ID, 0, "@pm hello")
			h.waitIdle()
			if n := calls.Load(); n != 3 {
				t.Errorf("model calls after a mention outside the task = %d, want 3", n)
			}
			if n := h.limitEvents(since, bullpen.LimitTaskTokens); n != 0 {
				t.Errorf("task budget limit events outside the task = %d, want 0", n)
			}
		})
	}
}

// TestGatewayTaskTokenBudget: a CLI turn in a task's thread is held to
// the task's budget at the model gateway: a call's output is clamped to
// what the task has left, the call past it is refused with the task
// budget's notice, and the task's next turn gets no call at all.
func TestGatewayTaskTokenBudget(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			h := newHarness(t, d, nil, nil)
			ctx := context.Background()
			pm := h.hireTaskBudgeted(1000)
			task := h.newTask("Write the spec")
			cliTurn := func() *turnEnv {
				t.Helper()
				ag, err := h.db.Agent(ctx, pm.ID)
				if err != nil {
					t.Fatal(err)
				}
				role, err := decodeRole(ag.Spec)
				if err != nil {
					t.Fatal(err)
				}
				e := &turnEnv{s: h.svc, turn: h.claimTurn(pm), agent: pm, role: role, channel: h.general,
					aud: audience(h.general), thread: task.ThreadID, log: h.svc.log}
				if e.task, err = h.svc.taskSpend(ctx, e); err != nil {
					t.Fatal(err)
				}
				h.svc.attachGateway(e)
				return e
			}
			e := cliTurn()
			b, res, err := h.svc.Reserve(ctx, e.turn.ID, 100, 2000)
			if err != nil || b.Limit != "" || res.Output != 900 {
				t.Fatalf("first reservation = %+v %+v, %v; want 900 output tokens (the task's 1000 less the input)", b, res, err)
			}
			if err := h.svc.Settle(ctx, e.turn.ID, res, llm.Usage{InputTokens: 700, OutputTokens: 300}, true); err != nil {
				t.Fatal(err)
			}
			b, _, err = h.svc.Reserve(ctx, e.turn.ID, 100, 500)
			want := fmt.Sprintf("@pm stopped: task %d has used 1000 tokens (task budget 1000). An admin can raise budgets.task_tokens.", task.ID)
			if err != nil || b.Limit != bullpen.LimitTaskTokens || b.Detail != want {
				t.Fatalf("spent task budget = %+v, %v; want %s %q", b, err, bullpen.LimitTaskTokens, want)
			}
			since := h.off.Hub().Last()
			if err := h.svc.BudgetStopped(ctx, e.turn.ID, b); err != nil {
				t.Fatal(err)
			}
			if n := h.limitEvents(since, bullpen.LimitTaskTokens); n != 1 {
				t.Errorf("limit events = %d, want 1", n)
			}
			h.svc.fail(ctx, e, bullpen.Errorf(bullpen.EINVALID, "the CLI exited with status 1"))
			if got, _ := h.db.Task(ctx, task.ID); got.Tokens.Input+got.Tokens.Output != 1000 {
				t.Fatalf("task tokens after the CLI turn = %+v, want 1000", got.Tokens)
			}

			next := cliTurn()
			b, _, err = h.svc.Reserve(ctx, next.turn.ID, 10, 10)
			if err != nil || b.Limit != bullpen.LimitTaskTokens {
				t.Errorf("the task's next turn's first call = %+v, %v; want refused by %s", b, err, bullpen.LimitTaskTokens)
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}
