package agents

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/store"
)

// The model gateway asks the service about the CLI turns whose model
// calls pass through it: a reservation of each call's tokens before it,
// the settlement of its usage after it, and it reports a budget stop so
// the channel is told just as for a built-in turn.
var _ gateway.Turns = (*Service)(nil)

// gatewayTurns is what the gateway has done for the running turns of
// this process (the gateway serves the sandboxes of the process that runs
// their turns). finish folds it into the turn's outcome.
type gatewayTurns struct {
	mu    sync.Mutex
	turns map[int64]*gatewayTurn
}

type gatewayTurn struct {
	stop  gateway.Budget // the budget that stopped the turn; Limit "" if none
	env   *turnEnv       // the running turn, when its runtime attached it
	slots chan struct{}  // the turn's calls in flight (gatewayslots.go)
	// stopRun kills the turn's CLI run (its whole process tree) when a
	// budget stops the turn; nil until the run starts.
	stopRun func()
}

// with runs f on the turn's entry, made if missing.
func (g *gatewayTurns) with(turnID int64, f func(*gatewayTurn)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.turns == nil {
		g.turns = map[int64]*gatewayTurn{}
	}
	t := g.turns[turnID]
	if t == nil {
		t = &gatewayTurn{}
		g.turns[turnID] = t
	}
	f(t)
}

// take removes and returns the turn's entry (zero when there is none).
func (g *gatewayTurns) take(turnID int64) gatewayTurn {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.turns[turnID]
	delete(g.turns, turnID)
	if t == nil {
		return gatewayTurn{}
	}
	return *t
}

// attachGateway lets budget notices of the gateway reach the turn's own
// thread and journal (so a notice is posted once even across a restart).
// A CLI runtime calls it when its turn starts; finish detaches it.
func (s *Service) attachGateway(e *turnEnv) {
	s.gw.with(e.turn.ID, func(t *gatewayTurn) { t.env = e })
}

// Reserve implements gateway.Turns: it takes one of the turn's call
// slots (budgets.max_parallel_calls, waiting up to callSlotWait for one),
// then reserves the call's input and as much of its output as the turn's
// and the agent's daily budgets leave, in the database, counting every
// call in flight of the agent on any replica. EFORBIDDEN when the turn is
// not running.
func (s *Service) Reserve(ctx context.Context, turnID int64, input, maxOutput int) (gateway.Budget, gateway.Reservation, error) {
	t, agent, role, err := s.runningTurn(ctx, turnID)
	if err != nil {
		return gateway.Budget{}, gateway.Reservation{}, err
	}
	b := gateway.Budget{AgentID: t.AgentID}
	if err := s.gw.acquire(ctx, turnID, role.Budgets.ParallelCalls(), callSlotWait); err != nil {
		return b, gateway.Reservation{}, err
	}
	now := s.cfg.Now().UTC()
	// A task's budget leaves the turn what its finished turns did not use.
	var task taskSpend
	s.gw.ifPresent(turnID, func(g *gatewayTurn) {
		if g.env != nil {
			task = g.env.task
		}
	})
	turnLimit, byTask := task.turnLimit(role.Budgets.MaxTurnTokens)
	var res store.ReserveResult
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		res, err = tx.ReserveTokens(store.ReserveTokens{AgentID: t.AgentID, TurnID: turnID, Input: input, MaxOutput: maxOutput,
			TurnLimit: turnLimit, DailyLimit: role.Budgets.DailyTokens,
			DayStart: now.Truncate(24 * time.Hour), Expires: now.Add(reservationTTL)})
		return err
	})
	if err != nil || res.Refused != "" {
		s.gw.release(turnID)
	}
	if err != nil {
		return b, gateway.Reservation{}, fmt.Errorf("agents: reserve tokens of turn %d: %w", turnID, err)
	}
	switch {
	case res.Refused == "turn" && byTask:
		b.Limit, b.Detail = bullpen.LimitTaskTokens, taskStopDetail(agent.Handle, role.Budgets, task.id, task.prior+res.TurnUsed, input)
	case res.Refused == "turn":
		b.Limit, b.Detail = bullpen.LimitTurnTokens, turnStopDetail(agent.Handle, role.Budgets, res.TurnUsed, input)
	case res.Refused == "daily":
		b.Limit, b.Detail = bullpen.LimitDailyTokens, dailyStopDetail(agent.Handle, role.Budgets, res.DayUsed, input)
	}
	return b, gateway.Reservation{ID: res.ID, Input: res.Input, Output: res.Output}, nil
}

// Settle implements gateway.Turns: the reservation's row goes, and the
// turn is charged the call's usage, or the whole reservation when the
// usage did not arrive whole, on its row (so the day's budget and the
// dashboard see it at once) and in what finish reports. Its slot is
// freed whatever happens.
func (s *Service) Settle(ctx context.Context, turnID int64, r gateway.Reservation, u llm.Usage, complete bool) error {
	defer s.gw.release(turnID)
	if !complete {
		u = llm.Usage{InputTokens: r.Input, OutputTokens: r.Output}
	}
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.SettleReservation(r.ID, store.TurnTokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens,
			CacheWrite: u.CacheWriteTokens, Output: u.OutputTokens})
		return err
	})
	if err != nil {
		return fmt.Errorf("agents: settle tokens of turn %d: %w", turnID, err)
	}
	return nil
}

// SweepReservations charges in full the token reservations no process
// will settle: expired ones, and those of turns that ended or whose
// process died (see store.Tx.SweepReservations). The lease sweep runs it.
func (s *Service) SweepReservations(ctx context.Context) (int, error) {
	var swept []store.Reservation
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		swept, err = tx.SweepReservations(reservationGrace)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("agents: sweep token reservations: %w", err)
	}
	for _, r := range swept {
		s.log.Warn("charged a model call's whole token reservation: its call never settled", "turn", r.TurnID,
			"agent", r.AgentID, "tokens", r.Input+r.Output)
	}
	return len(swept), nil
}

// BudgetStopped tells the channel that a budget stopped the turn: the
// limit event and the notice of a built-in turn, once per turn however
// often the CLI asks again. The turn then ends as limited (see finish).
func (s *Service) BudgetStopped(ctx context.Context, turnID int64, b gateway.Budget) error {
	// ctx is the refused call's request: stopping the run below hangs it
	// up, which must not cancel the notice.
	ctx = context.WithoutCancel(ctx)
	first := false
	var e *turnEnv
	var stopRun func()
	s.gw.with(turnID, func(t *gatewayTurn) {
		first, e, stopRun = t.stop.Limit == "", t.env, t.stopRun
		if first {
			t.stop = b
		}
	})
	if !first {
		return nil
	}
	if stopRun != nil {
		// A refused CLI may retry for minutes: the run ends now, with
		// everything it started.
		stopRun()
		b.Detail += " Its CLI run was stopped."
	}
	if e == nil {
		var err error
		if e, err = s.detachedEnv(ctx, turnID); err != nil {
			return err
		}
	}
	s.announceLimit(ctx, e, b.Limit, b.Detail)
	return nil
}

// detachedEnv is enough of a turn to announce a limit for a turn that
// was not attached: its notice goes to the channel's top level.
func (s *Service) detachedEnv(ctx context.Context, turnID int64) (*turnEnv, error) {
	t, agent, role, err := s.runningTurn(ctx, turnID)
	if err != nil {
		return nil, err
	}
	ch, err := s.db.Channel(ctx, t.ChannelID)
	if err != nil {
		return nil, err
	}
	return &turnEnv{s: s, turn: t, agent: agent, role: role, channel: ch, aud: audience(ch),
		log: s.log.With("turn", t.ID, "agent", agent.Handle)}, nil
}

// runningTurn loads a running turn with its agent and role.
func (s *Service) runningTurn(ctx context.Context, turnID int64) (bullpen.Turn, bullpen.Member, bullpen.Role, error) {
	t, err := s.db.Turn(ctx, turnID)
	if err != nil {
		return t, bullpen.Member{}, bullpen.Role{}, err
	}
	if t.State != bullpen.TurnRunning {
		return t, bullpen.Member{}, bullpen.Role{}, bullpen.Errorf(bullpen.EFORBIDDEN, "turn %d has ended", turnID)
	}
	ag, err := s.db.Agent(ctx, t.AgentID)
	if err != nil {
		return t, bullpen.Member{}, bullpen.Role{}, err
	}
	role, err := decodeRole(ag.Spec)
	if err != nil {
		return t, bullpen.Member{}, bullpen.Role{}, err
	}
	m, err := s.db.Member(ctx, ag.MemberID)
	return t, m, role, err
}

// gatewayOutcome folds a budget stop at the gateway into a turn's
// outcome: the turn ends as limited even though the CLI, refused, may have
// failed. (The CLI's tokens and model calls are on the turn's row: each
// call was charged there as it settled.)
func (s *Service) gatewayOutcome(e *turnEnv, state, errMsg *string) {
	s.gw.awaitIdle(e.turn.ID, settleWait) // calls cut off with the CLI settle first
	gw := s.gw.take(e.turn.ID)
	if gw.stop.Limit != "" && *state == bullpen.TurnFailed {
		*state, *errMsg = bullpen.TurnDone, "limit: "+gw.stop.Limit
	}
}

// UpstreamLookup finds the provider named name for the gateway; ok is
// false when there is none by that name.
type UpstreamLookup func(ctx context.Context, name string) (up gateway.Upstream, ok bool, err error)

// LookupIn looks providers up in a fixed map by name
// (gateway.UpstreamsFromEnv, tests).
func LookupIn(byName map[string]gateway.Upstream) UpstreamLookup {
	return func(_ context.Context, name string) (gateway.Upstream, bool, error) {
		up, ok := byName[name]
		return up, ok, nil
	}
}

// GatewayUpstreams returns the gateway's Upstreams over a provider lookup
// (the providers set up in Settings, read at each call, so a change
// applies from the next model request): an agent's calls go to its
// role's provider; a role that names none gets the kind its CLI speaks
// (claude-code Anthropic, codex OpenAI), else the office's default
// provider.
func (s *Service) GatewayUpstreams(lookup UpstreamLookup) gateway.Upstreams {
	return roleUpstreams{s: s, lookup: lookup}
}

type roleUpstreams struct {
	s      *Service
	lookup UpstreamLookup
}

// Upstream implements gateway.Upstreams.
func (u roleUpstreams) Upstream(ctx context.Context, agent bullpen.Member) (gateway.Upstream, error) {
	ag, err := u.s.db.Agent(ctx, agent.ID)
	if err != nil {
		return gateway.Upstream{}, err
	}
	role, err := decodeRole(ag.Spec)
	if err != nil {
		return gateway.Upstream{}, err
	}
	kind := role.Provider
	switch {
	case kind != "":
	case role.Runtime == bullpen.RuntimeClaudeCode:
		kind = gateway.KindAnthropic
	case role.Runtime == bullpen.RuntimeCodex:
		kind = gateway.KindOpenAI
	default:
		kind = u.s.cfg.DefaultProvider
	}
	up, ok, err := u.lookup(ctx, kind)
	if err != nil {
		return up, err
	}
	if !ok {
		return up, bullpen.Errorf(bullpen.EUNAVAILABLE, "@%s has no model provider %q for the gateway: an admin can add it in Settings → Providers (or set BULLPEN_ANTHROPIC_API_KEY, BULLPEN_ANTHROPIC_OAUTH_TOKEN or BULLPEN_OPENAI_API_KEY)", agent.Handle, kind)
	}
	return up, nil
}
