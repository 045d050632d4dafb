package store_test

import (
	"context"
	"fmt"
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
	_, err := db.Write(context.Background(), func(tx *store.Tx) error {
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
				if _, err := tx.CreateWakes([]store.Wake{{AgentID: ag.ID, ChannelID: ch.ID, MessageID: msg.ID, Reason: "mention"}}); err != nil {
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
func claim(db *store.DB, agent int64, owner string, lease time.Time, max int) (store.Turn, []store.Wake, error) {
	var (
		turn  store.Turn
		wakes []store.Wake
	)
	_, err := db.Write(context.Background(), func(tx *store.Tx) error {
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
					turn.State = store.TurnDone
					if _, err := db.Write(ctx, func(tx *store.Tx) error { return tx.FinishTurn(turn, store.WakeDone) }); err != nil {
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
		first := store.Turn{ID: turn.ID - 1, State: store.TurnDone}
		if _, err := db.Write(ctx, func(tx *store.Tx) error { return tx.FinishTurn(first, store.WakeDone) }); err != nil {
			t.Fatal(err)
		}
		if _, wakes, err := claim(db, agent, "b", time.Now().Add(time.Minute), 1); err != nil || len(wakes) != 1 {
			t.Fatalf("claim by b once only an expired lease is left: %v %v", wakes, err)
		}
	})
}
