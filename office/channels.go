package office

import (
	"context"
	"slices"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// CreateChannel creates a public channel with actor as its first member.
func (o *Office) CreateChannel(ctx context.Context, actor bullpen.Member, in bullpen.ChannelInput) (bullpen.Channel, error) {
	c := bullpen.Channel{Name: in.Name, Kind: bullpen.ChannelPublic, Topic: in.Topic, CreatedBy: actor.ID}
	if err := c.Validate(); err != nil {
		return c, err
	}
	_, err := o.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if c, err = tx.CreateChannel(c); err != nil {
			return err
		}
		if _, err = tx.Emit(bullpen.EventChannelCreated, c.ID, nil, c); err != nil {
			return err
		}
		return o.join(tx, c, actor)
	})
	c.MemberIDs = []int64{actor.ID}
	return c, err
}

// OpenDM returns the DM channel between actor and other, creating it on
// first use.
func (o *Office) OpenDM(ctx context.Context, actor bullpen.Member, otherID int64) (bullpen.Channel, error) {
	if otherID == actor.ID {
		return bullpen.Channel{}, bullpen.Errorf(bullpen.EINVALID, "a DM needs another member")
	}
	other, err := o.db.Member(ctx, otherID)
	if err != nil {
		return bullpen.Channel{}, err
	}
	name := bullpen.DMName(actor.ID, other.ID)
	if c, err := o.db.ChannelByName(ctx, name); err == nil || !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return c, err
	}
	c := bullpen.Channel{Name: name, Kind: bullpen.ChannelDM, CreatedBy: actor.ID}
	audience := []int64{min(actor.ID, other.ID), max(actor.ID, other.ID)}
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if c, err = tx.CreateChannel(c); err != nil {
			return err
		}
		for _, m := range []bullpen.Member{actor, other} {
			if _, err := tx.AddChannelMember(c.ID, m.ID); err != nil {
				return err
			}
		}
		// After its members: the event is theirs (store: a DM's events
		// reach its members only).
		_, err = tx.Emit(bullpen.EventChannelCreated, c.ID, audience, c)
		return err
	})
	if bullpen.IsCode(err, bullpen.ECONFLICT) { // opened concurrently
		return o.db.ChannelByName(ctx, name)
	}
	c.MemberIDs = audience
	return c, err
}

// Channels lists the public channels and actor's DMs (an admin sees all).
func (o *Office) Channels(ctx context.Context, actor bullpen.Member) ([]bullpen.Channel, error) {
	if actor.IsAdmin {
		return o.db.Channels(ctx, 0)
	}
	return o.db.Channels(ctx, actor.ID)
}

// Channel returns a channel actor may see.
func (o *Office) Channel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error) {
	c, err := o.auth.channel(ctx, id)
	if err != nil {
		return c, err
	}
	return c, o.canSee(actor, c)
}

// ChannelByName returns a channel actor may see, by name.
func (o *Office) ChannelByName(ctx context.Context, actor bullpen.Member, name string) (bullpen.Channel, error) {
	c, err := o.db.ChannelByName(ctx, name)
	if err != nil {
		return c, err
	}
	return c, o.canSee(actor, c)
}

// canSee hides DMs from non-members: they get ENOTFOUND, as if the channel
// did not exist.
func (o *Office) canSee(actor bullpen.Member, c bullpen.Channel) error {
	if c.Kind == bullpen.ChannelDM && !actor.IsAdmin && !slices.Contains(c.MemberIDs, actor.ID) {
		return bullpen.Errorf(bullpen.ENOTFOUND, "channel %d not found", c.ID)
	}
	return nil
}

// JoinChannel adds actor to a public channel. Joining twice is harmless.
func (o *Office) JoinChannel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error) {
	c, err := o.Channel(ctx, actor, id)
	if err != nil {
		return c, err
	}
	if c.Kind != bullpen.ChannelPublic {
		return c, bullpen.Errorf(bullpen.EINVALID, "only public channels can be joined")
	}
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error { return o.join(tx, c, actor) })
	if err != nil {
		return c, err
	}
	return o.db.Channel(ctx, id)
}

// LeaveChannel removes actor from a public channel.
func (o *Office) LeaveChannel(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Channel, error) {
	c, err := o.Channel(ctx, actor, id)
	if err != nil {
		return c, err
	}
	if c.Kind != bullpen.ChannelPublic {
		return c, bullpen.Errorf(bullpen.EINVALID, "a DM cannot be left")
	}
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		left, err := tx.RemoveChannelMember(c.ID, actor.ID)
		if err != nil || !left {
			return err
		}
		_, err = tx.Emit(bullpen.EventChannelLeft, c.ID, nil, bullpen.Membership{ChannelID: c.ID, Member: actor})
		return err
	})
	if err != nil {
		return c, err
	}
	return o.db.Channel(ctx, id)
}

// join adds m to c inside tx and emits channel.joined when it is new.
func (o *Office) join(tx *store.Tx, c bullpen.Channel, m bullpen.Member) error {
	added, err := tx.AddChannelMember(c.ID, m.ID)
	if err != nil || !added {
		return err
	}
	_, err = tx.Emit(bullpen.EventChannelJoined, c.ID, audienceOf(c), bullpen.Membership{ChannelID: c.ID, Member: m})
	return err
}

// audienceOf returns who may see events of c: nil (everyone) for public
// channels, the two members for a DM.
func audienceOf(c bullpen.Channel) []int64 {
	if c.Kind == bullpen.ChannelDM {
		return c.MemberIDs
	}
	return nil
}
