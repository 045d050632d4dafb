package web

import (
	"context"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// TimedSandboxes is sb with each successful Create timed by observe (the
// metrics' histogram of sandbox creates). A nil sb stays nil, so the
// routes still answer "unavailable".
func TimedSandboxes(sb Sandboxes, observe func(time.Duration)) Sandboxes {
	if sb == nil || observe == nil {
		return sb
	}
	return timedSandboxes{Sandboxes: sb, observe: observe}
}

// timedSandboxes times the creates of the Sandboxes it wraps.
type timedSandboxes struct {
	Sandboxes
	observe func(time.Duration)
}

// Create implements SandboxLifecycle, timing successful creates.
func (t timedSandboxes) Create(ctx context.Context, actor bullpen.Member, spec sandbox.Spec) (sandbox.Info, error) {
	start := time.Now()
	info, err := t.Sandboxes.Create(ctx, actor, spec)
	if err == nil {
		t.observe(time.Since(start))
	}
	return info, err
}
