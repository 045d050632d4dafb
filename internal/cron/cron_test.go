package cron

import (
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tz data:", err)
	}
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name, expr string
		loc        *time.Location
		want       time.Time
	}{
		{"every minute", "* * * * *", time.UTC, time.Date(2026, 3, 1, 9, 31, 0, 0, time.UTC)},
		{"every 15 min", "*/15 * * * *", time.UTC, time.Date(2026, 3, 1, 9, 45, 0, 0, time.UTC)},
		{"9am weekdays, tomorrow is Monday", "0 9 * * 1-5", time.UTC, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)},
		{"9am New York", "0 9 * * *", ny, time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)},
		{"first of month", "0 0 1 * *", time.UTC, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
		{"sunday as 7", "0 12 * * 7", time.UTC, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		s, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("%s: Parse(%q) = %v", tc.name, tc.expr, err)
		}
		if got, ok := s.Next(at, tc.loc); !ok || !got.Equal(tc.want) {
			t.Errorf("%s: Next = %v, %v; want %v", tc.name, got.UTC(), ok, tc.want)
		}
	}
	never, _ := Parse("0 0 31 2 *")
	if got, ok := never.Next(at, time.UTC); ok {
		t.Errorf("31 February: Next = %v, want none", got)
	}
	for _, bad := range []string{"", "* * * *", "60 * * * *", "* 24 * * *", "*/0 * * * *", "5-1 * * * *", "a * * * *"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = nil error, want one", bad)
		}
	}
}
