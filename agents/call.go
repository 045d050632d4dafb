package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// toolTimeout bounds one tool call (a sandbox command has its own).
const toolTimeout = 11 * time.Minute

// call runs one tool call the model made and returns its result for the
// model. Tools outside the role's allow-list are refused; sensitive ones
// become approval requests.
func (s *Service) call(ctx context.Context, e *turnEnv, c llm.ToolCall) (string, bool) {
	def := e.tools[c.Name]
	args := c.Arguments
	if !json.Valid(args) {
		args = json.RawMessage(`{}`)
	}
	rec, err := s.toolStarted(ctx, e, c, args)
	if err != nil {
		return "internal error recording the call", true
	}
	var (
		out   string
		state = "ok"
	)
	switch reason := s.needsApproval(e, def, c); {
	case def == nil:
		err = bullpen.Errorf(bullpen.EFORBIDDEN, "tool %q is not available to you; use one of the tools you were given", c.Name)
	case reason != "":
		out, err = s.requestApproval(ctx, e, c.Name, args, reason)
		state = "approval"
	default:
		s.setStatus(e.agent.ID, Status{State: StatusTool, Tool: c.Name, TurnID: e.turn.ID})
		tctx, cancel := context.WithTimeout(ctx, toolTimeout)
		out, err = def.run(tctx, e, args)
		cancel()
	}
	if err != nil {
		state, out = "error", "error: "+bullpen.ErrorMessage(err)
		if bullpen.ErrorCode(err) == bullpen.EINTERNAL && ctx.Err() == nil {
			s.log.Error("agents: tool failed", "tool", c.Name, "agent", e.agent.Handle, "err", err)
		}
	}
	rec.State, rec.Result = state, clip(out, 4000)
	rec.DurationMS = s.cfg.Now().Sub(rec.StartedAt).Milliseconds()
	s.toolFinished(ctx, e, rec)
	return out, state == "error"
}

func (s *Service) needsApproval(e *turnEnv, def *toolDef, c llm.ToolCall) string {
	if def == nil {
		return ""
	}
	if slices.Contains(e.role.Approvals, c.Name) {
		return "the role requires approval for " + c.Name
	}
	if def.sensitive != nil {
		return def.sensitive(e, c.Arguments)
	}
	return ""
}

func (s *Service) toolStarted(ctx context.Context, e *turnEnv, c llm.ToolCall, args json.RawMessage) (store.ToolCall, error) {
	var rec store.ToolCall
	_, err := s.db.Write(ctx, func(tx *store.Tx) error {
		var err error
		rec, err = tx.CreateToolCall(store.ToolCall{TurnID: e.turn.ID, AgentID: e.agent.ID, CallID: c.ID, Name: c.Name, Arguments: clip(string(args), 8000)})
		if err != nil {
			return err
		}
		_, err = tx.Emit(EventToolStarted, e.channel.ID, e.aud, toolPayload{TurnID: e.turn.ID, AgentID: e.agent.ID,
			Handle: e.agent.Handle, CallID: rec.ID, Tool: c.Name, Arguments: clipJSON(args, 2000)})
		return err
	})
	rec.StartedAt = s.cfg.Now()
	return rec, err
}

func (s *Service) toolFinished(ctx context.Context, e *turnEnv, rec store.ToolCall) {
	_, err := s.db.Write(ctx, func(tx *store.Tx) error {
		if err := tx.FinishToolCall(rec); err != nil {
			return err
		}
		_, err := tx.Emit(EventToolFinished, e.channel.ID, e.aud, toolPayload{TurnID: e.turn.ID, AgentID: e.agent.ID,
			Handle: e.agent.Handle, CallID: rec.ID, Tool: rec.Name, State: rec.State, Result: clip(rec.Result, 500), DurationMS: rec.DurationMS})
		return err
	})
	if err != nil && ctx.Err() == nil {
		s.log.Error("agents: record tool call", "err", err)
	}
	s.setStatus(e.agent.ID, Status{State: StatusThinking, TurnID: e.turn.ID})
}

// clipJSON keeps arguments that are small enough as JSON, and replaces
// larger ones with a clipped string.
func clipJSON(raw json.RawMessage, n int) json.RawMessage {
	if len(raw) <= n {
		return raw
	}
	b, _ := json.Marshal(clip(string(raw), n))
	return b
}

// authenticate resolves the agent through its own credential: a token the
// runtime holds in memory only, minted on first use. Whatever the agent
// does in the office, it does as that member and no other.
func (s *Service) authenticate(ctx context.Context, agent bullpen.Member) (bullpen.Member, error) {
	s.mu.Lock()
	secret := s.creds[agent.ID]
	s.mu.Unlock()
	if secret == "" {
		_, err := s.db.Write(ctx, func(tx *store.Tx) error { return tx.RevokeTokensNamed(agent.ID, s.runtimeTokenName()) })
		if err != nil {
			return agent, err
		}
		if secret, _, err = s.off.CreateToken(ctx, agent, 0, s.runtimeTokenName()); err != nil {
			return agent, fmt.Errorf("agents: credential for @%s: %w", agent.Handle, err)
		}
		s.mu.Lock()
		s.creds[agent.ID] = secret
		s.mu.Unlock()
	}
	m, err := s.off.Authenticate(ctx, secret)
	if err != nil {
		s.mu.Lock()
		delete(s.creds, agent.ID)
		s.mu.Unlock()
		return agent, fmt.Errorf("agents: @%s's credential: %w", agent.Handle, err)
	}
	if m.ID != agent.ID || m.Kind != bullpen.KindAgent {
		return agent, bullpen.Errorf(bullpen.EFORBIDDEN, "credential does not belong to agent @%s", agent.Handle)
	}
	return m, nil
}

// runtimeToken names the token the runtime mints for each agent.
const runtimeToken = "agent runtime"
