package bullpen

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The words the kinds' timeline lines are made of. A line names people
// by handle and channels by name through EventNames, so the reader's own
// view decides what shows: a DM is "a direct message", a channel they
// may not see is left out.

// plainLine is the line of a kind without a Line function, or whose
// payload does not decode: it names the actor and the kind, so the
// timeline never hides an event.
func plainLine(ev Event, n EventNames, suffix string) EventLine {
	return EventLine{Text: fmt.Sprintf("%s %s%s", actor(n, ev.ActorID), ev.Type, suffix)}
}

// LineOf returns ev's timeline line and whether its payload decoded: the
// kind's Line, or the plain line naming the kind when it has none or
// the payload is unreadable ("(unreadable details)").
func LineOf(ev Event, n EventNames) (EventLine, error) {
	k, ok := EventKindOf(ev.Type)
	if !ok || k.Line == nil {
		return plainLine(ev, n, ""), nil
	}
	line, err := k.Line(ev, n)
	if err != nil {
		return plainLine(ev, n, " (unreadable details)"), err
	}
	return line, nil
}

// at is "@handle", or a stand-in when the member is unknown.
func at(handle string) string {
	if handle == "" {
		return "someone"
	}
	return "@" + handle
}

func actor(n EventNames, id int64) string { return at(n.MemberHandle(id)) }

// chanRef names a channel: "#general", "a direct message", or "" when
// the reader may not see it.
func chanRef(n EventNames, id int64) string {
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
func where(n EventNames, id int64) string {
	if ref := chanRef(n, id); ref != "" {
		return "in " + ref
	}
	return ""
}

// channelLink opens a channel, or a thread in it when root is set.
func channelLink(n EventNames, id, root int64) string {
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

// clipLine shortens s to n characters on one line.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// code quotes a command the way the dashboard shows it: `make test`.
func code(s string) string { return "`" + clipLine(s, 80) + "`" }

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

func plural(k int, word string) string {
	if k == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", k, word)
}
