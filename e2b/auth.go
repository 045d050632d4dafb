package e2b

import (
	"context"
	"net/http"

	"github.com/bullpen-hq/bullpen"
)

type ctxKey int

const (
	memberKey ctxKey = iota
	apiKeyKey
)

// member returns the member a request authenticated as.
func member(ctx context.Context) bullpen.Member {
	m, _ := ctx.Value(memberKey).(bullpen.Member)
	return m
}

// requestKey returns the API key a request authenticated with.
func requestKey(ctx context.Context) string {
	k, _ := ctx.Value(apiKeyKey).(string)
	return k
}

// authenticate resolves the key to a member and runs next as that member;
// a missing or bad key is answered 401 and nothing else happens.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, key string, fail func(http.ResponseWriter, error), next http.HandlerFunc) {
	if key == "" {
		fail(w, bullpen.Errorf(bullpen.EUNAUTHORIZED, "missing API key: send it in the X-API-KEY header (E2B_API_KEY)"))
		return
	}
	m, err := s.cfg.Keys.AuthenticateE2B(r.Context(), key)
	if err != nil {
		fail(w, err)
		return
	}
	ctx := context.WithValue(context.WithValue(r.Context(), memberKey, m), apiKeyKey, key)
	next(w, r.WithContext(ctx))
}
