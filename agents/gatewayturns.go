package agents

import (
	"context"
	"fmt"
	"sync"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/store"
)

// The model gateway asks the service about the CLI turns whose model
// calls pass through it: their budgets before each call, their usage
// after it, and it reports a budget stop so the channel is told just as
// for a built-in turn.
var _ gateway.Turns = (*Service)(nil)

// gatewayTurns is what the gateway has done for the running turns of
// this process (the gateway serves the sandboxes of the process that runs
// their turns). finish folds it into the turn's outcome.
type gatewayTurns struct {
	mu    sync.Mutex
	turns map[int64]*gatewayTurn
}

type gatewayTurn struct {
	usage llm.Usage
	steps int
	stop  gateway.Budget // the budget that stopped the turn; Limit "" if none
	env   *turnEnv       // the running turn, when its runtime attached it
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

// TurnBudget returns the budget state of a running turn before its CLI's
// next model call: the same per-turn and daily token rules as the
// built-in loop. EFORBIDDEN when the turn is not running.
func (s *Service) TurnBudget(ctx context.Context, turnID int64) (gateway.Budget, error) {
	t, agent, role, err := s.runningTurn(ctx, turnID)
	if err != nil {
		return gateway.Budget{}, err
	}
	b := gateway.Budget{AgentID: t.AgentID}
	used := llm.Usage{InputTokens: t.InputTokens, CachedInputTokens: t.CachedInputTokens,
		CacheWriteTokens: t.CacheWriteTokens, OutputTokens: t.OutputTokens}
	if detail, spent := turnTokensSpent(agent.Handle, role.Budgets, used); spent {
		b.Limit, b.Detail = LimitTurnTokens, detail
		return b, nil
	}
	detail, spent, err := s.dailyTokensSpent(ctx, agent, role.Budgets)
	if spent {
		b.Limit, b.Detail = LimitDailyTokens, detail
	}
	return b, err
}

// AddUsage adds one model call's tokens to the turn's row (so the day's
// budget and the dashboard see them at once) and to what finish reports.
func (s *Service) AddUsage(ctx context.Context, turnID int64, u llm.Usage) error {
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		return tx.AddTurnTokens(turnID, store.TurnTokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens,
			CacheWrite: u.CacheWriteTokens, Output: u.OutputTokens})
	})
	if err != nil {
		return fmt.Errorf("agents: usage of turn %d: %w", turnID, err)
	}
	s.gw.with(turnID, func(t *gatewayTurn) { t.usage, t.steps = t.usage.Add(u), t.steps+1 })
	return nil
}

// BudgetStopped tells the channel that a budget stopped the turn: the
// limit event and the notice of a built-in turn, once per turn however
// often the CLI asks again. The turn then ends as limited (see finish).
func (s *Service) BudgetStopped(ctx context.Context, turnID int64, b gateway.Budget) error {
	first := false
	var e *turnEnv
	s.gw.with(turnID, func(t *gatewayTurn) {
		first, e = t.stop.Limit == "", t.env
		if first {
			t.stop = b
		}
	})
	if !first {
		return nil
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

// gatewayOutcome folds what the gateway did for a turn into its outcome:
// the tokens and model calls of its CLI, and a budget stop, which ends
// the turn as limited even though the CLI, refused, may have failed.
func (s *Service) gatewayOutcome(e *turnEnv, state, errMsg *string) (llm.Usage, int) {
	gw := s.gw.take(e.turn.ID)
	if gw.stop.Limit != "" && *state == bullpen.TurnFailed {
		*state, *errMsg = bullpen.TurnDone, "limit: "+gw.stop.Limit
	}
	return e.usage.Add(gw.usage), e.steps + gw.steps
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
