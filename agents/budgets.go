package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// The token budgets (per turn, per UTC day, per task), one rule each, shared by the built-in loop
// (overLimit, checkBudgets) and CLI turns through the model gateway
// (gatewayturns.go), so both stop at the same count with the same notice.

// turnTokensSpent reports whether a turn that used u has spent its
// per-turn token budget, and the notice saying so.
func turnTokensSpent(handle string, b bullpen.Budgets, u llm.Usage) (string, bool) {
	used := u.InputTokens + u.OutputTokens
	if used < b.MaxTurnTokens {
		return "", false
	}
	return fmt.Sprintf("@%s stopped: %d tokens used in one turn (limit %d).", handle, used, b.MaxTurnTokens), true
}

// dailyTokensSpent reports whether an agent has spent its daily token
// budget (the UTC day's turns, the running one included), and the notice.
func (s *Service) dailyTokensSpent(ctx context.Context, agent bullpen.Member, b bullpen.Budgets) (string, bool, error) {
	day, err := s.db.UsageSince(ctx, agent.ID, s.cfg.Now().UTC().Truncate(24*time.Hour))
	if err != nil {
		return "", false, err
	}
	if day.Tokens < int64(b.DailyTokens) {
		return "", false, nil
	}
	return fmt.Sprintf("@%s has used its daily token budget: %d of %d tokens today (UTC). It resumes tomorrow or when an admin raises budgets.daily_tokens.",
		agent.Handle, day.Tokens, b.DailyTokens), true, nil
}

// turnStopDetail is the notice of a CLI turn refused a model call by its
// per-turn budget: used counts the turn's tokens and its calls in flight,
// need the refused call's input.
func turnStopDetail(handle string, b bullpen.Budgets, used int64, need int) string {
	if used >= int64(b.MaxTurnTokens) {
		return fmt.Sprintf("@%s stopped: %d tokens used in one turn (limit %d).", handle, used, b.MaxTurnTokens)
	}
	return fmt.Sprintf("@%s stopped: %d tokens used in one turn (limit %d), and its next model call needs %d.", handle, used, b.MaxTurnTokens, need)
}

// dailyStopDetail is the notice of a CLI turn refused a model call by the
// agent's daily budget.
func dailyStopDetail(handle string, b bullpen.Budgets, used int64, need int) string {
	next := ""
	if used < int64(b.DailyTokens) {
		next = fmt.Sprintf(", and its next model call needs %d", need)
	}
	return fmt.Sprintf("@%s has used its daily token budget: %d of %d tokens today (UTC)%s. It resumes tomorrow or when an admin raises budgets.daily_tokens.",
		handle, used, b.DailyTokens, next)
}

// taskSpend is what a turn in a task's thread knows of the task's token
// budget (budgets.task_tokens): the task, and the tokens its finished
// turns used before this one started. Zero when the role sets no budget
// or the turn works no task.
type taskSpend struct {
	id    int64
	limit int
	prior int64
}

// taskSpend finds the task whose thread the turn works in, when the role
// bounds the tokens per task.
func (s *Service) taskSpend(ctx context.Context, e *turnEnv) (taskSpend, error) {
	limit := e.role.Budgets.TaskTokens
	if limit <= 0 || e.thread == 0 || s.cfg.Tasks == nil {
		return taskSpend{}, nil
	}
	t, err := s.db.TaskByThread(ctx, e.thread)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return taskSpend{}, nil
	}
	if err != nil {
		return taskSpend{}, fmt.Errorf("agents: task of thread %d: %w", e.thread, err)
	}
	return taskSpend{id: t.ID, limit: limit, prior: t.Tokens.Input + t.Tokens.Output}, nil
}

// spent reports whether the task has used its budget, this turn's usage u
// included.
func (t taskSpend) spent(u llm.Usage) bool {
	return t.id != 0 && t.prior+int64(u.InputTokens+u.OutputTokens) >= int64(t.limit)
}

// turnLimit is what the task's budget leaves this turn (its own calls
// count on its row), and whether that is less than limit, the turn's
// own.
func (t taskSpend) turnLimit(limit int) (int, bool) {
	if t.id == 0 {
		return limit, false
	}
	if left := int64(t.limit) - t.prior; left < int64(limit) {
		return int(max(left, 0)), true
	}
	return limit, false
}

// taskStopDetail is the notice of a turn stopped by its task's budget:
// used counts the task's tokens (this turn's and its calls in flight
// included), need the refused call's input (0: none was refused).
func taskStopDetail(handle string, b bullpen.Budgets, task, used int64, need int) string {
	next := ""
	if used < int64(b.TaskTokens) && need > 0 {
		next = fmt.Sprintf(", and its next model call needs %d", need)
	}
	return fmt.Sprintf("@%s stopped: task %d has used %d tokens (task budget %d)%s. An admin can raise budgets.task_tokens.",
		handle, task, used, b.TaskTokens, next)
}
