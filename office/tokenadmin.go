package office

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
)

// AllTokens lists every member's tokens, agents' included, with whose
// they are; admins only.
func (o *Office) AllTokens(ctx context.Context, actor bullpen.Member) ([]view.TokenView, error) {
	if !actor.IsAdmin {
		return nil, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can list every token")
	}
	return o.db.AllTokens(ctx)
}

// Revoke revokes a token: one of actor's own, or (admins) anyone's.
// A token that is not actor's is ENOTFOUND for non-admins, so a member
// learns nothing of others' tokens.
func (o *Office) Revoke(ctx context.Context, actor bullpen.Member, id int64) error {
	if !actor.IsAdmin {
		return o.RevokeToken(ctx, actor, id)
	}
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error { return tx.RevokeAnyToken(id) })
	return err
}

// touchToken keeps t's last_used_at current, writing at most once per
// bullpen.TokenTouchInterval so that authenticated requests stay fast. A
// failed write is not the request's failure: it only makes the figure
// older.
func (o *Office) touchToken(ctx context.Context, t bullpen.Token) {
	now := o.now().UTC()
	stale := now.Add(-bullpen.TokenTouchInterval)
	if t.LastUsedAt != nil && t.LastUsedAt.After(stale) {
		return
	}
	_, _ = o.db.Transact(ctx, func(tx *store.Tx) error { return tx.TouchToken(t.ID, now, stale) })
}

// MintAdminTokenIn is MintAdminToken on db without a running office
// (`bullpen admin-token`; the server may be running meanwhile).
func MintAdminTokenIn(ctx context.Context, db *store.DB, handle string) (string, bullpen.Member, error) {
	o, err := New(ctx, db, Config{})
	if err != nil {
		return "", bullpen.Member{}, err
	}
	return o.MintAdminToken(ctx, handle)
}

// MintAdminToken issues a new login token for an admin human, for when
// the old one is lost (`bullpen admin-token`, run on the server). handle
// names the admin; "" picks the first admin. It returns the secret, shown
// once, and the admin.
func (o *Office) MintAdminToken(ctx context.Context, handle string) (string, bullpen.Member, error) {
	n, err := o.db.CountMembers(ctx)
	if err != nil {
		return "", bullpen.Member{}, err
	}
	if n == 0 {
		return "", bullpen.Member{}, bullpen.Errorf(bullpen.ENOTFOUND, "this database has no office yet: start `bullpen serve` once, it prints the first admin token")
	}
	admin, err := o.pickAdmin(ctx, handle)
	if err != nil {
		return "", bullpen.Member{}, err
	}
	secret := newSecret()
	name := fmt.Sprintf("admin-token %s", o.now().UTC().Format(time.DateTime))
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateToken(admin.ID, name, hashSecret(secret), hint(secret))
		return err
	})
	if err != nil {
		return "", bullpen.Member{}, err
	}
	return secret, admin, nil
}

func (o *Office) pickAdmin(ctx context.Context, handle string) (bullpen.Member, error) {
	if handle != "" {
		m, err := o.db.MemberByHandle(ctx, handle)
		if err != nil {
			return m, err
		}
		if !m.IsAdmin || m.Kind != bullpen.KindHuman {
			return bullpen.Member{}, bullpen.Errorf(bullpen.EINVALID, "@%s is not an admin human", handle)
		}
		return m, nil
	}
	members, err := o.db.Members(ctx)
	if err != nil {
		return bullpen.Member{}, err
	}
	for _, m := range members {
		if m.IsAdmin && m.Kind == bullpen.KindHuman {
			return m, nil
		}
	}
	return bullpen.Member{}, bullpen.Errorf(bullpen.ENOTFOUND, "the office has no admin human")
}
