package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// inboxFixture stores a human, agents and, per agent, perAgent pending
// wakes (one message each) in one channel. It returns the agents' IDs.
func inboxFixture(t *testing.T, db *store.DB, agents, perAgent int) []int64 {
	t.Helper()
	var ids []int64
	_, err := db.Transact(context.Background(), func(tx *store.Tx) error {
		human, err := tx.CreateMember(bullpen.Member{Handle: "boss", DisplayName: "Boss", Kind: bullpen.KindHuman})
		if err != nil {
			return err
		}
		ch, err := tx.CreateChannel(bullpen.Channel{Name: "work", Kind: bullpen.ChannelPublic, CreatedBy: human.ID})
		if err != nil {
			return err
		}
		for a := range agents {
			ag, err := tx.CreateMember(bullpen.Member{Handle: fmt.Sprintf("bot%d", a), DisplayName: "Bot", Kind: bullpen.KindAgent})
			if err != nil {
				return err
			}
			ids = append(ids, ag.ID)
			for range perAgent {
				msg, err := tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: human.ID, Body: "@bot", Source: bullpen.SourceWeb})
				if err != nil {
					return err
				}
				if _, err := tx.CreateWakes([]bullpen.Wake{{AgentID: ag.ID, ChannelID: ch.ID, MessageID: msg.ID, Reason: "mention"}}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// claim runs ClaimWakes in its own transaction.
func claim(db *store.DB, agent int64, owner string, lease time.Time, max int) (bullpen.Turn, []bullpen.Wake, error) {
	var (
		turn  bullpen.Turn
		wakes []bullpen.Wake
	)
	_, err := db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		turn, wakes, err = tx.ClaimWakes(agent, owner, lease, max)
		return err
	})
	return turn, wakes, err
}

// Two processes (two handles on one database) claim and finish turns
// concurrently until nothing is pending: every wake is claimed by exactly
// one turn.
func TestClaimWakesTwoProcessesEachWakeOnce(t *testing.T) {
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
		agents := inboxFixture(t, dbs[0], 4, 6)
		var mu sync.Mutex
		claimedBy := map[int64][]string{}
		var wg sync.WaitGroup
		for p := range 4 { // two workers in each process
			owner := fmt.Sprintf("process%d", p%2)
			wg.Add(1)
			go func() {
				defer wg.Done()
				db := dbs[p%2]
				for idle := 0; idle < 20; {
					turn, wakes, err := claim(db, agents[(p+idle)%len(agents)], owner, time.Now().Add(time.Minute), 2)
					if bullpen.IsCode(err, bullpen.ENOTFOUND) {
						idle++
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					idle = 0
					mu.Lock()
					for _, w := range wakes {
						claimedBy[w.ID] = append(claimedBy[w.ID], owner)
					}
					mu.Unlock()
					turn.State = bullpen.TurnDone
					if _, err := db.Transact(ctx, func(tx *store.Tx) error { return tx.FinishTurn(turn, bullpen.WakeDone) }); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if len(claimedBy) != 24 {
			t.Fatalf("%d wakes claimed, want 24", len(claimedBy))
		}
		for id, owners := range claimedBy {
			if len(owners) != 1 {
				t.Errorf("wake %d claimed %d times: %v", id, len(owners), owners)
			}
		}
		pending, claimed, err := dbs[1].InboxCounts(ctx)
		if err != nil || pending != 0 || claimed != 0 {
			t.Errorf("inbox after the run: %d pending, %d claimed, %v", pending, claimed, err)
		}
	})
}

// An agent whose turn runs in another process, lease alive, is left to
// that process; the same process may claim its next wakes, and once the
// lease has run out anyone may.
func TestClaimWakesLeavesAgentBusyElsewhere(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		agent := inboxFixture(t, db, 1, 3)[0]
		if _, _, err := claim(db, agent, "a", time.Now().Add(time.Minute), 1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := claim(db, agent, "b", time.Now().Add(time.Minute), 1); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Fatalf("claim by b while a's turn runs: %v, want not found", err)
		}
		turn, _, err := claim(db, agent, "a", time.Now().Add(-time.Second), 1) // a's second turn, already expired
		if err != nil {
			t.Fatalf("a claims its agent's next wake: %v", err)
		}
		// a's first turn is still live: b still waits.
		if _, _, err := claim(db, agent, "b", time.Now().Add(time.Minute), 1); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Fatalf("claim by b: %v, want not found", err)
		}
		first := bullpen.Turn{ID: turn.ID - 1, State: bullpen.TurnDone}
		if _, err := db.Transact(ctx, func(tx *store.Tx) error { return tx.FinishTurn(first, bullpen.WakeDone) }); err != nil {
			t.Fatal(err)
		}
		if _, wakes, err := claim(db, agent, "b", time.Now().Add(time.Minute), 1); err != nil || len(wakes) != 1 {
			t.Fatalf("claim by b once only an expired lease is left: %v %v", wakes, err)
		}
	})
}

// clock is a settable time source for leases.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// openClocked opens a database whose transactions read time from a clock.
func openClocked(t *testing.T, cfg store.Config) (*store.DB, *clock) {
	t.Helper()
	c := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	cfg.Now = c.Now
	db, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, c
}

// write runs fn in a transaction and fails the test on an error.
func write(t *testing.T, db *store.DB, fn func(tx *store.Tx) error) {
	t.Helper()
	if _, err := db.Transact(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// wakeIDs lists the IDs of wakes.
func wakeIDs(ws []bullpen.Wake) []int64 {
	ids := []int64{}
	for _, w := range ws {
		ids = append(ids, w.ID)
	}
	return ids
}

// A second wake of an agent by the same message is coalesced into the
// first; another agent woken by that message gets its own.
func TestCreateWakesCoalescesSameMessage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, _ := openClocked(t, cfg)
		agents := inboxFixture(t, db, 2, 1)
		ctx := context.Background()
		first, err := db.PendingAgents(ctx)
		if err != nil || len(first) != 2 {
			t.Fatalf("PendingAgents = %v, %v; want both agents", first, err)
		}
		turn, wakes, err := claim(db, agents[0], "p", time.Now().Add(time.Minute), 10)
		if err != nil || len(wakes) != 1 {
			t.Fatalf("claim = %v, %v", wakes, err)
		}
		msg := wakes[0].MessageID
		var again []bullpen.Wake
		write(t, db, func(tx *store.Tx) error {
			var err error
			again, err = tx.CreateWakes([]bullpen.Wake{
				{AgentID: agents[0], ChannelID: wakes[0].ChannelID, MessageID: msg, Reason: "mention"},
				{AgentID: agents[0], ChannelID: wakes[0].ChannelID, MessageID: msg, Reason: "thread"},
			})
			return err
		})
		if len(again) != 0 {
			t.Errorf("CreateWakes(same agent, same message) stored %v, want none", again)
		}
		if got, err := db.Wakes(ctx, turn.ID); err != nil || len(got) != 1 || got[0].State != bullpen.WakeClaimed {
			t.Errorf("Wakes(turn) = %+v, %v; want the one claimed wake", got, err)
		}
		var other []bullpen.Wake
		write(t, db, func(tx *store.Tx) error {
			var err error
			other, err = tx.CreateWakes([]bullpen.Wake{{AgentID: agents[1], ChannelID: wakes[0].ChannelID, MessageID: msg, Reason: "mention"}})
			return err
		})
		if len(other) != 1 || other[0].State != bullpen.WakePending || other[0].AgentID != agents[1] {
			t.Errorf("CreateWakes(other agent, same message) = %+v, want one pending wake", other)
		}
		pending, claimed, err := db.InboxCounts(ctx)
		if err != nil || pending != 2 || claimed != 1 {
			t.Errorf("InboxCounts = %d pending, %d claimed, %v; want 2, 1", pending, claimed, err)
		}
	})
}

// A claim takes the oldest pending wakes of one channel only, up to max,
// oldest first; with nothing pending it answers ENOTFOUND.
func TestClaimWakesOneChannelOldestFirst(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, _ := openClocked(t, cfg)
		agent := inboxFixture(t, db, 1, 3)[0]
		var elsewhere bullpen.Wake
		write(t, db, func(tx *store.Tx) error {
			ch, err := tx.CreateChannel(bullpen.Channel{Name: "elsewhere", Kind: bullpen.ChannelPublic, CreatedBy: agent})
			if err != nil {
				return err
			}
			msg, err := tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: agent, Body: "x", Source: bullpen.SourceWeb})
			if err != nil {
				return err
			}
			ws, err := tx.CreateWakes([]bullpen.Wake{{AgentID: agent, ChannelID: ch.ID, MessageID: msg.ID, Reason: "mention"}})
			if len(ws) == 1 {
				elsewhere = ws[0]
			}
			return err
		})
		t1, w1, err := claim(db, agent, "p", time.Now().Add(time.Minute), 2)
		if err != nil || len(w1) != 2 || w1[0].ID >= w1[1].ID || w1[0].ChannelID == elsewhere.ChannelID {
			t.Fatalf("first claim = %+v, %v; want the two oldest wakes of the first channel", w1, err)
		}
		if t1.State != bullpen.TurnRunning || t1.ChannelID != w1[0].ChannelID || t1.Owner != "p" {
			t.Errorf("first turn = %+v", t1)
		}
		finish(t, db, t1, bullpen.TurnDone, bullpen.WakeDone)
		_, w2, err := claim(db, agent, "p", time.Now().Add(time.Minute), 2)
		if err != nil || len(w2) != 1 || w2[0].ChannelID != w1[0].ChannelID {
			t.Fatalf("second claim = %+v, %v; want the last wake of the first channel (max 2 left it)", w2, err)
		}
		finish(t, db, bullpen.Turn{ID: w2[0].TurnID}, bullpen.TurnDone, bullpen.WakeDone)
		_, w3, err := claim(db, agent, "p", time.Now().Add(time.Minute), 2)
		if err != nil || !slices.Equal(wakeIDs(w3), []int64{elsewhere.ID}) {
			t.Fatalf("third claim = %+v, %v; want the other channel's wake", w3, err)
		}
		finish(t, db, bullpen.Turn{ID: w3[0].TurnID}, bullpen.TurnDone, bullpen.WakeDone)
		if _, _, err := claim(db, agent, "p", time.Now().Add(time.Minute), 2); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("claim with nothing pending: %v, want ENOTFOUND", err)
		}
		if ids, err := db.PendingAgents(context.Background()); err != nil || len(ids) != 0 {
			t.Errorf("PendingAgents after all turns = %v, %v; want none", ids, err)
		}
	})
}

// finish stores a turn's outcome and fails the test on an error.
func finish(t *testing.T, db *store.DB, turn bullpen.Turn, state, wakeState string) {
	t.Helper()
	turn.State = state
	write(t, db, func(tx *store.Tx) error { return tx.FinishTurn(turn, wakeState) })
}
