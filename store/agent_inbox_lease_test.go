package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// renew extends a turn's lease in its own transaction.
func renew(t *testing.T, db *store.DB, turnID int64, owner string, until time.Time) bool {
	t.Helper()
	var ok bool
	write(t, db, func(tx *store.Tx) error {
		var err error
		ok, err = tx.RenewLease(turnID, owner, until)
		return err
	})
	return ok
}

// reclaim runs ReclaimTurns in its own transaction.
func reclaim(t *testing.T, db *store.DB, owner string, otherOwners bool) []bullpen.Turn {
	t.Helper()
	var turns []bullpen.Turn
	write(t, db, func(tx *store.Tx) error {
		var err error
		turns, err = tx.ReclaimTurns(owner, otherOwners)
		return err
	})
	return turns
}

// Only the owner of a running turn renews its lease; a renewed lease keeps
// the turn from being reclaimed, and a finished turn has no lease to renew.
func TestRenewLeaseOwnerOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, clk := openClocked(t, cfg)
		agent := inboxFixture(t, db, 1, 1)[0]
		turn, _, err := claim(db, agent, "a", clk.Now().Add(time.Minute), 1)
		if err != nil {
			t.Fatal(err)
		}
		if renew(t, db, turn.ID, "b", clk.Now().Add(time.Hour)) {
			t.Errorf("RenewLease by another owner = true, want false")
		}
		clk.Add(50 * time.Second)
		if !renew(t, db, turn.ID, "a", clk.Now().Add(time.Minute)) {
			t.Fatalf("RenewLease by the owner = false, want true")
		}
		clk.Add(50 * time.Second) // past the first lease, within the renewed one
		if got := reclaim(t, db, "b", false); len(got) != 0 {
			t.Errorf("ReclaimTurns with the lease renewed = %+v, want none", got)
		}
		if got, err := db.Turn(context.Background(), turn.ID); err != nil || !got.LeaseUntil.Equal(clk.Now().Add(10*time.Second)) {
			t.Errorf("Turn.LeaseUntil = %v, %v; want %v", got.LeaseUntil, err, clk.Now().Add(10*time.Second))
		}
		finish(t, db, turn, bullpen.TurnDone, bullpen.WakeDone)
		if renew(t, db, turn.ID, "a", clk.Now().Add(time.Minute)) {
			t.Errorf("RenewLease of a finished turn = true, want false")
		}
	})
}

// A turn whose lease ran out is abandoned and its wakes go back to
// pending; the next claim, by any process, takes the same wakes; and the
// abandoned turn can no longer finish them, so nothing acts twice.
func TestReclaimExpiredLeaseRequeuesWakes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, clk := openClocked(t, cfg)
		ctx := context.Background()
		agent := inboxFixture(t, db, 1, 2)[0]
		dead, wakes, err := claim(db, agent, "a", clk.Now().Add(time.Minute), 5)
		if err != nil || len(wakes) != 2 {
			t.Fatalf("claim = %v, %v", wakes, err)
		}
		if got := reclaim(t, db, "b", false); len(got) != 0 {
			t.Fatalf("ReclaimTurns before the lease ends = %+v, want none", got)
		}
		clk.Add(2 * time.Minute)
		got := reclaim(t, db, "b", false)
		if len(got) != 1 || got[0].ID != dead.ID || got[0].State != bullpen.TurnAbandoned {
			t.Fatalf("ReclaimTurns after the lease = %+v, want turn %d abandoned", got, dead.ID)
		}
		if pending, claimed, err := db.InboxCounts(ctx); err != nil || pending != 2 || claimed != 0 {
			t.Errorf("InboxCounts after reclaim = %d, %d, %v; want 2 pending", pending, claimed, err)
		}
		next, again, err := claim(db, agent, "b", clk.Now().Add(time.Minute), 5)
		if err != nil || !slices.Equal(wakeIDs(again), wakeIDs(wakes)) || next.ID == dead.ID {
			t.Fatalf("re-claim = %+v (turn %d), %v; want the same wakes in a new turn", again, next.ID, err)
		}
		dead.State = bullpen.TurnDone
		_, err = db.Transact(ctx, func(tx *store.Tx) error { return tx.FinishTurn(dead, bullpen.WakeDone) })
		if !bullpen.IsCode(err, bullpen.ECONFLICT) {
			t.Errorf("FinishTurn(abandoned turn) = %v, want ECONFLICT", err)
		}
		if ws, _ := db.Wakes(ctx, next.ID); len(ws) != 2 || ws[0].State != bullpen.WakeClaimed {
			t.Errorf("wakes after the stale finish = %+v, want still claimed by turn %d", ws, next.ID)
		}
		finish(t, db, next, bullpen.TurnDone, bullpen.WakeDone)
		if ws, _ := db.Wakes(ctx, next.ID); len(ws) != 2 || ws[0].State != bullpen.WakeDone || ws[1].State != bullpen.WakeDone {
			t.Errorf("wakes after finish = %+v, want done", ws)
		}
		if u, err := db.UsageSince(ctx, agent, clk.Now().Add(-time.Hour)); err != nil || u.Turns != 1 {
			t.Errorf("UsageSince = %+v, %v; want 1 turn (the abandoned one does not count)", u, err)
		}
	})
}

// On a single-process restart every other owner's running turn is
// reclaimed at once, live lease or not; the process's own are kept.
func TestReclaimOtherOwnersOnRestart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, clk := openClocked(t, cfg)
		agents := inboxFixture(t, db, 2, 1)
		old, _, err := claim(db, agents[0], "old-process", clk.Now().Add(time.Hour), 1)
		if err != nil {
			t.Fatal(err)
		}
		mine, _, err := claim(db, agents[1], "new-process", clk.Now().Add(time.Hour), 1)
		if err != nil {
			t.Fatal(err)
		}
		got := reclaim(t, db, "new-process", true)
		if len(got) != 1 || got[0].ID != old.ID {
			t.Fatalf("ReclaimTurns(other owners) = %+v, want only turn %d", got, old.ID)
		}
		if tu, err := db.Turn(context.Background(), mine.ID); err != nil || tu.State != bullpen.TurnRunning {
			t.Errorf("own turn after restart reclaim = %+v, %v; want running", tu, err)
		}
	})
}

// Releasing a turn's wakes as dropped (a limit or a firing stopped it)
// closes them for good: they are neither pending nor claimed again.
func TestFinishTurnDropsWakes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, clk := openClocked(t, cfg)
		ctx := context.Background()
		agent := inboxFixture(t, db, 1, 2)[0]
		turn, _, err := claim(db, agent, "a", clk.Now().Add(time.Minute), 5)
		if err != nil {
			t.Fatal(err)
		}
		turn.Error = "turn limit reached"
		finish(t, db, turn, bullpen.TurnFailed, bullpen.WakeDropped)
		ws, err := db.Wakes(ctx, turn.ID)
		if err != nil || len(ws) != 2 || ws[0].State != bullpen.WakeDropped || ws[1].State != bullpen.WakeDropped {
			t.Errorf("Wakes after a dropped finish = %+v, %v", ws, err)
		}
		if _, _, err := claim(db, agent, "a", clk.Now().Add(time.Minute), 5); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("claim after drop = %v, want ENOTFOUND", err)
		}
		clk.Add(time.Hour)
		if got := reclaim(t, db, "b", true); len(got) != 0 {
			t.Errorf("ReclaimTurns of a finished turn = %+v, want none", got)
		}
		turns, err := db.Turns(ctx, agent, 10)
		if err != nil || len(turns) != 1 || turns[0].State != bullpen.TurnFailed || turns[0].Error != "turn limit reached" {
			t.Errorf("Turns = %+v, %v", turns, err)
		}
	})
}
