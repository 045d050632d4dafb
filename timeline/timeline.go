// Package timeline turns stored office events into the lines a person
// reads in the Activity timeline ("@engineer ran `df -h` → exit 0 in
// 12 ms") and the place clicking each line opens: the message in its
// thread, the wiki diff, the command with its output, or the turn.
//
// Each kind's line is declared with the kind itself (bullpen.EventKind);
// this package applies the declarations and reports payloads that do not
// decode.
package timeline

import (
	"log/slog"
	"slices"

	"github.com/bullpen-hq/bullpen"
)

// Lines describes events; the zero value is ready. It is stateless: the
// names come with each call.
type Lines struct {
	// Log, when set, hears of payloads that do not decode.
	Log *slog.Logger
}

// Kinds lists the event kinds Lines describes, sorted: the stored kinds
// declared with a line.
func (Lines) Kinds() []string {
	var out []string
	for _, k := range bullpen.EventKinds() {
		if k.Line != nil && !k.Ephemeral {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Line returns ev's line. A kind without a line, or a payload that does
// not decode, still gets a plain line naming the kind, so the timeline
// never hides an event.
func (l Lines) Line(ev bullpen.Event, n bullpen.EventNames) bullpen.EventLine {
	line, err := bullpen.LineOf(ev, n)
	if err != nil && l.Log != nil {
		l.Log.Warn("timeline: bad payload", "seq", ev.Seq, "type", ev.Type, "err", err)
	}
	return line
}
