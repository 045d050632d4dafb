package agents

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// mcpCallID is the model-side call id recorded for a call that came
// through the MCP endpoint: MCP carries no id of the client model's call.
const mcpCallID = "mcp"

// CallTool runs a registered tool for member, who was authenticated by
// its own token, exactly as the built-in loop runs a model's call: the
// same tool events (with turnID when there is one), the same allow-list,
// the same approvals. turnID is the turn a per-turn token belongs to, or
// 0 for an ordinary agent token (an agent CLI outside Bullpen).
//
// It returns the text the caller's model reads. A refused call, a failed
// tool, or a call that needs approval outside a turn returns an error
// whose bullpen.ErrorMessage is written for the model.
//
// A call in a turn whose ctx names it (WithCallID: the client model's own
// call id) goes through the turn's journal as a built-in call does: the
// same call again returns the recorded outcome without running, and a
// sandbox command a crash interrupted is reported, never run again. A
// call without an id, or outside a turn, runs each time it is made.
func (s *Service) CallTool(ctx context.Context, member bullpen.Member, turnID int64, name string, args json.RawMessage) (string, error) {
	e, err := s.callEnv(ctx, member, turnID)
	if err != nil {
		return "", err
	}
	if turnID == 0 {
		defer s.setStatus(member.ID, bullpen.AgentStatus{State: bullpen.StatusIdle})
	}
	c, key := llm.ToolCall{ID: mcpCallID, Name: name, Arguments: args}, mcpCallID
	if id := callIDOf(ctx); id != "" && turnID != 0 {
		if err := s.openCallJournal(ctx, e); err != nil {
			return "", err
		}
		c.ID, key = id, "x"+id
	}
	def, refused := s.tools.Allowed(e.role.Tools, name)
	if refused == nil && turnID == 0 && s.needsApproval(e, def, c) != "" {
		return "", bullpen.Errorf(bullpen.EFORBIDDEN, "tool %q needs a human's approval, which works only within a Bullpen turn; this token belongs to none", name)
	}
	out, failed := s.call(ctx, e, key, c)
	if !failed {
		return out, nil
	}
	code := bullpen.EINVALID
	if refused != nil {
		code = bullpen.EFORBIDDEN
	}
	return "", bullpen.Errorf(code, "%s", strings.TrimPrefix(out, "error: "))
}

// callEnv is the turn a call belongs to, as the built-in loop would have
// it: the agent's role, and for a turn its channel, reply thread and
// deadline. An agent that is fired or muted has no tools to call.
func (s *Service) callEnv(ctx context.Context, member bullpen.Member, turnID int64) (*turnEnv, error) {
	ag, err := s.db.Agent(ctx, member.ID)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) || (err == nil && (ag.State != bullpen.AgentActive || member.Muted)) {
		return nil, bullpen.Errorf(bullpen.EFORBIDDEN, "@%s is not an active agent: it has no tools", member.Handle)
	}
	if err != nil {
		return nil, err
	}
	e := &turnEnv{s: s, agent: member, simulated: s.cfg.Simulation, started: s.cfg.Now(),
		log: s.log.With("agent", member.Handle, "via", "mcp")}
	if e.role, err = decodeRole(ag.Spec); err != nil {
		return nil, err
	}
	e.aud = []int64{member.ID} // no channel: only the agent (and admins) see its calls
	if turnID == 0 {
		return e, nil
	}
	return e, s.joinTurn(ctx, e, turnID)
}

// joinTurn fills e with a running turn of e's agent.
func (s *Service) joinTurn(ctx context.Context, e *turnEnv, turnID int64) error {
	turn, err := s.db.Turn(ctx, turnID)
	if err != nil {
		return err
	}
	if turn.AgentID != e.agent.ID {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "turn %d is not @%s's", turnID, e.agent.Handle)
	}
	if turn.State != bullpen.TurnRunning {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "turn %d has ended (%s): its tools are closed", turnID, turn.State)
	}
	e.turn = turn
	e.log = e.log.With("turn", turn.ID)
	if e.channel, err = s.db.Channel(ctx, turn.ChannelID); err != nil {
		return err
	}
	e.aud = audience(e.channel)
	wakes, err := s.db.Wakes(ctx, turn.ID)
	if err != nil {
		return err
	}
	triggers, err := s.triggers(ctx, wakes)
	if err != nil {
		return err
	}
	e.thread = replyThread(e.channel, triggers)
	e.timeouts = e.role.Timeouts.Or(s.cfg.Timeouts).Or(builtinTimeouts)
	e.deadline = turn.StartedAt.Add(time.Duration(e.timeouts.Turn))
	return nil
}

type callIDKey struct{}

// maxCallID bounds a client's call id: it becomes a journal key.
const maxCallID = 200

// WithCallID returns ctx naming the client model's id of a tool call (for
// CallTool's journal); an empty or oversized id names none.
func WithCallID(ctx context.Context, id string) context.Context {
	if id == "" || len(id) > maxCallID {
		return ctx
	}
	return context.WithValue(ctx, callIDKey{}, id)
}

func callIDOf(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// openCallJournal loads the journal of e's turn, shared with every run of
// the turn. A turn with no wakes has none; its calls run unjournaled.
func (s *Service) openCallJournal(ctx context.Context, e *turnEnv) error {
	wakes, err := s.db.Wakes(ctx, e.turn.ID)
	if err != nil || len(wakes) == 0 {
		return err
	}
	anchor := anchorOf(wakes)
	steps, err := s.db.Steps(ctx, anchor)
	if err != nil {
		return err
	}
	e.j = &journal{anchor: anchor, turnID: e.turn.ID, steps: steps}
	return nil
}
