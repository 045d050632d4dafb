package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// TestReserveTokensTwoReplicas: two processes (two handles on one
// database) reserve tokens for two running turns of one agent at once;
// the day's budget counts every reservation, so together they are granted
// no more than it.
func TestReserveTokensTwoReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		dbs := make([]*store.DB, 2)
		for i := range dbs {
			db, err := store.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs[i] = db
		}
		agent := inboxFixture(t, dbs[0], 1, 2)[0]
		var turns []int64
		for range 2 {
			turn, _, err := claim(dbs[0], agent, "a", time.Now().Add(time.Hour), 1)
			if err != nil {
				t.Fatal(err)
			}
			turns = append(turns, turn.ID)
		}
		const daily = 10_000
		var mu sync.Mutex
		granted, refused := 0, 0
		var wg sync.WaitGroup
		for i := range 24 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var res store.ReserveResult
				_, err := dbs[i%2].Transact(ctx, func(tx *store.Tx) error {
					var err error
					res, err = tx.ReserveTokens(store.ReserveTokens{AgentID: agent, TurnID: turns[i/2%2], Input: 100, MaxOutput: 900,
						TurnLimit: 1_000_000, DailyLimit: daily, DayStart: time.Now().UTC().Truncate(24 * time.Hour),
						Expires: time.Now().Add(time.Hour)})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if res.Refused != "" {
					refused++
					return
				}
				granted += res.Input + res.Output
			}()
		}
		wg.Wait()
		if granted != daily || refused != 14 {
			t.Errorf("granted %d tokens, refused %d calls; want exactly the daily %d and 14 refused", granted, refused, daily)
		}
	})
}

// TestFinishTurnKeepsSettledCalls: a gateway call that settles while its
// turn finishes (or just before, after the process took its count) stays
// charged. FinishTurn adds what the process counted itself (the built-in
// loop's calls) to the row instead of overwriting the row with it, which
// dropped such a call from the turn's totals while the day's budget had
// already counted it.
func TestFinishTurnKeepsSettledCalls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		agent := inboxFixture(t, db, 1, 1)[0]
		turn, _, err := claim(db, agent, "a", time.Now().Add(time.Hour), 1)
		if err != nil {
			t.Fatal(err)
		}
		var res store.ReserveResult
		write(t, db, func(tx *store.Tx) error {
			var err error
			res, err = tx.ReserveTokens(store.ReserveTokens{AgentID: agent, TurnID: turn.ID, Input: 300, MaxOutput: 700,
				TurnLimit: 1_000_000, DailyLimit: 1_000_000, DayStart: time.Now().UTC().Truncate(24 * time.Hour),
				Expires: time.Now().Add(time.Hour)})
			return err
		})
		write(t, db, func(tx *store.Tx) error {
			_, err := tx.SettleReservation(res.ID, store.TurnTokens{Input: 300, Output: 200})
			return err
		})
		turn.State, turn.Steps, turn.InputTokens, turn.OutputTokens = bullpen.TurnDone, 1, 10, 5
		var steps int
		var tot store.TurnTokens
		write(t, db, func(tx *store.Tx) error {
			if err := tx.FinishTurn(turn, bullpen.WakeDone); err != nil {
				return err
			}
			var err error
			steps, tot, err = tx.TurnTotals(turn.ID)
			return err
		})
		if steps != 2 || tot.Input != 310 || tot.Output != 205 {
			t.Fatalf("turn totals after a settled gateway call and a finish = %d steps, %+v; want 2 steps, 310 in, 205 out", steps, tot)
		}
		got, err := db.Turn(ctx, turn.ID)
		if err != nil || got.InputTokens != 310 || got.OutputTokens != 205 || got.Steps != 2 {
			t.Fatalf("stored turn = %+v, %v", got, err)
		}
	})
}
