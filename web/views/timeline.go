package views

import (
	"html/template"
	"strings"
	"time"
)

// TimelineView is the Activity timeline: the newest page of the stored
// event log (filtered as the page URL says), rendered by the server so a
// reload shows it at once; static/timeline.js adds older pages and live
// entries from GET /api/v1/events.
type TimelineView struct {
	Entries    []TimelineEntry // newest first
	NextBefore int64           // before= of the next older page; 0: none
	After      int64           // the page is current to this seq; live entries come after it
	// Agent, Channel and Kind are the filters as the URL gave them.
	Agent, Channel, Kind string
	Members              []MemberItem  // the agent filter's choices
	Channels             []ChannelItem // the channel filter's choices
	Kinds                []KindOption  // the kind filter's choices
	Error                string        // a bad filter, said in words
}

// KindOption is one choice of the kind filter: a namespace ("wiki") or
// an exact event type.
type KindOption struct {
	Value, Label string
}

// TimelineEntry is one line of the timeline.
type TimelineEntry struct {
	Seq   int64
	At    time.Time
	Kind  string // the event type
	Line  string // e.g. "@engineer ran `df -h` → exit 0 in 12 ms"
	Link  string // what clicking opens; "" for nothing
	Actor string // the actor's handle
}

// ReplyItem is one reply shown under its root message in the channel.
type ReplyItem struct {
	ID                       int64
	AuthorHandle, AuthorName string
	AuthorKind               string
	HTML                     template.HTML // sanitized by the server; inserted as is
}

// linePart is a run of a line: text, or `code` shown as code.
type linePart struct {
	Text string
	Code bool
}

// lineParts splits a line at backticks; static/timeline.js splits the
// same way.
func lineParts(s string) []linePart {
	var out []linePart
	for i, p := range strings.Split(s, "`") {
		if p != "" {
			out = append(out, linePart{Text: p, Code: i%2 == 1})
		}
	}
	return out
}
