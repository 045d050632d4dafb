package office

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Bootstrap prepares a new office: the admin human, #general and a login
// token, which it returns once. On an office that already has members it
// does nothing and returns "".
func (o *Office) Bootstrap(ctx context.Context, adminHandle string) (string, error) {
	n, err := o.db.CountMembers(ctx)
	if err != nil || n > 0 {
		return "", err
	}
	secret := newSecret()
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		admin, err := o.createMember(ctx, tx, bullpen.MemberInput{Handle: adminHandle, DisplayName: "Admin", Kind: bullpen.KindHuman, IsAdmin: true})
		if err != nil {
			return err
		}
		c, err := tx.CreateChannel(bullpen.Channel{Name: bullpen.GeneralChannel, Kind: bullpen.ChannelPublic,
			Topic: "Everyone, humans and agents", CreatedBy: admin.ID})
		if err != nil {
			return err
		}
		if _, err := tx.Emit(bullpen.EventChannelCreated, c.ID, nil, c); err != nil {
			return err
		}
		if err := o.join(tx, c, admin); err != nil {
			return err
		}
		_, err = tx.CreateToken(admin.ID, "first start", hashSecret(secret), hint(secret))
		return err
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// Authenticate returns the member an ordinary token belongs to; a
// missing, unknown, revoked or expired token is EUNAUTHORIZED. A per-turn
// token is EFORBIDDEN here: it is good only for /mcp and the model
// gateway on its agent's socket, which resolve it with AuthenticateTurn,
// so it cannot reach the REST API, the event feed or a login, nor mint a
// token that would outlive its turn.
func (o *Office) Authenticate(ctx context.Context, secret string) (bullpen.Member, error) {
	m, turnID, err := o.AuthenticateTurn(ctx, secret)
	if err == nil && turnID != 0 {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EFORBIDDEN, "a turn token works only for /mcp and the model gateway on its agent's own socket")
	}
	return m, err
}

// AuthenticateTurn is Authenticate that also returns the turn a per-turn
// token belongs to; turnID is 0 for an ordinary token. A per-turn token is
// refused once its turn is no longer running, revoked or not.
func (o *Office) AuthenticateTurn(ctx context.Context, secret string) (bullpen.Member, int64, error) {
	if !strings.HasPrefix(secret, bullpen.TokenPrefix) || len(secret) > 200 {
		return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "invalid token")
	}
	t, err := o.auth.token(ctx, hashSecret(secret))
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "invalid or revoked token")
	} else if err != nil {
		return bullpen.Member{}, 0, err
	}
	if t.Expired(o.now()) {
		return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "token expired")
	}
	o.touchToken(ctx, t)
	var turnID int64
	if t.TurnID != nil {
		turnID = *t.TurnID
		if err := o.turnRunning(ctx, turnID); err != nil {
			return bullpen.Member{}, 0, err
		}
	}
	m, err := o.auth.member(ctx, t.MemberID)
	if err != nil {
		return bullpen.Member{}, 0, err
	}
	return m, turnID, nil
}

// turnRunning is EUNAUTHORIZED once a per-turn token's turn has ended, so
// that the token dies with its turn even if nobody revoked it.
func (o *Office) turnRunning(ctx context.Context, turnID int64) error {
	turn, err := o.db.Turn(ctx, turnID)
	if err != nil {
		return err
	}
	if turn.State != bullpen.TurnRunning {
		return bullpen.Errorf(bullpen.EUNAUTHORIZED, "token of turn %d, which has ended", turnID)
	}
	return nil
}

// CreateToken issues a token for actor, or for another member when actor
// is an admin (agents get their own credentials this way). The secret is
// returned once and stored only as a hash.
func (o *Office) CreateToken(ctx context.Context, actor bullpen.Member, memberID int64, name string) (string, bullpen.Token, error) {
	if memberID == 0 {
		memberID = actor.ID
	}
	if memberID != actor.ID && !actor.IsAdmin {
		return "", bullpen.Token{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can create tokens for others")
	}
	if strings.TrimSpace(name) == "" || len(name) > 100 {
		return "", bullpen.Token{}, bullpen.Errorf(bullpen.EINVALID, "token name must be 1-100 characters")
	}
	if _, err := o.db.Member(ctx, memberID); err != nil {
		return "", bullpen.Token{}, err
	}
	secret := newSecret()
	var t bullpen.Token
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		t, err = tx.CreateToken(memberID, name, hashSecret(secret), hint(secret))
		return err
	})
	return secret, t, err
}

// Tokens lists actor's tokens.
func (o *Office) Tokens(ctx context.Context, actor bullpen.Member) ([]bullpen.Token, error) {
	return o.db.Tokens(ctx, actor.ID)
}

// RevokeToken revokes one of actor's tokens.
func (o *Office) RevokeToken(ctx context.Context, actor bullpen.Member, id int64) error {
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error { return tx.RevokeToken(actor.ID, id) })
	return err
}

// Login exchanges a token for a dashboard session. It returns the cookie
// value and the session's CSRF token.
func (o *Office) Login(ctx context.Context, secret string) (bullpen.Member, string, string, error) {
	m, err := o.Authenticate(ctx, strings.TrimSpace(secret))
	if err != nil {
		return m, "", "", err
	}
	if m.Kind != bullpen.KindHuman {
		return m, "", "", bullpen.Errorf(bullpen.EFORBIDDEN, "agents cannot log in to the dashboard")
	}
	cookie, csrf := newSecret(), newSecret()
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		return tx.CreateSession(hashSecret(cookie), store.Session{MemberID: m.ID, CSRF: csrf, ExpiresAt: o.now().UTC().Add(bullpen.SessionTTL)})
	})
	return m, cookie, csrf, err
}

// Session returns the member and CSRF token of a dashboard session.
func (o *Office) Session(ctx context.Context, cookie string) (bullpen.Member, string, error) {
	s, err := o.db.SessionByHash(ctx, hashSecret(cookie), o.now())
	if err != nil {
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			err = bullpen.Errorf(bullpen.EUNAUTHORIZED, "session expired; log in again")
		}
		return bullpen.Member{}, "", err
	}
	m, err := o.auth.member(ctx, s.MemberID)
	return m, s.CSRF, err
}

// Logout ends a dashboard session.
func (o *Office) Logout(ctx context.Context, cookie string) error {
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error { return tx.DeleteSession(hashSecret(cookie)) })
	return err
}

func newSecret() string {
	b := make([]byte, 20)
	rand.Read(b)
	return bullpen.TokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// hint is the part of a token shown in lists: its last four characters.
func hint(s string) string { return "…" + s[len(s)-4:] }
