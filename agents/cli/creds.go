package cli

import (
	"context"
	"net/http"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// credentialWords mark a header or query parameter that may carry a
// credential: Authorization and Proxy-Authorization, X-Api-Key,
// x-goog-api-key, api-key, X-Auth-Token, Cookie, ?key=, ?token=,
// ?access_token= and the like.
var credentialWords = []string{"auth", "key", "token", "secret", "cookie", "credential", "password", "passwd"}

func credentialName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// credentials returns every credential r carries, in headers and in the
// query, each once; a Bearer scheme is taken off its token.
func credentials(r *http.Request) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			v = strings.TrimSpace(v[7:])
		}
		for _, have := range out {
			if have == v {
				return
			}
		}
		out = append(out, v)
	}
	for name, vs := range r.Header {
		if credentialName(name) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	for name, vs := range r.URL.Query() {
		if credentialName(name) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}

// admit checks that r carries exactly one credential, in one or more
// places, and that it is a running turn's token of agent: no credential
// or a dead token is EUNAUTHORIZED; two different credentials, another
// member's token, or an ordinary (not per-turn) token is EFORBIDDEN. A
// secret lent a turn's token (Lend) is taken as that token.
// What passes reaches the handler as one Authorization: Bearer header
// and nothing else that may carry a credential, so that the MCP endpoint
// and the gateway, whichever header each reads, see the token checked
// here.
func (a *Sockets) admit(ctx context.Context, agent bullpen.Member, r *http.Request) error {
	creds := credentials(r)
	switch {
	case len(creds) == 0:
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "missing credential: send the turn's token as Authorization: Bearer or x-api-key")
	case len(creds) > 1:
		return bullpen.Errorf(bullpen.EFORBIDDEN, "the request carries %d different credentials: send only the turn's token", len(creds))
	}
	cred := a.lent(agent.ID, creds[0])
	m, turnID, err := a.cfg.Auth.AuthenticateTurn(ctx, cred)
	switch {
	case err != nil:
		return err
	case m.ID != agent.ID:
		return bullpen.Errorf(bullpen.EFORBIDDEN, "this token belongs to another member than the agent whose socket this is")
	case turnID == 0:
		return bullpen.Errorf(bullpen.EFORBIDDEN, "not a turn token: this socket serves the agent's running turn only")
	}
	for name := range r.Header {
		if credentialName(name) {
			r.Header.Del(name)
		}
	}
	if q := r.URL.Query(); len(q) > 0 {
		for name := range q {
			if credentialName(name) {
				q.Del(name)
			}
		}
		r.URL.RawQuery = q.Encode()
	}
	r.Header.Set("Authorization", "Bearer "+cred)
	return nil
}
