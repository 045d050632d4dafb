package llm

import (
	"context"
	"fmt"
	"time"
)

// Timeouts bound the network waits of one model call. A zero field means
// the provider's default.
type Timeouts struct {
	// Connect bounds opening the connection (TCP and TLS).
	Connect time.Duration
	// FirstByte bounds the wait from sending the request to the first
	// byte of the answer's body: a provider that accepts and never
	// answers fails here.
	FirstByte time.Duration
	// Idle bounds a silence between two reads of a streaming answer.
	Idle time.Duration
}

// Or returns t with its zero fields taken from def.
func (t Timeouts) Or(def Timeouts) Timeouts {
	pick := func(a, b time.Duration) time.Duration {
		if a > 0 {
			return a
		}
		return b
	}
	return Timeouts{Connect: pick(t.Connect, def.Connect), FirstByte: pick(t.FirstByte, def.FirstByte), Idle: pick(t.Idle, def.Idle)}
}

// Default timeouts of the HTTP providers.
var DefaultTimeouts = Timeouts{Connect: 10 * time.Second, FirstByte: 60 * time.Second, Idle: 30 * time.Second}

type timeoutsKey struct{}

// WithTimeouts returns a context whose model calls use t (its non-zero
// fields) instead of the provider's timeouts: per-role settings travel so.
func WithTimeouts(ctx context.Context, t Timeouts) context.Context {
	return context.WithValue(ctx, timeoutsKey{}, t)
}

// TimeoutsFrom returns the timeouts set with WithTimeouts, or zero ones.
func TimeoutsFrom(ctx context.Context) Timeouts {
	t, _ := ctx.Value(timeoutsKey{}).(Timeouts)
	return t
}

// Phases of a model call a TimeoutError names.
const (
	PhaseConnect   = "connect"
	PhaseFirstByte = "first byte"
	PhaseIdle      = "idle"
)

// TimeoutError is a model call that waited too long at one phase.
type TimeoutError struct {
	Phase string
	After time.Duration
}

func (e *TimeoutError) Error() string {
	switch e.Phase {
	case PhaseConnect:
		return fmt.Sprintf("could not connect within %s (connect timeout)", e.After)
	case PhaseFirstByte:
		return fmt.Sprintf("no answer within %s (first-byte timeout)", e.After)
	}
	return fmt.Sprintf("the answer stalled for %s (idle timeout)", e.After)
}

// Timeout reports true, as net.Error timeouts do.
func (e *TimeoutError) Timeout() bool { return true }
