package web

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// createOnly is a Sandboxes whose Create waits and then fails when told.
type createOnly struct {
	Sandboxes
	fail bool
}

func (c createOnly) Create(context.Context, bullpen.Member, sandbox.Spec) (sandbox.Info, error) {
	time.Sleep(5 * time.Millisecond)
	if c.fail {
		return sandbox.Info{}, errors.New("no room")
	}
	return sandbox.Info{ID: "sb-1"}, nil
}

// TimedSandboxes observes each successful create with its duration, and
// neither a failed one nor an absent service.
func TestTimedSandboxes(t *testing.T) {
	var seen []time.Duration
	observe := func(d time.Duration) { seen = append(seen, d) }
	if TimedSandboxes(nil, observe) != nil {
		t.Fatal("TimedSandboxes(nil) is not nil: the routes would not answer unavailable")
	}
	ok := TimedSandboxes(createOnly{}, observe)
	if info, err := ok.Create(context.Background(), bullpen.Member{}, sandbox.Spec{}); err != nil || info.ID != "sb-1" {
		t.Fatalf("Create = %+v, %v", info, err)
	}
	if _, err := TimedSandboxes(createOnly{fail: true}, observe).Create(context.Background(), bullpen.Member{}, sandbox.Spec{}); err == nil {
		t.Fatal("the failed create's error was lost")
	}
	if len(seen) != 1 || seen[0] < 5*time.Millisecond {
		t.Fatalf("observed %v, want one create of at least 5ms", seen)
	}
}
