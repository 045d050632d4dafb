package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// The token budgets, one rule each, shared by the built-in loop
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
func (s *gatewayBudgets) dailyTokensSpent(ctx context.Context, agent bullpen.Member, b bullpen.Budgets) (string, bool, error) {
	day, err := s.db.UsageSince(ctx, agent.ID, s.now().UTC().Truncate(24*time.Hour))
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
