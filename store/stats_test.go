package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// TestStatsForMetrics checks the counts the metrics read on each scrape:
// running turns, and tokens summed per provider, on every dialect.
func TestStatsForMetrics(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ids := inboxFixture(t, db, 2, 1)
		lease := time.Now().Add(time.Minute)
		first, _, err := claim(db, ids[0], "p1", lease, 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := claim(db, ids[1], "p1", lease, 5); err != nil {
			t.Fatal(err)
		}
		if n, err := db.RunningTurns(ctx); err != nil || n != 2 {
			t.Errorf("RunningTurns = %d, %v; want 2", n, err)
		}
		first.Provider, first.InputTokens, first.CachedInputTokens, first.OutputTokens = "anthropic", 1200, 1000, 80
		first.State = bullpen.TurnDone
		if _, err := db.Transact(ctx, func(tx *store.Tx) error { return tx.FinishTurn(first, bullpen.WakeDone) }); err != nil {
			t.Fatal(err)
		}
		if n, err := db.RunningTurns(ctx); err != nil || n != 1 {
			t.Errorf("RunningTurns after one finished = %d, %v; want 1", n, err)
		}
		rows, err := db.TokensByProvider(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got *store.ProviderTokens
		for i := range rows {
			if rows[i].Provider == "anthropic" {
				got = &rows[i]
			}
		}
		if got == nil || got.Input != 1200 || got.CachedInput != 1000 || got.Output != 80 {
			t.Errorf("TokensByProvider = %+v, want anthropic 1200/1000/80", rows)
		}
	})
}
