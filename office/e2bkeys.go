package office

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// E2BKeyPrefix starts every E2B-shaped API key; 40 hex digits follow.
const E2BKeyPrefix = "e2b_"

// ValidE2BKeyShape reports whether key looks like an E2B API key.
func ValidE2BKeyShape(key string) bool {
	rest, ok := strings.CutPrefix(key, E2BKeyPrefix)
	if !ok || len(rest) != 40 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil && strings.ToLower(rest) == rest
}

// MintE2BKey issues an E2B-shaped API key for actor: a token of actor's
// (listed with the others, revoked like them) that only the E2B-compatible
// API accepts. The key is returned once and stored only as a hash.
func (o *Office) MintE2BKey(ctx context.Context, actor bullpen.Member) (string, bullpen.Token, error) {
	if actor.ID == 0 {
		return "", bullpen.Token{}, bullpen.Errorf(bullpen.EUNAUTHORIZED, "no member to mint an E2B key for")
	}
	b := make([]byte, 20)
	rand.Read(b)
	key := E2BKeyPrefix + hex.EncodeToString(b)
	var t bullpen.Token
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		t, err = tx.CreateE2BKey(actor.ID, "E2B API key", hashSecret(key), hint(key))
		return err
	})
	return key, t, err
}

// AuthenticateE2B returns the member an E2B API key belongs to. A key of
// the wrong shape, unknown, revoked or expired is EUNAUTHORIZED; an
// ordinary Bullpen token is not an E2B key.
func (o *Office) AuthenticateE2B(ctx context.Context, key string) (bullpen.Member, error) {
	if !ValidE2BKeyShape(key) {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EUNAUTHORIZED, "invalid API key format: an E2B API key is %q followed by 40 hex digits", E2BKeyPrefix)
	}
	// The token (cached, and dropped from the cache when revoked) must be
	// marked an E2B key: ordinary tokens never pass as one.
	t, err := o.auth.token(ctx, hashSecret(key))
	if err == nil {
		if _, ok := o.e2bKeys.Load(t.ID); !ok {
			if err = o.db.IsE2BKey(ctx, t.ID); err == nil {
				o.e2bKeys.Store(t.ID, true)
			}
		}
	}
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EUNAUTHORIZED, "invalid or revoked API key")
	} else if err != nil {
		return bullpen.Member{}, err
	}
	if t.Expired(o.now()) {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EUNAUTHORIZED, "API key expired")
	}
	o.touchToken(ctx, t)
	return o.auth.member(ctx, t.MemberID)
}
