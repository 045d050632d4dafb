package agents

import (
	"context"

	"github.com/bullpen-hq/bullpen/gateway"
)

// announceStop announces the budget stop of a CLI turn: in its thread
// when its runtime attached it (e), else at the channel's top level.
func (s *turnLoop) announceStop(ctx context.Context, turnID int64, e *turnEnv, b gateway.Budget) error {
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
func (s *turnLoop) detachedEnv(ctx context.Context, turnID int64) (*turnEnv, error) {
	t, agent, role, err := s.gatewayBudgets.runningTurn(ctx, turnID)
	if err != nil {
		return nil, err
	}
	ch, err := s.db.Channel(ctx, t.ChannelID)
	if err != nil {
		return nil, err
	}
	return &turnEnv{turn: t, agent: agent, role: role, channel: ch, aud: audience(ch),
		log: s.log.With("turn", t.ID, "agent", agent.Handle)}, nil
}
