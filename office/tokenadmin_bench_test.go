package office_test

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/store"
)

// BenchmarkAuthenticate is what each API request pays to check its token,
// last_used_at upkeep included. "throttled" is the real case (requests
// within a minute of each other: no write); "write_every_time" advances
// the clock past the interval before each request, the cost without the
// throttle.
func BenchmarkAuthenticate(b *testing.B) {
	for _, tc := range []struct {
		name string
		step time.Duration // clock advance per request
	}{{"throttled", time.Millisecond}, {"write_every_time", 2 * time.Minute}} {
		b.Run(tc.name, func(b *testing.B) {
			c := &clock{t: time.Now()}
			_, off := openClocked(b, store.SQLite, c)
			ctx := context.Background()
			secret, err := off.Bootstrap(ctx, "admin")
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c.Add(tc.step)
				if _, err := off.Authenticate(ctx, secret); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
