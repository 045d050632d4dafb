package office

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// MaxTurnTokenTTL bounds a per-turn token's life: no turn runs longer.
const MaxTurnTokenTTL = 24 * time.Hour

// MintTurnToken issues a per-turn token for an agent CLI run: it
// authenticates as the agent, belongs to turnID (which must be the
// agent's, and running), and stops working after ttl or at RevokeTurnTokens. The
// secret is returned once and stored only as a hash; the token is left
// out of the agent's own token list.
func (o *Office) MintTurnToken(ctx context.Context, agentMemberID, turnID int64, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > MaxTurnTokenTTL {
		return "", bullpen.Errorf(bullpen.EINVALID, "turn token lifetime must be between 0 and %s, not %s", MaxTurnTokenTTL, ttl)
	}
	m, err := o.db.Member(ctx, agentMemberID)
	if err != nil {
		return "", err
	}
	if m.Kind != bullpen.KindAgent {
		return "", bullpen.Errorf(bullpen.EINVALID, "@%s is not an agent: turn tokens are for agents", m.Handle)
	}
	turn, err := o.db.Turn(ctx, turnID)
	if err != nil {
		return "", err
	}
	if turn.AgentID != agentMemberID {
		return "", bullpen.Errorf(bullpen.EINVALID, "turn %d is not @%s's", turnID, m.Handle)
	}
	if turn.State != bullpen.TurnRunning {
		return "", bullpen.Errorf(bullpen.EINVALID, "turn %d has ended (%s): it gets no new tokens", turnID, turn.State)
	}
	secret := newSecret()
	expires := o.now().UTC().Add(ttl)
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateTurnToken(m.ID, turnID, fmt.Sprintf("turn %d", turnID), hashSecret(secret), hint(secret), expires)
		return err
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// RevokeTurnTokens ends every token of a turn; the turn's end calls it.
// Revoking a turn that has none is not an error.
func (o *Office) RevokeTurnTokens(ctx context.Context, turnID int64) error {
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error { return tx.RevokeTurnTokens(turnID) })
	return err
}
