package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/bullpen-hq/bullpen"
)

// audience is the audience an event of kind typ is stored with: the one
// place where each kind's declared visibility (bullpen.EventKind) is
// enforced, for every event of every writer, before it is stored, fanned
// out by the hub or replayed to a feed.
//
// The kind's rule bounds who may see the event: everyone; for
// VisibleChannel the members of the event's channel when it is a direct
// message; for VisibleOwner the member its payload's owner_id names
// (admins see every event: Event.VisibleTo). The writer's audience may
// narrow that bound (a call outside any channel is its agent's alone),
// never widen it: a writer that gives none gets the bound, and one that
// names a member outside it is refused, so the change fails rather than
// show a direct message or a sandbox to someone else. An undeclared or
// ephemeral kind is refused too.
func (tx *Tx) audience(typ string, channelID int64, given []int64, body []byte) ([]int64, error) {
	k, ok := bullpen.EventKindOf(typ)
	switch {
	case !ok:
		return nil, fmt.Errorf("store: event kind %q is not declared (bullpen.EventKind)", typ)
	case k.Ephemeral:
		return nil, fmt.Errorf("store: event kind %q is ephemeral: it is published, never stored", typ)
	}
	var bound []int64 // nil: everyone
	switch k.Visibility {
	case bullpen.VisibleOwner:
		var p struct {
			OwnerID int64 `json:"owner_id"`
		}
		if json.Unmarshal(body, &p) != nil || p.OwnerID == 0 {
			return nil, fmt.Errorf("store: a %s event is its owner's, and its payload names no owner_id", typ)
		}
		bound = []int64{p.OwnerID}
	case bullpen.VisibleChannel:
		if channelID != 0 {
			var err error
			if bound, err = tx.channelAudience(channelID); err != nil {
				return nil, err
			}
		}
	}
	return narrow(typ, bound, given)
}

// narrow is the writer's audience within bound (nil: everyone).
func narrow(typ string, bound, given []int64) ([]int64, error) {
	switch {
	case bound == nil:
		return given, nil
	case len(given) == 0:
		return bound, nil
	}
	for _, id := range given {
		if !slices.Contains(bound, id) {
			return nil, fmt.Errorf("store: a %s event for members %v would reach member %d, outside its kind's audience %v", typ, given, id, bound)
		}
	}
	return given, nil
}

// channelAudience is who may see the events of a channel: nil (everyone)
// for a public channel, the members of a direct message. A channel's kind
// and a direct message's members never change, so once a transaction
// that read them commits they are kept (channelAudiences); until then
// they are the transaction's own (the channel may be new in it).
func (tx *Tx) channelAudience(id int64) ([]int64, error) {
	if aud, ok := tx.db.channelAud.get(id); ok {
		return aud, nil
	}
	if aud, ok := tx.chanAud[id]; ok {
		return aud, nil
	}
	var row channelRow
	if err := tx.g.Select("id", "kind").Take(&row, id).Error; err != nil {
		return nil, fmt.Errorf("store: the audience of channel %d: %w", id, notFound(err, "channel %d not found", id))
	}
	var aud []int64
	if bullpen.ChannelKind(row.Kind) == bullpen.ChannelDM {
		aud = []int64{} // not nil: a DM without members yet is seen by none
		if err := tx.g.Model(&channelMemberRow{}).Where("channel_id = ?", id).Order("member_id").Pluck("member_id", &aud).Error; err != nil {
			return nil, fmt.Errorf("store: the members of channel %d: %w", id, err)
		}
	}
	if aud != nil && len(aud) == 0 {
		return aud, nil // a DM whose members this transaction has yet to add: read again next time
	}
	if tx.chanAud == nil {
		tx.chanAud = map[int64][]int64{}
	}
	tx.chanAud[id] = aud
	return aud, nil
}

// channelAudiences keeps the audiences of channels read by committed
// transactions (Tx.channelAudience).
type channelAudiences struct{ m sync.Map }

func (c *channelAudiences) get(id int64) ([]int64, bool) {
	v, ok := c.m.Load(id)
	if !ok {
		return nil, false
	}
	return v.([]int64), true
}

// keep stores what a transaction read, once it has committed.
func (c *channelAudiences) keep(read map[int64][]int64) {
	for id, aud := range read {
		c.m.Store(id, aud)
	}
}
