package bullpen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// AgentIDOf returns the agent an agent.* or approval.* event is about.
// Their payloads carry it as agent_id (package agents keeps to that), so a
// stream of one agent's activity can filter on it without knowing each
// payload type. agent.hired and agent.updated carry the agent itself,
// whose id is "id": they give 0.
func AgentIDOf(ev Event) (int64, error) {
	if !strings.HasPrefix(ev.Type, "agent.") && !strings.HasPrefix(ev.Type, "approval.") {
		return 0, &Error{Code: EINVALID, Message: fmt.Sprintf("event %d is %q, not about an agent", ev.Seq, ev.Type)}
	}
	var p struct {
		AgentID int64 `json:"agent_id"`
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return 0, &Error{Code: EINVALID, Message: fmt.Sprintf("decode %s event %d", ev.Type, ev.Seq), Err: err}
	}
	return p.AgentID, nil
}

// DecodePayload decodes ev's payload as a T, the payload type of the event
// types listed. An event of another type, or a payload that is not a T,
// is an EINVALID error that names the event type and sequence number, so
// a log line says which event was bad. Packages that own event types give
// each a one-line typed decoder built on it, beside the constant.
func DecodePayload[T any](ev Event, types ...string) (T, error) {
	var v T
	if !slices.Contains(types, ev.Type) {
		return v, &Error{Code: EINVALID, Message: fmt.Sprintf("event %d is %q, not %v", ev.Seq, ev.Type, types)}
	}
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		return v, &Error{Code: EINVALID, Message: fmt.Sprintf("decode %s event %d", ev.Type, ev.Seq), Err: err}
	}
	return v, nil
}

// Event is one visible change, stored in the same transaction as the change.
// Seq is global and increasing; ephemeral events (token deltas, output
// chunks) are never stored and have Seq 0.
type Event struct {
	Seq       int64  `json:"seq"`
	Type      string `json:"type"`
	ChannelID int64  `json:"channel_id,omitempty"`
	// ActorID is the member who acted (EventActorID), 0 when none.
	ActorID int64           `json:"actor_id,omitempty"`
	Payload json.RawMessage `json:"payload"`
	At      time.Time       `json:"at"`
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
