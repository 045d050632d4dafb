package bullpen

import (
	"encoding/json"
	"regexp"
	"strings"
)

// MaxEventKinds bounds the kinds one event query may name.
const MaxEventKinds = 30

// EventFilter selects stored events. With Before set the page runs
// backwards (newest first) from Before; otherwise forwards (oldest first)
// after After, as the websocket resume does. Zero fields do not filter.
type EventFilter struct {
	After     int64    // seq > After
	Before    int64    // seq < Before; 0: no upper bound, forwards
	Limit     int      // 1..1000
	ActorID   int64    // the member who acted (see EventActorID)
	ChannelID int64    // the channel the event happened in
	Kinds     []string // event types ("agent.tool_finished") or namespaces ("wiki")
	// ExcludeKinds leaves these event types out (the timeline's
	// highlights leave out DetailKinds).
	ExcludeKinds []string
}

// Backwards reports whether the page runs newest first.
func (f EventFilter) Backwards() bool { return f.Before > 0 }

var eventKindRE = regexp.MustCompile(`^[a-z][a-z_]*(\.[a-z][a-z_]*)?$`)

// Validate checks the filter's bounds and the shape of its kinds.
func (f EventFilter) Validate() error {
	switch {
	case f.After < 0:
		return Errorf(EINVALID, "after must not be negative")
	case f.Before < 0:
		return Errorf(EINVALID, "before must not be negative")
	case f.Before > 0 && f.Before <= f.After+1:
		return Errorf(EINVALID, "before (%d) must be more than after+1 (%d)", f.Before, f.After+1)
	case f.Limit < 1 || f.Limit > 1000:
		return Errorf(EINVALID, "limit must be between 1 and 1000")
	case len(f.Kinds) > MaxEventKinds || len(f.ExcludeKinds) > MaxEventKinds:
		return Errorf(EINVALID, "at most %d kinds may be given", MaxEventKinds)
	}
	for _, k := range f.ExcludeKinds {
		if !eventKindRE.MatchString(k) || !strings.Contains(k, ".") {
			return Errorf(EINVALID, "excluded kind %q is not an event type like agent.tool_started", k)
		}
	}
	for _, k := range f.Kinds {
		if !eventKindRE.MatchString(k) {
			return Errorf(EINVALID, "kind %q is not an event type like message.posted or a namespace like wiki", k)
		}
	}
	return nil
}

// EventPage is one page of stored events. NextBefore, for a backwards
// page, is the before= of the next (older) page; 0 when no older event
// matches.
type EventPage struct {
	Items      []Event `json:"items"`
	NextBefore int64   `json:"next_before"`
}

// idField reads an integer field of a decoded payload, 0 when absent or
// of another type.
func idField(p map[string]json.RawMessage, path string) int64 {
	name, rest, nested := strings.Cut(path, ".")
	raw, ok := p[name]
	if !ok || name == "" {
		return 0
	}
	if nested {
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) != nil {
			return 0
		}
		return idField(inner, rest)
	}
	var id int64
	if json.Unmarshal(raw, &id) != nil {
		return 0
	}
	return id
}

// EventLine is an event as a person reads it in the timeline: one line of
// text and where clicking it leads ("" for nowhere).
type EventLine struct {
	Text string `json:"line"`
	Link string `json:"link,omitempty"`
}

// EventNames resolves the ids in events to the names a line shows.
type EventNames interface {
	// MemberHandle returns a member's handle, "" when unknown.
	MemberHandle(id int64) string
	// ChannelName returns a channel's name ("" when unknown) and
	// whether it is a direct message.
	ChannelName(id int64) (name string, dm bool)
}
