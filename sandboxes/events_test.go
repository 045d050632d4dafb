package sandboxes_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// waitEvents polls the office until actor sees events of every type in
// want after since, and returns what it saw. Events are written behind
// the caller, so the test waits for them rather than for a time.
func waitEvents(t *testing.T, f *fixture, actor bullpen.Member, since int64, want ...string) []bullpen.Event {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		evs, err := f.off.Events(context.Background(), actor, since, 500)
		if err != nil {
			t.Fatal(err)
		}
		types := typesOf(evs)
		if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(types, w) }) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("events seen by %s = %v; want all of %v", actor.Handle, types, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func typesOf(evs []bullpen.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// Lifecycle changes and commands become office events the owner (and
// admins) see, and nobody else does; "started" is not repeated after
// "created".
func TestEventsReachOwnerOnly(t *testing.T) {
	f := newFixture(t, sandboxes.Config{})
	ctx := context.Background()
	since := f.off.Hub().Last()
	sb := f.create(t, f.alice, sandbox.Spec{Name: "ev"})
	res, err := f.svc.Run(ctx, f.alice, sb.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}}, 0)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if err := f.svc.Stop(ctx, f.alice, sb.ID); err != nil {
		t.Fatal(err)
	}
	evs := waitEvents(t, f, f.alice, since, bullpen.EventSandboxCreated, bullpen.EventSandboxExecStarted, bullpen.EventSandboxExecFinished, bullpen.EventSandboxState)
	var states []string
	for _, ev := range evs {
		switch ev.Type {
		case bullpen.EventSandboxCreated, bullpen.EventSandboxState:
			var p bullpen.SandboxStateEvent
			if err := json.Unmarshal(ev.Payload, &p); err != nil || p.ID != sb.ID || p.OwnerID != f.alice.ID || p.Name != "ev" {
				t.Errorf("%s payload = %s (%v)", ev.Type, ev.Payload, err)
			}
			states = append(states, p.Event+"/"+p.State)
		case bullpen.EventSandboxExecFinished:
			var p bullpen.SandboxExecEvent
			if err := json.Unmarshal(ev.Payload, &p); err != nil || p.ExitCode == nil || *p.ExitCode != 0 ||
				p.Command != "echo hi" || p.ByID != f.alice.ID || p.OwnerID != f.alice.ID {
				t.Errorf("exec_finished payload = %s (%v)", ev.Payload, err)
			}
		}
	}
	if want := []string{"created/running", "stopped/stopped"}; !slices.Equal(states, want) {
		t.Errorf("lifecycle events = %v, want %v", states, want)
	}
	waitEvents(t, f, f.admin, since, bullpen.EventSandboxCreated, bullpen.EventSandboxState)
	bobs, err := f.off.Events(ctx, f.bob, since, 500)
	if err != nil || len(bobs) != 0 {
		t.Errorf("bob sees %v, %v; want none of alice's sandbox events", typesOf(bobs), err)
	}
}
