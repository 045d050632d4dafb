package office

import (
	"context"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// CreateMember adds a member and joins it to #general. Only admins may.
func (o *Office) CreateMember(ctx context.Context, actor bullpen.Member, in bullpen.MemberInput) (bullpen.Member, error) {
	if !actor.IsAdmin {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can add members")
	}
	if in.IsAdmin && in.Kind == bullpen.KindAgent {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EINVALID, "an agent cannot be an admin")
	}
	var out bullpen.Member
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		out, err = o.createMember(ctx, tx, in)
		return err
	})
	return out, err
}

// CreateMemberWith is CreateMember that also runs fn in the same
// transaction, so that a feature's own rows (an agent's role) commit or
// roll back together with the member.
func (o *Office) CreateMemberWith(ctx context.Context, actor bullpen.Member, in bullpen.MemberInput, fn func(tx *store.Tx, m bullpen.Member) error) (bullpen.Member, error) {
	if !actor.IsAdmin {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can add members")
	}
	if in.IsAdmin && in.Kind == bullpen.KindAgent {
		return bullpen.Member{}, bullpen.Errorf(bullpen.EINVALID, "an agent cannot be an admin")
	}
	var out bullpen.Member
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if out, err = o.createMember(ctx, tx, in); err != nil {
			return err
		}
		return fn(tx, out)
	})
	return out, err
}

// createMember validates and inserts a member, joins it to #general when
// that exists, and emits the events.
func (o *Office) createMember(ctx context.Context, tx *store.Tx, in bullpen.MemberInput) (bullpen.Member, error) {
	m := bullpen.Member{Handle: in.Handle, DisplayName: in.DisplayName, Kind: in.Kind, Title: in.Title, IsAdmin: in.IsAdmin}
	if m.Kind == "" {
		m.Kind = bullpen.KindHuman
	}
	if err := m.Validate(); err != nil {
		return m, err
	}
	m, err := tx.CreateMember(m)
	if err != nil {
		return m, err
	}
	if _, err := tx.Emit(bullpen.EventMemberCreated, 0, nil, m); err != nil {
		return m, err
	}
	general, err := o.db.ChannelByName(ctx, bullpen.GeneralChannel)
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return m, nil
	} else if err != nil {
		return m, err
	}
	return m, o.join(tx, general, m)
}

// UpdateMember changes a member. Members may change their own name and
// title; admins may change anyone's, and only admins mute.
func (o *Office) UpdateMember(ctx context.Context, actor bullpen.Member, id int64, up bullpen.MemberUpdate) (bullpen.Member, error) {
	m, err := o.db.Member(ctx, id)
	if err != nil {
		return m, err
	}
	if actor.ID != id && !actor.IsAdmin {
		return m, bullpen.Errorf(bullpen.EFORBIDDEN, "you may only change your own profile")
	}
	if up.Muted != nil && !actor.IsAdmin {
		return m, bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can mute or unmute")
	}
	if up.DisplayName != nil {
		m.DisplayName = *up.DisplayName
	}
	if up.Title != nil {
		m.Title = *up.Title
	}
	if up.Muted != nil {
		m.Muted = *up.Muted
	}
	if err := m.Validate(); err != nil {
		return m, err
	}
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateMember(m); err != nil {
			return err
		}
		_, err := tx.Emit(bullpen.EventMemberUpdated, 0, nil, m)
		return err
	})
	return m, err
}

// Member returns a member by ID.
func (o *Office) Member(ctx context.Context, id int64) (bullpen.Member, error) {
	return o.db.Member(ctx, id)
}

// MemberByHandle returns a member by handle.
func (o *Office) MemberByHandle(ctx context.Context, handle string) (bullpen.Member, error) {
	return o.db.MemberByHandle(ctx, handle)
}

// Members lists all members by handle.
func (o *Office) Members(ctx context.Context) ([]bullpen.Member, error) {
	return o.db.Members(ctx)
}
