package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

type sbEvent struct {
	ID      string `json:"id"`
	ExecID  string `json:"exec_id"`
	OwnerID int64  `json:"owner_id"`
}

// emitSandbox stores n events of typ about sandbox id.
func emitSandbox(tb testing.TB, db *store.DB, typ, id string, n int) {
	tb.Helper()
	if _, err := db.Transact(context.Background(), func(tx *store.Tx) error {
		for i := range n {
			if _, err := tx.Emit(typ, 0, []int64{1}, sbEvent{ID: id, ExecID: fmt.Sprint("x_", i), OwnerID: 1}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
}

// SandboxEvents finds one sandbox's events of the given types only (an id
// with LIKE's wildcards in it matches itself alone), newest first with
// Before, oldest first with After.
func TestSandboxEvents(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, storetest.Config(t, d))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			emitSandbox(t, db, "sandbox.exec_finished", "sb_1", 3)
			emitSandbox(t, db, "sandbox.exec_finished", "sbX1", 2) // "sb_1" as a LIKE pattern would match it
			emitSandbox(t, db, "sandbox.exec_started", "sb_1", 1)
			emitSandbox(t, db, "sandbox.exec_finished", "sb_10", 1)
			q := store.SandboxEventQuery{SandboxID: "sb_1", Types: []string{"sandbox.exec_finished"}, Limit: 10}
			got, err := db.SandboxEvents(ctx, q)
			if err != nil || len(got) != 3 || got[0].Seq <= got[2].Seq {
				t.Fatalf("SandboxEvents(sb_1) = %d events %v, want its 3 finished ones, newest first", len(got), err)
			}
			q.Before, q.Limit = got[0].Seq, 1
			if older, _ := db.SandboxEvents(ctx, q); len(older) != 1 || older[0].Seq != got[1].Seq {
				t.Errorf("Before %d = %+v, want seq %d", q.Before, older, got[1].Seq)
			}
			q = store.SandboxEventQuery{SandboxID: "sb_1", Types: []string{"sandbox.exec_finished", "sandbox.exec_started"}, After: got[1].Seq, Limit: 10}
			if newer, _ := db.SandboxEvents(ctx, q); len(newer) != 2 || newer[0].Seq != got[0].Seq || newer[1].Type != "sandbox.exec_started" {
				t.Errorf("After %d = %+v, want the newest finished, then the started one", q.After, newer)
			}
		})
	}
}

// BenchmarkSandboxHistoryPage reads the newest page of one sandbox's
// history among 20,000 exec events of 20 sandboxes (a text match on the
// payload, no index of its own).
func BenchmarkSandboxHistoryPage(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(ctx, storetest.Config(b, d))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for i := range 20 {
				emitSandbox(b, db, "sandbox.exec_finished", fmt.Sprintf("sb_%016d", i), 1000)
			}
			q := store.SandboxEventQuery{SandboxID: fmt.Sprintf("sb_%016d", 7), Types: []string{"sandbox.exec_finished"}, Limit: 50}
			b.ResetTimer()
			for b.Loop() {
				if evs, err := db.SandboxEvents(ctx, q); err != nil || len(evs) != 50 {
					b.Fatalf("%d events, %v", len(evs), err)
				}
			}
		})
	}
}
