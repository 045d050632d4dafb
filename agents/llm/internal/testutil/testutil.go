// Package testutil has helpers shared by the provider tests.
package testutil

import (
	"sync"
	"time"
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
