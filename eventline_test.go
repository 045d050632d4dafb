package bullpen

import "testing"

// TestDurations: the durations lines show, at each unit's edge.
func TestDurations(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want string
	}{{0, "0 ms"}, {999, "999 ms"}, {1000, "1.0 s"}, {1449, "1.4 s"}, {59_999, "59.9 s"}, {60_000, "1 min 0 s"}, {125_400, "2 min 5 s"}} {
		if got := ms(c.ms); got != c.want {
			t.Errorf("ms(%d) = %q, want %q", c.ms, got, c.want)
		}
	}
}
