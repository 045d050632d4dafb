package agents

import (
	"context"
	"fmt"
	"sync"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// credStore revokes stale runtime tokens; *store.DB provides it.
type credStore interface {
	Transact(ctx context.Context, fn func(*store.Tx) error) ([]bullpen.Event, error)
}

// credOffice mints and checks tokens; *office.Office provides it.
type credOffice interface {
	CreateToken(ctx context.Context, actor bullpen.Member, memberID int64, name string) (string, bullpen.Token, error)
	Authenticate(ctx context.Context, secret string) (bullpen.Member, error)
}

// credentials holds each agent's runtime token secret: minted on the
// agent's first turn, checked through the office like any token, dropped
// when the agent is fired.
type credentials struct {
	db        credStore
	off       credOffice
	tokenName string // runtimeToken, with the owner ID on a shared database

	mu sync.Mutex
	m  map[int64]string
}

func newCredentials(db credStore, off credOffice, tokenName string) *credentials {
	return &credentials{db: db, off: off, tokenName: tokenName, m: map[int64]string{}}
}

func (c *credentials) get(agentID int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[agentID]
}

func (c *credentials) set(agentID int64, secret string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[agentID] = secret
}

func (c *credentials) drop(agentID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, agentID)
}

// authenticate resolves the agent through its own credential: a token the
// runtime holds in memory only, minted on first use. Whatever the agent
// does in the office, it does as that member and no other.
func (c *credentials) authenticate(ctx context.Context, agent bullpen.Member) (bullpen.Member, error) {
	secret := c.get(agent.ID)
	if secret == "" {
		_, err := c.db.Transact(ctx, func(tx *store.Tx) error { return tx.RevokeTokensNamed(agent.ID, c.tokenName) })
		if err != nil {
			return agent, err
		}
		if secret, _, err = c.off.CreateToken(ctx, agent, 0, c.tokenName); err != nil {
			return agent, fmt.Errorf("agents: credential for @%s: %w", agent.Handle, err)
		}
		c.set(agent.ID, secret)
	}
	m, err := c.off.Authenticate(ctx, secret)
	if err != nil {
		c.drop(agent.ID)
		return agent, fmt.Errorf("agents: @%s's credential: %w", agent.Handle, err)
	}
	if m.ID != agent.ID || m.Kind != bullpen.KindAgent {
		return agent, bullpen.Errorf(bullpen.EFORBIDDEN, "credential does not belong to agent @%s", agent.Handle)
	}
	return m, nil
}
