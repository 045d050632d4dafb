package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Approval is a sensitive tool call waiting for (or given) a human's answer.
type Approval = bullpen.Approval

// requestApproval stores an approval request for a sensitive call. The
// turn ends after this step; the answer wakes the agent again.
func (tc *toolCalls) requestApproval(ctx context.Context, e *turnEnv, tool string, args json.RawMessage, reason string) (string, error) {
	var a bullpen.Approval
	result := func() toolOutcome {
		return toolOutcome{State: "approval", Out: fmt.Sprintf("Approval #%d requested from a human (%s). Your turn ends now; you will be woken with the answer and, if approved, the call's result.", a.ID, reason)}
	}
	rec, key := e.recorder(), e.callKey
	err := tc.db.Transact(ctx, func(tx callTx) error {
		var err error
		a, err = tx.CreateApproval(bullpen.Approval{AgentID: e.agent.ID, TurnID: e.turn.ID, ChannelID: e.channel.ID,
			ThreadID: e.thread, Tool: tool, Arguments: string(args), Reason: reason})
		if err != nil {
			return err
		}
		if _, err = tx.Emit(bullpen.EventApprovalRequested, e.channel.ID, e.aud, bullpen.ApprovalEvent{Approval: a, Handle: e.agent.Handle}); err != nil || rec == nil {
			return err
		}
		return rec(tx, result()) // the request and its journal entry commit together
	})
	if err != nil {
		return "", err
	}
	e.asked = true
	tc.writes.noticeOnce(ctx, e, "n"+key, fmt.Sprintf("@%s asks for approval #%d: %s `%s` — %s. Approve or deny it with the buttons on this message.",
		e.agent.Handle, a.ID, tool, clip(strings.ReplaceAll(string(args), "`", "'"), 200), reason))
	return result().Out, nil
}

// Answer records a human's answer to an approval and wakes the agent, in
// one transaction. Only humans may answer; an answered approval is
// ECONFLICT.
func (s *desk) Answer(ctx context.Context, actor bullpen.Member, id int64, approve bool, note string) (Approval, error) {
	if actor.Kind != bullpen.KindHuman {
		return Approval{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only a human can answer an approval")
	}
	if len(note) > 1000 {
		return Approval{}, bullpen.Errorf(bullpen.EINVALID, "note is longer than 1000 characters")
	}
	prev, err := s.db.Approval(ctx, id)
	if err != nil {
		return prev, err
	}
	var c bullpen.Channel // none for an approval asked outside a channel
	if prev.ChannelID != 0 {
		if c, err = s.db.Channel(ctx, prev.ChannelID); err != nil {
			return prev, err
		}
	}
	if c.Kind == bullpen.ChannelDM && !actor.IsAdmin && !containsID(c.MemberIDs, actor.ID) {
		return prev, bullpen.Errorf(bullpen.ENOTFOUND, "approval %d not found", id)
	}
	state := bullpen.ApprovalDenied
	if approve {
		state = bullpen.ApprovalApproved
	}
	agent, err := s.db.Member(ctx, prev.AgentID)
	if err != nil {
		return prev, err
	}
	if prev.Tool == ToolCLINetwork && !actor.IsAdmin {
		// An agent's network policy is part of its role, which only
		// admins set: only they open a network to it.
		return prev, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can answer approval %d: it opens a network to @%s's agent CLI", id, agent.Handle)
	}
	var a Approval
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		if a, err = tx.AnswerApproval(id, state, actor.ID, note); err != nil {
			return err
		}
		if _, err := tx.Emit(bullpen.EventApprovalAnswered, a.ChannelID, audience(c), bullpen.ApprovalEvent{Approval: a, Handle: agent.Handle}); err != nil {
			return err
		}
		if a.Tool == ToolCLINetwork {
			return tx.AnswerNetwork(a.ID, state, actor.ID) // applies from the agent's next turn; nothing to wake for
		}
		if a.Tool == bullpen.ApprovalTaskReview && s.tasks != nil {
			return s.tasks.ReviewApproved(tx, actor, a) // requested changes wake the owner through its thread
		}
		ws, err := tx.CreateWakes([]bullpen.Wake{{AgentID: a.AgentID, ChannelID: a.ChannelID, ApprovalID: a.ID, Reason: bullpen.ReasonApproval}})
		for _, w := range ws {
			if _, err := tx.Emit(bullpen.EventWakeQueued, a.ChannelID, audience(c), bullpen.WakeQueued{WakeID: w.ID, AgentID: w.AgentID,
				Handle: agent.Handle, Reason: w.Reason}); err != nil {
				return err
			}
		}
		return err
	})
	if err != nil {
		return a, err
	}
	s.wake.poke(a.AgentID)
	return a, nil
}

// runApproved runs the approved calls among a turn's triggers, once: the
// result is stored on the approval and in the turn's journal, so a re-run
// after a crash reuses it, and a sandbox command a crash interrupted is
// reported so, not run again.
func (tc *toolCalls) runApproved(ctx context.Context, e *turnEnv, ts []trigger) error {
	for i := range ts {
		a := ts[i].approval
		if a == nil || a.State != bullpen.ApprovalApproved {
			continue
		}
		if a.Result != "" {
			ts[i].result = a.Result
			continue
		}
		key := fmt.Sprintf("a%d", a.ID)
		var o toolOutcome
		if !e.j.get(key, &o) {
			var err error
			if o, err = tc.runApprovedCall(ctx, e, key, a); err != nil {
				return err
			}
		}
		ts[i].result = o.Out
		res := clip(o.Out, 4000)
		if err := tc.db.Transact(ctx, func(tx callTx) error {
			if err := e.j.note(tx, key, o); err != nil {
				return err
			}
			return tx.SetApprovalResult(a.ID, res)
		}); err != nil {
			return err
		}
	}
	return nil
}

// runApprovedCall runs one approved call under its journal key.
func (tc *toolCalls) runApprovedCall(ctx context.Context, e *turnEnv, key string, a *Approval) (toolOutcome, error) {
	def := tc.tools.Lookup(a.Tool) // registered only when its backend is configured
	switch {
	case def == nil:
		return toolOutcome{Out: "error: tool " + a.Tool + " is not available", State: "error"}, nil
	case e.j.has("s" + key):
		return toolOutcome{Out: interruptedExec, State: "error"}, nil
	}
	if def.Effect == EffectOutside {
		if err := tc.db.Transact(ctx, func(tx callTx) error { return e.j.note(tx, "s"+key, struct{}{}) }); err != nil {
			return toolOutcome{}, err
		}
	}
	tc.status.setStatus(e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusTool, Tool: a.Tool, TurnID: e.turn.ID})
	e.callKey = key
	out, err := tc.run(ctx, e, def, json.RawMessage(a.Arguments))
	e.callKey = ""
	if err == nil && a.Tool == bullpen.ToolPostMessage {
		e.posted++
	}
	if ctx.Err() != nil {
		return toolOutcome{}, ctx.Err()
	}
	if err != nil {
		return toolOutcome{Out: "error: " + bullpen.ErrorMessage(err), State: "error"}, nil
	}
	return toolOutcome{Out: out, State: "ok"}, nil
}

// Approvals lists approvals in a state ("" for all) that actor may see.
func (s *desk) Approvals(ctx context.Context, actor bullpen.Member, state string) ([]Approval, error) {
	switch state {
	case "", bullpen.ApprovalPending, bullpen.ApprovalApproved, bullpen.ApprovalDenied:
	default:
		return nil, bullpen.Errorf(bullpen.EINVALID, "state must be pending, approved or denied")
	}
	all, err := s.db.Approvals(ctx, state, 200)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, a := range all {
		if a.ChannelID == 0 { // asked outside a channel: every member sees it
			out = append(out, a)
			continue
		}
		c, err := s.db.Channel(ctx, a.ChannelID)
		if err != nil {
			return nil, err
		}
		if c.Kind != bullpen.ChannelDM || actor.IsAdmin || containsID(c.MemberIDs, actor.ID) {
			out = append(out, a)
		}
	}
	return out, nil
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
