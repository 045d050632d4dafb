package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
)

// InspectTurn returns everything recorded of a turn for the inspector.
// A human may inspect any turn in a channel they can see (an admin any);
// an agent only its own turns. ENOTFOUND for an unknown turn, EFORBIDDEN
// for one the actor may not see.
func (s inspector) InspectTurn(ctx context.Context, actor bullpen.Member, id int64) (view.TurnDetail, error) {
	t, err := s.db.Turn(ctx, id)
	if err != nil {
		return view.TurnDetail{}, err
	}
	if err := s.canInspect(ctx, actor, t); err != nil {
		return view.TurnDetail{}, err
	}
	d := view.TurnDetail{Turn: t, URL: TurnURL(id), InspectURL: TurnPage(id)}
	if d.Agent, err = s.db.Member(ctx, t.AgentID); err != nil {
		return d, err
	}
	if d.Turn.ToolCalls, err = s.db.ToolCalls(ctx, id); err != nil {
		return d, err
	}
	if d.ModelCalls, err = s.db.ModelCalls(ctx, id); err != nil {
		return d, err
	}
	if d.Memory, err = s.db.MemoryRecalls(ctx, id); err != nil {
		return d, err
	}
	if d.Wakes, err = s.turnWakes(ctx, id); err != nil {
		return d, err
	}
	if err := s.turnPrompt(ctx, &d); err != nil {
		return d, err
	}
	d.Simulated = t.Provider == "scripted"
	for _, c := range d.ModelCalls {
		d.Simulated = d.Simulated || c.Simulated
	}
	d.Cost = turnCost(t, d.Simulated)
	d.Budgets, err = s.budgetsLeft(ctx, t)
	return d, err
}

// TurnURL is a turn's address in the API; TurnPage its inspector page.
func TurnURL(id int64) string { return fmt.Sprintf("/api/v1/turns/%d", id) }

// TurnPage is the dashboard address of a turn's inspector.
func TurnPage(id int64) string { return fmt.Sprintf("/turns/%d", id) }

// canInspect applies the inspector's access rule: an agent sees its own
// turns; a human the turns of channels they can see, as the turn list.
func (s inspector) canInspect(ctx context.Context, actor bullpen.Member, t bullpen.Turn) error {
	if actor.Kind != bullpen.KindHuman {
		if actor.ID == t.AgentID {
			return nil
		}
		return bullpen.Errorf(bullpen.EFORBIDDEN, "an agent may inspect only its own turns")
	}
	c, err := s.db.Channel(ctx, t.ChannelID)
	if err != nil {
		return err
	}
	if c.Kind == bullpen.ChannelDM && !actor.IsAdmin && !containsID(c.MemberIDs, actor.ID) {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "turn %d is in a direct conversation you are not part of", t.ID)
	}
	return nil
}

// turnWakes lists a turn's wakes with their trigger messages.
func (s inspector) turnWakes(ctx context.Context, turnID int64) ([]view.TurnWake, error) {
	ws, err := s.db.Wakes(ctx, turnID)
	if err != nil {
		return nil, err
	}
	out := make([]view.TurnWake, 0, len(ws))
	for _, w := range ws {
		tw := view.TurnWake{ID: w.ID, Reason: w.Reason, MessageID: w.MessageID, ApprovalID: w.ApprovalID}
		if w.MessageID != 0 {
			if tw.Message, err = s.wakeMessage(ctx, w.MessageID); err != nil {
				return nil, err
			}
		}
		out = append(out, tw)
	}
	return out, nil
}

// wakeMessage loads a trigger message with its author and channel; a
// deleted one keeps no text.
func (s inspector) wakeMessage(ctx context.Context, id int64) (*view.WakeMessage, error) {
	m, err := s.db.Message(ctx, id)
	if err != nil {
		return nil, err
	}
	author, err := s.db.Member(ctx, m.AuthorID)
	if err != nil {
		return nil, err
	}
	ch, err := s.db.Channel(ctx, m.ChannelID)
	if err != nil {
		return nil, err
	}
	wm := &view.WakeMessage{ID: m.ID, ChannelID: m.ChannelID, Channel: ch.Name, ThreadID: m.ThreadID, Author: author.Handle,
		Body: m.Body, Deleted: m.Deleted}
	if m.Deleted {
		wm.Body = ""
	}
	return wm, nil
}

// budgetsLeft reads the role's budgets as they stand: this turn's use of
// the per-turn ones, and today's (UTC) use of the daily token budget.
func (s inspector) budgetsLeft(ctx context.Context, t bullpen.Turn) (view.TurnBudgets, error) {
	ag, err := s.db.Agent(ctx, t.AgentID)
	if err != nil {
		return view.TurnBudgets{}, err
	}
	role, err := decodeRole(ag.Spec)
	if err != nil {
		return view.TurnBudgets{}, err
	}
	day, err := s.db.UsageSince(ctx, t.AgentID, s.now().UTC().Truncate(24*time.Hour))
	if err != nil {
		return view.TurnBudgets{}, err
	}
	b := role.Budgets
	return view.TurnBudgets{
		Steps:       view.NewBudgetLeft(b.MaxSteps, t.Steps),
		TurnTokens:  view.NewBudgetLeft(b.MaxTurnTokens, t.InputTokens+t.OutputTokens),
		DailyTokens: view.NewBudgetLeft(b.DailyTokens, int(day.Tokens)),
	}, nil
}
