package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

var errRollback = errors.New("roll back")

// emit writes one event in its own transaction, rolled back when fail is set.
func emit(ctx context.Context, db *store.DB, fail bool) error {
	_, err := db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tx.Emit(testKind, 0, nil, map[string]bool{"fail": fail}); err != nil {
			return err
		}
		if _, err := tx.Emit(testKind, 0, nil, map[string]bool{"fail": fail}); err != nil {
			return err
		}
		if fail {
			return errRollback
		}
		return nil
	})
	return err
}

// assertGapFree checks that the stored sequence is exactly 1..want.
func assertGapFree(t *testing.T, db *store.DB, want int) {
	t.Helper()
	evs, err := db.EventsAfter(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != want {
		t.Fatalf("stored %d events, want %d", len(evs), want)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: the sequence has a gap (%v…)", i, ev.Seq, seqs(evs[max(0, i-2):i+1]))
		}
	}
}

func seqs(evs []bullpen.Event) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// TestWriteRollbackLeavesNoGap: a transaction that emitted events and then
// rolled back must not consume sequence numbers.
func TestWriteRollbackLeavesNoGap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for i, fail := range []bool{false, true, true, false, true, false} {
			err := emit(ctx, db, fail)
			if fail != errors.Is(err, errRollback) {
				t.Fatalf("write %d: err %v", i, err)
			}
		}
		assertGapFree(t, db, 6)
	})
}

// TestConcurrentWritersTwoHandlesGapFree: two handles on one database (two
// replicas on PostgreSQL) write concurrently, a third of their
// transactions rolling back; the committed events are numbered 1..N.
func TestConcurrentWritersTwoHandlesGapFree(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		var dbs []*store.DB
		for range 2 {
			db, err := store.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs = append(dbs, db)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		committed := 0
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					fail := (w+i)%3 == 0
					err := emit(ctx, dbs[w%2], fail)
					if fail != errors.Is(err, errRollback) {
						errs <- fmt.Errorf("writer %d write %d: %v", w, i, err)
						return
					}
					if !fail {
						mu.Lock()
						committed += 2
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		assertGapFree(t, dbs[0], committed)
	})
}

// BenchmarkWriteOneEvent measures a write transaction that stores one
// event: the price of numbering it inside the transaction (and, on
// PostgreSQL, of the advisory lock and the NOTIFY).
func BenchmarkWriteOneEvent(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(ctx, storetest.Config(b, d))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			b.ResetTimer()
			for b.Loop() {
				if _, err := db.Transact(ctx, func(tx *store.Tx) error {
					_, err := tx.Emit(testKind, 0, nil, map[string]int{"n": 1})
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A writer whose connection dies mid-transaction, after its event was
// inserted (a crash, as far as PostgreSQL can tell), leaves no gap: the
// next committed event takes the number the dead one had.
func TestCrashedWriterLeavesNoGapPostgres(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		if d != store.Postgres {
			continue
		}
		cfg := storetest.Config(t, d)
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		killer, err := gorm.Open(postgres.Open(cfg.URL), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if k, err := killer.DB(); err == nil {
			defer k.Close()
		}
		for i := range 3 {
			if err := emit(ctx, db, false); err != nil {
				t.Fatal(err)
			}
			_, err := db.Transact(ctx, func(tx *store.Tx) error {
				if _, err := tx.Emit(testKind, 0, nil, map[string]int{"doomed": i}); err != nil {
					return err
				}
				var n int
				return killer.Raw(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
					WHERE datname = current_database() AND state = 'idle in transaction'`).Scan(&n).Error
			})
			if err == nil {
				t.Fatal("a write whose connection was killed committed")
			}
		}
		if err := emit(ctx, db, false); err != nil {
			t.Fatal(err)
		}
		assertGapFree(t, db, 8)
	}
}
