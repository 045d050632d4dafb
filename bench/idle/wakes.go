package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/benchkit"
)

// wake is one measured wake: the client's figure and the server's spans
// (from the events' own timestamps) that make it up.
type wake struct {
	total time.Duration // post sent → first output on the websocket
	spans map[string]time.Duration
}

// span names, in the order they happen.
// turn_started→sandbox_started shorter than turn_started→tool_started
// means the sandbox was up before the first tool call wanted it.
var spanNames = []string{"post→turn_started", "turn_started→sandbox_started", "turn_started→tool_started", "tool_started→output"}

// wakeResult is both cases' wakes.
type wakeResult struct{ stopped, running []wake }

// measureWakes wakes cfg.wakes agents whose sandboxes were stopped for
// idleness, each once with it stopped and at once again with it running.
func (b *bench) measureWakes() (wakeResult, error) {
	var r wakeResult
	byName := map[string]string{}
	sbs, err := b.c.Sandboxes(b.ctx, nil, false)
	if err != nil {
		return r, err
	}
	for _, sb := range sbs {
		byName[sb.Name] = sb.ID
	}
	for _, a := range b.agents[:b.cfg.wakes] {
		id := byName["agent-"+a.Handle]
		sb, err := b.c.Sandbox(b.ctx, id)
		if err != nil {
			return r, fmt.Errorf("@%s's sandbox: %w", a.Handle, err)
		}
		if sb.State != "stopped" {
			return r, fmt.Errorf("@%s's sandbox is %s, not stopped for idleness", a.Handle, sb.State)
		}
		for _, into := range []*[]wake{&r.stopped, &r.running} {
			w, err := b.wakeOnce(a, id)
			if err != nil {
				return r, err
			}
			*into = append(*into, w)
		}
	}
	return r, nil
}

// wakeOnce posts an @mention of a and times it to the first output of
// the command it runs in sandbox id.
func (b *bench) wakeOnce(a bullpen.AgentView, id string) (wake, error) {
	t0 := time.Now()
	msg, err := b.c.Post(b.ctx, b.channel, 0, "@"+a.Handle+" please run echo hi")
	if err != nil {
		return wake{}, err
	}
	got, err := b.w.untilTurnEnd(a.ID, 2*time.Minute)
	if err != nil {
		return wake{}, err
	}
	out, ok := firstOutput(got, id, "hi")
	if !ok {
		return wake{}, fmt.Errorf("@%s: the turn ended without the output of echo hi", a.Handle)
	}
	w := wake{total: out.at.Sub(t0), spans: map[string]time.Duration{}}
	posted, _ := firstOf(got, bullpen.EventMessagePosted, func(p json.RawMessage) bool { return idIs(p, msg.ID) })
	started, _ := firstOf(got, "agent.turn_started", nil)
	tool, _ := firstOf(got, "agent.tool_started", nil)
	// Stored events are stamped when written: the sandbox's "started" a
	// little after its start returned (the sandboxes write their events
	// from a queue).
	sbStart, restarted := firstOf(got, "sandbox.state", func(p json.RawMessage) bool {
		var s struct{ ID, Event string }
		return json.Unmarshal(p, &s) == nil && s.ID == id && s.Event == "started"
	})
	w.spans[spanNames[0]] = started.ev.At.Sub(posted.ev.At)
	if restarted {
		w.spans[spanNames[1]] = sbStart.ev.At.Sub(started.ev.At)
	}
	w.spans[spanNames[2]] = tool.ev.At.Sub(started.ev.At)
	w.spans[spanNames[3]] = out.ev.At.Sub(tool.ev.At)
	return w, nil
}

func idIs(p json.RawMessage, id int64) bool {
	var m struct{ ID int64 }
	return json.Unmarshal(p, &m) == nil && m.ID == id
}

func (r wakeResult) print() {
	run, stop := p50(r.running, nil), p50(r.stopped, nil)
	fmt.Printf("wake → first output of `echo hi` (post sent → output on the websocket), %d wakes each:\n", len(r.running))
	fmt.Printf("  sandbox running: p50 %.1f ms, p95 %.1f ms\n", msOf(run), msOf(pct(r.running, 95)))
	fmt.Printf("  sandbox stopped for idleness: p50 %.1f ms, p95 %.1f ms\n", msOf(stop), msOf(pct(r.stopped, 95)))
	fmt.Printf("  server spans (p50, event timestamps):\n")
	for _, n := range spanNames {
		fmt.Printf("    %-30s running %7.1f ms   stopped %7.1f ms\n", n, msOf(p50(r.running, &n)), msOf(p50(r.stopped, &n)))
	}
	fmt.Printf("figure wake_output_running_p50 %.1f ms\n", msOf(run))
	fmt.Printf("figure wake_output_stopped_p50 %.1f ms\n", msOf(stop))
	fmt.Printf("figure wake_stopped_extra_p50 %.1f ms\n", msOf(stop-run))
}

// p50 is the median total, or of the span named (wakes without it skipped).
func p50(ws []wake, span *string) time.Duration {
	var d []time.Duration
	for _, w := range ws {
		if span == nil {
			d = append(d, w.total)
		} else if v, ok := w.spans[*span]; ok {
			d = append(d, v)
		}
	}
	return benchkit.Percentile(d, 50)
}

func pct(ws []wake, p int) time.Duration {
	d := make([]time.Duration, len(ws))
	for i, w := range ws {
		d[i] = w.total
	}
	return benchkit.Percentile(d, p)
}
