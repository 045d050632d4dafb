package agents

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// outageResult is what a call the database refused returns over MCP; the
// built-in loop stops instead (outage.go).
const outageResult = "error: the office's database is not answering; nothing was done. Try again in a few seconds."

// toolTimeout bounds one tool call (a sandbox command has its own).
const toolTimeout = 11 * time.Minute

// turnWrites is how a tool call writes as its turn does: retried through
// a database outage, notices posted once; *Service provides it.
type turnWrites interface {
	retryWrite(ctx context.Context, e *turnEnv, what string, write func() error) error
	noticeOnce(ctx context.Context, e *turnEnv, key, text string)
}

// toolCalls runs a turn's tool calls under the journal: each call's
// started and finished records and events, its approval when the role or
// the tool asks for one, and the approved calls a later turn runs. An
// office effect commits with its record through Call.Write (effect.go);
// an effect outside the database is journaled as started before it runs.
type toolCalls struct {
	tools *Registry
	db    interface {
		Transact(ctx context.Context, fn func(callTx) error) error
	}
	status *statuses
	now    func() time.Time
	writes turnWrites
	// afterTool, when set (tests), runs after a tool's effect and before
	// its outcome is recorded: where a crash is worst.
	afterTool func(ctx context.Context, key string)
}

// callTx is what a tool call writes in one transaction around its run:
// its row and events, its journal steps, an approval request and the
// approved call's result; *store.Tx provides it. The tool's own effect
// commits in its backend's transaction (Call.Write).
type callTx interface {
	eventWriter
	StepTx
	stepNoter
	CreateToolCall(c bullpen.ToolCall) (bullpen.ToolCall, error)
	FinishToolCall(c bullpen.ToolCall) error
	CreateApproval(a bullpen.Approval) (bullpen.Approval, error)
	SetApprovalResult(id int64, result string) error
}

// call runs one tool call the model made and returns its result for the
// model. Tools outside the role's allow-list are refused; sensitive ones
// become approval requests. key names the call in the turn's journal: a
// call an earlier run of the turn finished returns its recorded outcome,
// and a sandbox command it left running is reported as interrupted.
func (tc *toolCalls) call(ctx context.Context, e *turnEnv, key string, c llm.ToolCall) (string, bool) {
	var o toolOutcome
	if e.j.get(key, &o) {
		e.replayed(c.Name, o)
		return o.Out, o.State == "error"
	}
	def, refused := tc.tools.Allowed(e.role.Tools, c.Name)
	args := c.Arguments
	if !json.Valid(args) {
		args = json.RawMessage(`{}`)
	}
	interrupted := e.j.has("s" + key)
	reason := tc.needsApproval(e, def, c)
	runsNow := def != nil && def.Effect == EffectOutside && !interrupted && reason == ""
	rec, err := tc.toolStarted(ctx, e, c, args, key, runsNow)
	if e.cut(err) {
		return outageResult, true // the turn runs again when the database answers
	}
	if err != nil {
		return "internal error recording the call", true
	}
	var (
		out   string
		state = "ok"
	)
	e.callKey = key
	switch {
	case refused != nil:
		err = refused
	case interrupted:
		state, out = "error", interruptedExec
	case reason != "":
		out, err = tc.requestApproval(ctx, e, c.Name, args, reason)
		state = "approval"
	default:
		tc.status.setStatus(e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusTool, Tool: c.Name, TurnID: e.turn.ID})
		tctx, cancel := context.WithDeadline(ctx, earliest(tc.now().Add(toolTimeout), e.deadline))
		out, err = tc.run(tctx, e, def, args)
		cancel()
		if err == nil && c.Name == bullpen.ToolPostMessage {
			e.posted++
		}
	}
	e.callKey = ""
	if tc.afterTool != nil {
		tc.afterTool(ctx, key)
	}
	if e.cut(err) {
		// The tool's write did not happen (or happened whole with its
		// journal row): the re-run of the turn calls it again or replays it.
		return outageResult, true
	}
	if err != nil {
		state, out = "error", "error: "+bullpen.ErrorMessage(err)
		if bullpen.ErrorCode(err) == bullpen.EINTERNAL && ctx.Err() == nil {
			e.log.Error("agents: tool failed", "tool", c.Name, "err", err)
		}
	}
	rec.State, rec.Result = state, clip(out, 4000)
	rec.DurationMS = tc.now().Sub(rec.StartedAt).Milliseconds()
	tc.toolFinished(ctx, e, rec, key, toolOutcome{Out: out, State: state})
	return out, state == "error"
}

// replayed restores what a recorded tool call did to the turn's state.
func (e *turnEnv) replayed(tool string, o toolOutcome) {
	switch {
	case o.State == "approval":
		e.asked = true
	case o.State == "ok" && tool == bullpen.ToolPostMessage:
		e.posted++
	}
}

func earliest(a, b time.Time) time.Time {
	if b.IsZero() || a.Before(b) {
		return a
	}
	return b
}

func (tc *toolCalls) needsApproval(e *turnEnv, def *Tool, c llm.ToolCall) string {
	if def == nil {
		return ""
	}
	if slices.Contains(e.role.Approvals, c.Name) {
		return "the role requires approval for " + c.Name
	}
	if def.Approval != nil {
		return def.Approval(e.newCall(def, c.Arguments))
	}
	return ""
}

// run runs a tool's handler as the turn's agent. An office tool that
// finishes without its outcome recorded in its write's transaction broke
// the effect rule (effect.go): its effect may happen again after a
// crash, and the log says so.
func (tc *toolCalls) run(ctx context.Context, e *turnEnv, def *Tool, args json.RawMessage) (string, error) {
	c := e.newCall(def, args)
	out, err := def.Run(ctx, c)
	if why := c.unrecorded(err); why != "" {
		e.log.Error("agents: an office tool broke the effect rule", "tool", def.Name, "why", why)
	}
	return out, err
}

// newCall is a call of def in this turn, made as the turn's agent. Inside
// a journaled call (callKey set) an office tool's Write records the
// call's outcome in its write's transaction.
func (e *turnEnv) newCall(def *Tool, args json.RawMessage) *Call {
	c := &Call{Member: e.agent, Role: e.role, Channel: e.channel, Thread: e.thread, Simulated: e.simulated, TurnID: e.turn.ID, Args: args,
		tool: def.Name, effect: def.Effect}
	if rec := e.recorder(); rec != nil && def.Effect == EffectOffice {
		c.record = func(tx StepTx, out string) error { return rec(tx, toolOutcome{Out: out, State: "ok"}) }
	}
	return c
}

// toolStarted records a call as running; mark also journals it as started
// (sandbox commands), so that a crash before it finishes is known.
func (tc *toolCalls) toolStarted(ctx context.Context, e *turnEnv, c llm.ToolCall, args json.RawMessage, key string, mark bool) (bullpen.ToolCall, error) {
	var rec bullpen.ToolCall
	err := tc.writes.retryWrite(ctx, e, "tool started", func() error {
		return tc.db.Transact(ctx, func(tx callTx) error { return tc.toolStartedTx(tx, e, c, args, key, mark, &rec) })
	})
	rec.StartedAt = tc.now()
	return rec, err
}

// toolStartedTx is toolStarted's transaction; rec gets the stored call.
func (tc *toolCalls) toolStartedTx(tx callTx, e *turnEnv, c llm.ToolCall, args json.RawMessage, key string, mark bool, rec *bullpen.ToolCall) error {
	if mark {
		if err := e.j.note(tx, "s"+key, struct{}{}); err != nil {
			return err
		}
	}
	*rec = bullpen.ToolCall{TurnID: e.turn.ID, AgentID: e.agent.ID, CallID: c.ID, Name: c.Name, Arguments: clip(string(args), 8000)}
	if e.turn.ID != 0 { // a call outside any turn (MCP, ordinary token) has no turn to list it under
		var err error
		if *rec, err = tx.CreateToolCall(*rec); err != nil {
			return err
		}
	}
	_, err := tx.Emit(bullpen.EventToolStarted, e.channel.ID, e.aud, bullpen.ToolEvent{TurnID: e.turn.ID, AgentID: e.agent.ID,
		Handle: e.agent.Handle, CallID: rec.ID, Tool: c.Name, Arguments: clipJSON(args, 2000)})
	return err
}

// toolFinished records a call's outcome with its event and journal entry
// (a no-op for effects, which journaled it in their own transaction).
func (tc *toolCalls) toolFinished(ctx context.Context, e *turnEnv, rec bullpen.ToolCall, key string, o toolOutcome) {
	err := tc.writes.retryWrite(ctx, e, "tool finished", func() error { return tc.toolFinishedTx(ctx, e, rec, key, o) })
	if err != nil && ctx.Err() == nil && !e.cut(err) {
		e.log.Error("agents: record tool call", "tool", rec.Name, "err", err)
	}
	tc.status.setStatus(e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusThinking, TurnID: e.turn.ID})
}

// toolFinishedTx is toolFinished's transaction.
func (tc *toolCalls) toolFinishedTx(ctx context.Context, e *turnEnv, rec bullpen.ToolCall, key string, o toolOutcome) error {
	return tc.db.Transact(ctx, func(tx callTx) error {
		if rec.ID != 0 {
			if err := tx.FinishToolCall(rec); err != nil {
				return err
			}
		}
		if err := e.j.note(tx, key, o); err != nil {
			return err
		}
		_, err := tx.Emit(bullpen.EventToolFinished, e.channel.ID, e.aud, bullpen.ToolEvent{TurnID: e.turn.ID, AgentID: e.agent.ID,
			Handle: e.agent.Handle, CallID: rec.ID, Tool: rec.Name, State: rec.State, Result: clip(rec.Result, 500), DurationMS: rec.DurationMS})
		return err
	})
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

// runtimeToken names the token the runtime mints for each agent.
const runtimeToken = "agent runtime"
