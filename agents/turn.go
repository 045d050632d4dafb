package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// turnEnv is one turn in progress.
type turnEnv struct {
	s         *Service // set by the MCP door (mcpcall.go); the runtime does not read it
	turn      bullpen.Turn
	agent     bullpen.Member // authenticated with the agent's own credential
	role      bullpen.Role
	channel   bullpen.Channel
	thread    int64 // where replies go by default
	aud       []int64
	tools     map[string]*Tool // offered to the role, by name
	provider  llm.Provider
	simulated bool
	usage     llm.Usage
	steps     int
	posted    int
	asked     bool // an approval was requested: the turn ends after this step
	started   time.Time
	deadline  time.Time        // the turn's own: model calls and tools stop there
	timeouts  bullpen.Timeouts // role's, then office's, then built-in
	kind      string           // the provider kind, for its share of model calls
	task      taskSpend        // the task the turn works on, when its role has a task budget
	j         *journal
	callKey   string                 // the journal key of the tool call running
	recalled  []bullpen.MemoryRecall // memory put in the work packet, recorded with it (notePacket)
	log       *slog.Logger           // carries the turn, agent, channel and anchor wake
	// lost is the outage that cut the turn off (outage.go): it writes
	// nothing more, and its worker re-drives its wakes. heldUp is how
	// long writes waited for the database.
	lost   error
	heldUp time.Duration
}

// runTurn runs a claimed turn to its end, logging through log (see
// turnLogger). When ctx ends (shutdown) it returns without finishing the
// turn, so a restart re-queues its wakes. It returns the turn's state:
// lost set means a database outage cut it off (outage.go).
func (s *turnLoop) runTurn(ctx context.Context, log *slog.Logger, turn bullpen.Turn, wakes []bullpen.Wake) *turnEnv {
	e := &turnEnv{turn: turn, started: s.cfg.Now(), log: log}
	defer s.setStatus(turn.AgentID, bullpen.AgentStatus{State: bullpen.StatusIdle})
	wakes, err := s.openJournal(ctx, e, wakes)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(ctx, e, err)
		}
		return e
	}
	triggers, err := s.prepare(ctx, e, wakes)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(ctx, e, err)
		}
		return e
	}
	switch {
	case triggers == nil: // prepare finished the turn (fired, limited, no provider)
	case isCLI(e.role):
		s.cliTurn(ctx, e, triggers)
	default:
		s.loop(ctx, e, triggers)
	}
	return e
}

// prepare authenticates the agent, checks its budgets and provider, and
// loads the triggers. A nil slice with a nil error means the turn is over.
func (s *turnLoop) prepare(ctx context.Context, e *turnEnv, wakes []bullpen.Wake) ([]trigger, error) {
	ag, err := s.db.Agent(ctx, e.turn.AgentID)
	if err != nil {
		return nil, err
	}
	member, err := s.db.Member(ctx, ag.MemberID)
	if err != nil {
		return nil, err
	}
	e.agent = member
	// The handle is known only once the member is loaded; from here on
	// every line of the turn names it.
	e.log = e.log.With("agent", member.Handle)
	if e.channel, err = s.db.Channel(ctx, e.turn.ChannelID); err != nil {
		return nil, err
	}
	e.aud = audience(e.channel)
	if ag.State != bullpen.AgentActive || member.Muted {
		return nil, s.finish(ctx, e, bullpen.TurnDone, bullpen.WakeDropped, "agent is fired or muted")
	}
	if e.role, err = decodeRole(ag.Spec); err != nil {
		return nil, err
	}
	e.timeouts = e.role.Timeouts.Or(s.cfg.Timeouts).Or(builtinTimeouts)
	e.deadline = e.started.Add(time.Duration(e.timeouts.Turn))
	if e.agent, err = s.creds.authenticate(ctx, member); err != nil {
		return nil, err
	}
	triggers, err := s.triggers(ctx, wakes)
	if err != nil {
		return nil, err
	}
	e.thread = replyThread(e.channel, triggers)
	if e.task, err = s.taskSpend(ctx, e); err != nil {
		return nil, err
	}
	if stop, err := s.checkBudgets(ctx, e); stop || err != nil {
		return nil, err
	}
	if ok, err := s.pickProvider(ctx, e); !ok || err != nil {
		if err != nil {
			return nil, err
		}
		return nil, s.finish(ctx, e, bullpen.TurnFailed, bullpen.WakeDone, "no model provider configured")
	}
	e.simulated = s.cfg.Simulation || e.provider.Name() == "scripted"
	e.tools, _ = s.toolsFor(e.role)
	s.warmSandbox(e)
	if err := s.startEvent(ctx, e, wakes); err != nil {
		return nil, err
	}
	if err := s.runApproved(ctx, e, triggers); err != nil {
		return nil, err
	}
	return triggers, nil
}

// triggers loads the messages and approvals behind a turn's wakes.
func (s *turnLoop) triggers(ctx context.Context, wakes []bullpen.Wake) ([]trigger, error) {
	out := make([]trigger, 0, len(wakes))
	for _, w := range wakes {
		t := trigger{wake: w}
		switch {
		case w.MessageID != 0:
			m, err := s.db.Message(ctx, w.MessageID)
			if err != nil {
				return nil, err
			}
			if m.Deleted {
				continue
			}
			t.msg = m
		case w.ApprovalID != 0:
			a, err := s.db.Approval(ctx, w.ApprovalID)
			if err != nil {
				return nil, err
			}
			t.approval = &a
		}
		out = append(out, t)
	}
	return out, nil
}

// replyThread is where the agent answers by default: the thread of the
// latest trigger; a top-level message of a public channel gets its reply
// in a new thread under it; DMs stay flat.
func replyThread(c bullpen.Channel, ts []trigger) int64 {
	if len(ts) == 0 {
		return 0
	}
	switch t := ts[len(ts)-1]; {
	case t.approval != nil:
		return t.approval.ThreadID
	case t.msg.ThreadID != 0:
		return t.msg.ThreadID
	case c.Kind == bullpen.ChannelDM:
		return 0
	default:
		return t.msg.ID
	}
}

func (s *turnLoop) startEvent(ctx context.Context, e *turnEnv, wakes []bullpen.Wake) error {
	p := bullpen.TurnEvent{TurnID: e.turn.ID, AgentID: e.agent.ID, Handle: e.agent.Handle, Provider: e.providerName(),
		Model: e.role.Model, Simulated: e.simulated, ThreadID: e.thread}
	for _, w := range wakes {
		p.Wakes = append(p.Wakes, w.ID)
		if w.MessageID != 0 {
			p.MessageIDs = append(p.MessageIDs, w.MessageID)
		}
		if !slices.Contains(p.Reasons, w.Reason) {
			p.Reasons = append(p.Reasons, w.Reason)
		}
	}
	err := s.retryWrite(ctx, e, "turn started", func() error {
		_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
			if !e.j.resumed {
				if err := e.j.note(tx, "w", wakesRecord{Wakes: p.Wakes}); err != nil {
					return err
				}
			}
			_, err := tx.Emit(bullpen.EventTurnStarted, e.channel.ID, e.aud, p)
			return err
		})
		return err
	})
	s.setStatus(e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusThinking, TurnID: e.turn.ID})
	return err
}

// loop is the tool loop: call the model, run the tools it asks for, until
// it answers without tools, asks for an approval, or hits a limit. Steps
// an earlier run of the turn recorded are replayed, not redone.
func (s *turnLoop) loop(ctx context.Context, e *turnEnv, triggers []trigger) {
	req, err := s.firstRequest(ctx, e, triggers)
	if err != nil {
		s.fail(ctx, e, err)
		return
	}
	for {
		if s.overLimit(ctx, e) {
			return
		}
		step := e.steps
		resp, err := s.modelStep(ctx, e, req)
		if err != nil {
			switch {
			case ctx.Err() != nil: // shutting down: the turn resumes at restart
			case !s.cfg.Now().Before(e.deadline):
				s.overLimit(ctx, e)
			default:
				s.noticeOnce(ctx, e, "nf", fmt.Sprintf("@%s could not answer: %s", e.agent.Handle, bullpen.ErrorMessage(err)))
				s.fail(ctx, e, err)
			}
			return
		}
		e.steps++
		e.usage = e.usage.Add(resp.Usage)
		if resp.Model != "" {
			e.turn.Model = resp.Model
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		if len(resp.ToolCalls) == 0 {
			if e.posted == 0 && strings.TrimSpace(resp.Text) != "" {
				s.postText(ctx, e, fmt.Sprintf("p%d", step), resp.Text)
			}
			break
		}
		for i, call := range resp.ToolCalls {
			out, isErr := s.call(ctx, e, fmt.Sprintf("t%d.%d", step, i), call)
			if ctx.Err() != nil || e.lost != nil {
				return // shutting down, or cut off by an outage: the turn runs again
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: out, IsError: isErr})
		}
		if e.asked {
			break // the answer to the approval wakes a new turn
		}
	}
	if err := s.finish(ctx, e, bullpen.TurnDone, bullpen.WakeDone, ""); err != nil && ctx.Err() == nil {
		e.log.Error("agents: finish turn", "err", err)
	}
}

// firstRequest builds the turn's first model request. A resumed turn reuses
// the work packet of its first run, so the replayed steps answer the same
// prompt and the provider's prompt cache stays warm.
func (s *turnLoop) firstRequest(ctx context.Context, e *turnEnv, triggers []trigger) (llm.Request, error) {
	roster, err := s.dir.roster(ctx, &e.channel)
	if err != nil {
		return llm.Request{}, err
	}
	var packet string
	if !e.j.get("k", &packet) {
		packet = s.workPacket(ctx, e, triggers)
		if _, err := s.db.Transact(ctx, func(tx *store.Tx) error { return e.notePacket(tx, packet) }); err != nil {
			return llm.Request{}, err
		}
	}
	_, tools := s.toolsFor(e.role)
	return llm.Request{Model: e.role.Model, System: prefix(e.role, e.agent, roster), Tools: tools,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: packet}}, MaxTokens: s.cfg.MaxOutput}, nil
}

// overLimit stops the turn when a step, token or time limit is reached.
func (s *turnLoop) overLimit(ctx context.Context, e *turnEnv) bool {
	b := e.role.Budgets
	tokens, spent := turnTokensSpent(e.agent.Handle, b, e.usage)
	switch {
	case e.steps >= b.MaxSteps:
		s.limit(ctx, e, bullpen.LimitSteps, fmt.Sprintf("@%s stopped: %d model calls in one turn (step limit %d).", e.agent.Handle, e.steps, b.MaxSteps))
	case spent:
		s.limit(ctx, e, bullpen.LimitTurnTokens, tokens)
	case e.task.spent(e.usage):
		s.limit(ctx, e, bullpen.LimitTaskTokens, taskStopDetail(e.agent.Handle, b, e.task.id, e.task.prior+int64(e.usage.InputTokens+e.usage.OutputTokens), 0))
	case !s.cfg.Now().Before(e.deadline):
		s.limit(ctx, e, bullpen.LimitDeadline, fmt.Sprintf("@%s stopped: the turn ran for its whole deadline of %s (timeouts.turn or %s).", e.agent.Handle, time.Duration(e.timeouts.Turn), EnvTurnDeadline))
	default:
		return false
	}
	return true
}

// modelStep returns the model's answer for the next step: the recorded one
// when an earlier run got it, else a new call, recorded at once.
func (s *turnLoop) modelStep(ctx context.Context, e *turnEnv, req llm.Request) (llm.Response, error) {
	key := fmt.Sprintf("m%d", e.steps)
	var resp llm.Response
	if e.j.get(key, &resp) {
		return resp, nil
	}
	s.setStatus(e.agent.ID, bullpen.AgentStatus{State: bullpen.StatusThinking, TurnID: e.turn.ID})
	if s.onRequest != nil {
		s.onRequest(e.agent.ID, req)
	}
	if s.onFirstRequest != nil && e.steps == 0 {
		s.onFirstRequest(e.started)
	}
	resp, err := s.models.complete(ctx, e, req)
	if err != nil {
		return resp, err
	}
	err = s.retryWrite(ctx, e, "model answer", func() error {
		_, err := s.db.Transact(ctx, func(tx *store.Tx) error { return e.j.note(tx, key, resp) })
		return err
	})
	if err != nil && ctx.Err() == nil {
		e.log.Error("agents: record model answer", "err", err)
	}
	return resp, nil
}

// postText posts a final answer the model gave as text instead of through
// post_message, so the human sees it.
func (s *turnLoop) postText(ctx context.Context, e *turnEnv, key, text string) {
	if e.j.has(key) {
		return // posted by an earlier run of this turn
	}
	body := text
	if e.simulated {
		body = simLabel + body
	}
	err := s.retryWrite(ctx, e, "post answer", func() error {
		_, err := s.off.PostWith(ctx, e.agent, bullpen.PostInput{ChannelID: e.channel.ID, ThreadID: e.thread,
			Body: clip(body, bullpen.MaxMessageBody-10), Source: bullpen.SourceAgent, TurnID: e.turn.ID}, func(tx *store.Tx, _ bullpen.Message) error {
			return e.j.record(tx, key, struct{}{})
		})
		return err
	})
	if err != nil && ctx.Err() == nil && !bullpen.IsCode(err, bullpen.ECONFLICT) { // ECONFLICT: a lost commit answer; it is posted
		e.log.Error("agents: post answer", "err", err)
	}
}

// simLabel starts every message of a simulated agent. It is words only:
// a colour emoji is a blank box where no emoji font is installed (a
// stock Debian Chromium), and the label must read everywhere.
const simLabel = "*simulation* — "

// limit stops the turn because of a budget: a visible event and message.
func (s *turnLoop) limit(ctx context.Context, e *turnEnv, which, detail string) {
	s.announceLimit(ctx, e, which, detail)
	wakeState := bullpen.WakeDone
	if e.steps == 0 {
		wakeState = bullpen.WakeDropped
	}
	if err := s.finish(ctx, e, bullpen.TurnDone, wakeState, "limit: "+which); err != nil && ctx.Err() == nil {
		e.log.Error("agents: finish turn", "err", err)
	}
}

// announceLimit is the limit event and the notice of a budget stop.
func (s *turnLoop) announceLimit(ctx context.Context, e *turnEnv, which, detail string) {
	err := s.retryWrite(ctx, e, "limit event", func() error {
		_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.Emit(bullpen.EventLimitReached, e.channel.ID, e.aud, bullpen.LimitEvent{AgentID: e.agent.ID, Handle: e.agent.Handle,
				Limit: which, Detail: detail, TurnID: e.turn.ID})
			return err
		})
		return err
	})
	if err != nil {
		e.log.Error("agents: limit event", "limit", which, "err", err)
	}
	s.noticeOnce(ctx, e, "n"+which, detail)
}

// fail ends a turn with an error; an outage does not end it but cuts it
// off, to run again when the database answers.
func (s *turnLoop) fail(ctx context.Context, e *turnEnv, cause error) {
	if e.cut(cause) {
		return
	}
	if bullpen.ErrorCode(cause) == bullpen.EINTERNAL {
		e.log.Error("agents: turn failed", "err", cause)
	}
	if err := s.finish(ctx, e, bullpen.TurnFailed, bullpen.WakeDone, bullpen.ErrorMessage(cause)); err != nil && ctx.Err() == nil {
		e.log.Error("agents: finish failed turn", "err", err)
	}
}

// finish stores the turn's outcome and its event in one transaction,
// trying again while the database is out (retryWrite). A turn an outage
// cut off is not finished: its re-run finishes it.
func (s *turnLoop) finish(ctx context.Context, e *turnEnv, state, wakeState, errMsg string) error {
	if e.lost != nil {
		return e.lost
	}
	s.heldUpNotice(ctx, e)
	s.gatewayOutcome(e, &state, &errMsg)
	t := e.turn // the gateway's calls are on the row already: add this process's own
	t.State, t.Steps, t.Error = state, e.steps, errMsg
	t.InputTokens, t.CachedInputTokens = e.usage.InputTokens, e.usage.CachedInputTokens
	t.CacheWriteTokens, t.OutputTokens = e.usage.CacheWriteTokens, e.usage.OutputTokens
	if e.provider != nil {
		t.Provider = e.providerName()
	}
	if t.Model == "" {
		t.Model = e.role.Model
	}
	typ := bullpen.EventTurnFinished
	if state == bullpen.TurnFailed {
		typ = bullpen.EventTurnFailed
	}
	p := bullpen.TurnEvent{TurnID: t.ID, AgentID: t.AgentID, Handle: e.agent.Handle, Provider: t.Provider, Model: t.Model,
		DurationMS: s.cfg.Now().Sub(e.started).Milliseconds(), Error: errMsg, Simulated: e.simulated}
	return s.retryWrite(ctx, e, "finish turn", func() error {
		_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
			if err := tx.FinishTurn(t, wakeState); err != nil {
				return err
			}
			steps, tot, err := tx.TurnTotals(t.ID)
			if err != nil {
				return err
			}
			p.Steps, p.Usage = steps, usageOf(llm.Usage{InputTokens: tot.Input, CachedInputTokens: tot.CachedInput,
				CacheWriteTokens: tot.CacheWrite, OutputTokens: tot.Output})
			if s.cfg.Tasks != nil {
				done := t
				done.InputTokens, done.OutputTokens = tot.Input, tot.Output
				if err := s.cfg.Tasks.TurnFinished(tx, done, e.thread, state == bullpen.TurnDone, steps); err != nil {
					return err
				}
			}
			_, err = tx.Emit(typ, t.ChannelID, e.aud, p)
			return err
		})
		return err
	})
}

// checkBudgets applies the per-agent rate limit and daily token budget
// before any model call. It reports whether the turn was stopped.
func (s *turnLoop) checkBudgets(ctx context.Context, e *turnEnv) (bool, error) {
	now := s.cfg.Now().UTC()
	b := e.role.Budgets
	hour, err := s.db.UsageSince(ctx, e.agent.ID, now.Add(-time.Hour))
	if err != nil {
		return false, err
	}
	if hour.Turns > int64(b.TurnsPerHour) { // this turn included
		s.limit(ctx, e, bullpen.LimitRate, fmt.Sprintf("@%s is rate-limited: %d turns in the last hour (limit %d). Try again later.", e.agent.Handle, hour.Turns-1, b.TurnsPerHour))
		return true, nil
	}
	detail, spent, err := s.dailyTokensSpent(ctx, e.agent, b)
	if spent {
		s.limit(ctx, e, bullpen.LimitDailyTokens, detail)
	}
	return spent, err
}

// decodeRole reads a stored role spec and fills its defaults.
func decodeRole(spec string) (bullpen.Role, error) {
	var r bullpen.Role
	if err := json.Unmarshal([]byte(spec), &r); err != nil {
		return r, fmt.Errorf("agents: stored role spec: %w", err)
	}
	return r.WithDefaults(), nil
}
