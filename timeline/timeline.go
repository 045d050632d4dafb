// Package timeline turns stored office events into the lines a person
// reads in the Activity timeline ("@engineer ran `df -h` → exit 0 in
// 12 ms") and the place clicking each line opens: the message in its
// thread, the wiki diff, the command with its output, or the turn.
//
// One function per event kind, each reading its payload with the typed
// decoder of the package that owns the event, so a payload change breaks
// a test here rather than a line on the dashboard.
package timeline

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
)

// describe is the line function of one event kind.
type describe func(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error)

// Lines describes events; the zero value is ready. It is stateless: the
// names come with each call.
type Lines struct {
	// Log, when set, hears of payloads that do not decode.
	Log *slog.Logger
}

var byKind = map[string]describe{}

func register(kind string, fn describe) { byKind[kind] = fn }

// Kinds lists the event kinds Lines describes, sorted: the stored kinds
// the office emits today.
func (Lines) Kinds() []string { return slices.Sorted(maps.Keys(byKind)) }

// Line returns ev's line. A kind without a line function, or a payload
// that does not decode, still gets a plain line naming the kind, so the
// timeline never hides an event.
func (l Lines) Line(ev bullpen.Event, n bullpen.EventNames) bullpen.EventLine {
	fn, ok := byKind[ev.Type]
	if !ok {
		return bullpen.EventLine{Text: fmt.Sprintf("%s %s", actor(n, ev.ActorID), ev.Type)}
	}
	line, err := fn(ev, n)
	if err != nil {
		if l.Log != nil {
			l.Log.Warn("timeline: bad payload", "seq", ev.Seq, "type", ev.Type, "err", err)
		}
		return bullpen.EventLine{Text: fmt.Sprintf("%s %s (unreadable details)", actor(n, ev.ActorID), ev.Type)}
	}
	return line
}

// at is "@handle", or a stand-in when the member is unknown.
func at(handle string) string {
	if handle == "" {
		return "someone"
	}
	return "@" + handle
}

func actor(n bullpen.EventNames, id int64) string { return at(n.MemberHandle(id)) }

// chanRef names a channel: "#general", "a direct message", or "" when
// the reader may not see it.
func chanRef(n bullpen.EventNames, id int64) string {
	name, dm := n.ChannelName(id)
	switch {
	case dm:
		return "a direct message"
	case name == "":
		return ""
	default:
		return "#" + name
	}
}

// where names a channel the way a sentence ends: "in #general".
func where(n bullpen.EventNames, id int64) string {
	if ref := chanRef(n, id); ref != "" {
		return "in " + ref
	}
	return ""
}

// channelLink opens a channel, or a thread in it when root is set.
func channelLink(n bullpen.EventNames, id, root int64) string {
	name, _ := n.ChannelName(id)
	if name == "" {
		return ""
	}
	link := "/c/" + name
	if root != 0 {
		link += fmt.Sprintf("#thread-%d", root)
	}
	return link
}

func turnLink(id int64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf("/turns/%d", id)
}

// clip shortens s to n characters on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// code quotes a command the way the dashboard shows it: `make test`.
func code(s string) string { return "`" + clip(s, 80) + "`" }

// join puts words together, skipping empty ones.
func join(words ...string) string {
	out := words[:0]
	for _, w := range words {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// ms says a duration the way people read it: 12 ms, 1.4 s, 2 min 5 s.
func ms(d int64) string {
	switch {
	case d < 1000:
		return fmt.Sprintf("%d ms", d)
	case d < 60_000:
		return fmt.Sprintf("%.1f s", float64(d/100)/10) // truncated: never "60.0 s"
	default:
		return fmt.Sprintf("%d min %d s", d/60_000, d%60_000/1000)
	}
}
