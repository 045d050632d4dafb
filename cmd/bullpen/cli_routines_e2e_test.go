package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// bullpen routine … against the real binary: create (bad input exits
// non-zero and creates nothing), list, show, edit (off, on, another
// schedule), its ticks as a 1-second schedule fires, delete.
func TestCLIRoutineCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	bin := buildBinary(t)
	srv := startServer(t, bin, t.TempDir(), append(os.Environ(), "BULLPEN_SANDBOXES=off", "BULLPEN_TELEGRAM_TOKEN="))
	must(t, bin, srv, 0, nil, "agents", "hire", "--handle", "pm", "starter/pm")

	must(t, bin, srv, 2, nil, "routine", "create", "Standup")                                         // no schedule, no action
	must(t, bin, srv, 2, nil, "routine", "create", "--every", "1h", "Standup")                        // no action
	must(t, bin, srv, 2, nil, "routine", "create", "--every", "soon", "--task", "Triage", "Standup")  // not a duration
	must(t, bin, srv, 1, nil, "routine", "create", "--cron", "0 9 31 2 *", "--task", "Triage", "Feb") // never fires
	if ls := must(t, bin, srv, 0, nil, "routine", "list"); strings.TrimSpace(ls) != "" {
		t.Fatalf("routines after bad input:\n%s", ls)
	}

	var r bullpen.Routine
	out := must(t, bin, srv, 0, nil, "routine", "create", "--json", "--cron", "0 9 * * 1-5", "--tz", "Europe/Paris",
		"--agent", "@pm", "--prompt", "What is on today?", "--skip", "no_new_messages", "Morning", "standup")
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Name != "Morning standup" || r.Cron != "0 9 * * 1-5" ||
		r.TZ != "Europe/Paris" || r.Action != bullpen.RoutineWake || r.Skip != bullpen.SkipNoNewMessages || !r.Enabled || r.NextRunAt == nil {
		t.Fatalf("routine create: %v %+v", err, r)
	}
	id := strconv.FormatInt(r.ID, 10)
	if ls := must(t, bin, srv, 0, nil, "routine", "list"); !strings.Contains(ls, "Morning standup") || !strings.Contains(ls, "Europe/Paris") {
		t.Fatalf("routine list:\n%s", ls)
	}
	if show := must(t, bin, srv, 0, nil, "routine", "show", id); !strings.Contains(show, "wake @pm: What is on today?") ||
		!strings.Contains(show, "skip: no_new_messages") {
		t.Fatalf("routine show:\n%s", show)
	}
	if got := must(t, bin, srv, 0, nil, "routine", "edit", "--off", id); !strings.Contains(got, "off") {
		t.Fatalf("routine edit --off: %s", got)
	}
	must(t, bin, srv, 2, nil, "routine", "edit", id)                  // nothing to change
	must(t, bin, srv, 2, nil, "routine", "edit", "--on", "--off", id) // both
	must(t, bin, srv, 1, nil, "routine", "edit", "--skip", "sometimes", id)
	// On again, every second, creating a task: it ticks.
	out = must(t, bin, srv, 0, nil, "routine", "edit", "--json", "--on", "--every", "1s", "--task", "Triage the inbox", "--skip", "never", id)
	r = bullpen.Routine{} // fields the answer leaves out are empty
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Enabled || r.IntervalSec != 1 || r.Cron != "" || r.TZ != "" ||
		r.Action != bullpen.RoutineTask || r.Task == nil || r.Task.Title != "Triage the inbox" || r.Skip != "" {
		t.Fatalf("routine edit: %v %+v", err, r)
	}
	deadline := time.Now().Add(30 * time.Second)
	ticks := ""
	for time.Now().Before(deadline) {
		if ticks = must(t, bin, srv, 0, nil, "routine", "ticks", id); strings.Contains(ticks, "fired") && strings.Contains(ticks, "task ") {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !strings.Contains(ticks, "fired") || !strings.Contains(ticks, "task ") {
		t.Fatalf("routine ticks after 30s of a 1-second schedule:\n%s", ticks)
	}
	if ts := must(t, bin, srv, 0, nil, "task", "list"); !strings.Contains(ts, "Triage the inbox") {
		t.Fatalf("the routine's tasks:\n%s", ts)
	}
	must(t, bin, srv, 0, nil, "routine", "delete", id)
	must(t, bin, srv, 4, nil, "routine", "show", id)
	must(t, bin, srv, 2, nil, "routine", "show", "x")
}
