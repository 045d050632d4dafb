package cli

import (
	"crypto/subtle"

	"github.com/bullpen-hq/bullpen"
)

// A lend lets a standing secret stand for a running turn's token on one
// agent's socket. An agent CLI that runs as a server outliving turns
// (opencode's, runtime.Server) is started with a secret of its own
// instead of a turn's token, which dies with its turn: while a turn of
// the agent runs, the socket takes the secret as that turn's token, so the
// turn's budget, records and scope apply to each request as if the turn's
// token had been sent; between turns the secret is nothing, refused like
// any dead token. It is never a token of the office: the REST API, the
// websocket and other agents' sockets do not know it.
type lend struct{ secret, token string }

// Lend makes secret stand for token on the agent's socket until release
// is called. One lend per agent at a time: a second one, while the first
// is held, is ECONFLICT (the agent's server serves one turn at a time).
func (a *Sockets) Lend(agentID int64, secret, token string) (release func(), err error) {
	if len(secret) < 32 || token == "" {
		return nil, bullpen.Errorf(bullpen.EINVALID, "cli sockets: a lend needs a secret of 32 bytes or more and a token")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lends[agentID] != nil {
		return nil, bullpen.Errorf(bullpen.ECONFLICT, "cli sockets: the agent's server already serves a turn")
	}
	l := &lend{secret: secret, token: token}
	a.lends[agentID] = l
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.lends[agentID] == l {
			delete(a.lends, agentID)
		}
	}, nil
}

// lent returns the token cred stands for on the agent's socket, or cred.
func (a *Sockets) lent(agentID int64, cred string) string {
	a.mu.Lock()
	l := a.lends[agentID]
	a.mu.Unlock()
	if l != nil && subtle.ConstantTimeCompare([]byte(l.secret), []byte(cred)) == 1 {
		return l.token
	}
	return cred
}
