package web

import (
	"testing"
	"time"
)

// The least interval between two frames to a busy feed is FrameInterval
// until the open feeds would write more than FrameBudget frames a second
// together; then it grows with them.
func TestFrameIntervalSharesBudget(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		budget   int
		feeds    int64
		want     time.Duration
	}{
		{10 * time.Millisecond, 8000, 1, 10 * time.Millisecond},
		{10 * time.Millisecond, 8000, 80, 10 * time.Millisecond},
		{10 * time.Millisecond, 8000, 300, 37500 * time.Microsecond},
		{10 * time.Millisecond, -1, 300, 10 * time.Millisecond}, // no budget
		{-1, 8000, 4, 500 * time.Microsecond},                   // no interval, still the budget
		{-1, -1, 300, 0},
	} {
		s := &Server{cfg: Config{FrameInterval: c.interval, FrameBudget: c.budget}}
		s.feeds.Store(c.feeds)
		if got := s.frameInterval(); got != c.want {
			t.Errorf("interval %v, budget %d, %d feeds: frame interval %v, want %v", c.interval, c.budget, c.feeds, got, c.want)
		}
	}
}
