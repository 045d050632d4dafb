// Package testutil has helpers shared by the provider tests.
package testutil

import (
	"context"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// Sleeps records the waits a provider asks for instead of waiting.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d.
func (s *Sleeps) Sleep(d time.Duration) {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
}

// All returns the recorded waits.
func (s *Sleeps) All() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// Deltas collects streamed text pieces.
type Deltas struct {
	mu sync.Mutex
	p  []string
}

// Add records a delta; pass it as onDelta.
func (d *Deltas) Add(s string) {
	d.mu.Lock()
	d.p = append(d.p, s)
	d.mu.Unlock()
}

// All returns the deltas in order.
func (d *Deltas) All() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.p...)
}

// Calls is an llm.Recorder that keeps the model calls it is given.
type Calls struct {
	mu sync.Mutex
	c  []bullpen.ModelCall
}

// RecordModelCall implements llm.Recorder.
func (r *Calls) RecordModelCall(_ context.Context, c bullpen.ModelCall) error {
	r.mu.Lock()
	r.c = append(r.c, c)
	r.mu.Unlock()
	return nil
}

// All returns the recorded calls.
func (r *Calls) All() []bullpen.ModelCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bullpen.ModelCall(nil), r.c...)
}
