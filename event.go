package bullpen

import (
	"encoding/json"
	"time"
)

// Event types written by the office core. Other packages add their own with
// the same "noun.verb" shape.
const (
	EventMessagePosted  = "message.posted"
	EventMessageEdited  = "message.edited"
	EventMessageDeleted = "message.deleted"
	EventChannelCreated = "channel.created"
	EventChannelJoined  = "channel.joined"
	EventChannelLeft    = "channel.left"
	EventMemberCreated  = "member.created"
	EventMemberUpdated  = "member.updated"
)

// Event is one visible change, stored in the same transaction as the change.
// Seq is global and increasing; ephemeral events (token deltas, output
// chunks) are never stored and have Seq 0.
type Event struct {
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	ChannelID int64           `json:"channel_id,omitempty"`
	Payload   json.RawMessage `json:"payload"`
	At        time.Time       `json:"at"`
	// Audience limits who may see the event (DM members); empty = everyone.
	Audience []int64 `json:"-"`
	// Encoded caches the event's JSON encoding when the writer made it, so
	// fanning one event out to many clients encodes it once.
	Encoded json.RawMessage `json:"-"`
}

// JSON returns the event's JSON encoding, cached or made now.
func (e *Event) JSON() ([]byte, error) {
	if e.Encoded != nil {
		return e.Encoded, nil
	}
	return json.Marshal(e)
}

// VisibleTo reports whether member id may see the event.
func (e *Event) VisibleTo(id int64, admin bool) bool {
	if len(e.Audience) == 0 || admin {
		return true
	}
	for _, a := range e.Audience {
		if a == id {
			return true
		}
	}
	return false
}
