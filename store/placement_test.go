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

// placedClaim runs ClaimPlacedWakes for replica in its own transaction
// (the turn's owner is named after the replica) and finishes the turn it
// claimed, so that the next claim is not left waiting on it.
func placedClaim(t *testing.T, db *store.DB, replica string, agent int64) (store.Placed, []bullpen.Wake, error) {
	t.Helper()
	var (
		turn   bullpen.Turn
		wakes  []bullpen.Wake
		placed store.Placed
	)
	_, err := db.Transact(context.Background(), func(tx *store.Tx) error {
		var err error
		turn, wakes, placed, err = tx.ClaimPlacedWakes(store.Placement{Replica: replica}, agent, "owner-"+replica, time.Now().Add(time.Hour), 1)
		return err
	})
	if err == nil {
		turn.State = bullpen.TurnDone
		write(t, db, func(tx *store.Tx) error { return tx.FinishTurn(turn, bullpen.WakeDone) })
	}
	return placed, wakes, err
}

// beat writes replica's heartbeat.
func beat(t *testing.T, db *store.DB, replica string) {
	t.Helper()
	write(t, db, func(tx *store.Tx) error { return tx.Heartbeat(replica) })
}

// wantReplica checks where the agent is placed ("" for nowhere).
func wantReplica(t *testing.T, db *store.DB, agent int64, want string) {
	t.Helper()
	got, err := db.AgentReplica(context.Background(), agent)
	if want == "" {
		if !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Fatalf("AgentReplica(%d) = %q, %v; want not found", agent, got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("AgentReplica(%d) = %q, %v; want %q", agent, got, err, want)
	}
}

// An unplaced agent is placed on the replica that claims its wakes; an
// agent placed on another live replica is left to it, its wakes pending;
// a claim with nothing pending places nobody.
func TestPlacedClaimPlacesAndLeavesToLiveReplica(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, _ := openClocked(t, cfg)
		agents := inboxFixture(t, db, 2, 3)
		var idle bullpen.Member // an agent with no wakes
		write(t, db, func(tx *store.Tx) (err error) {
			idle, err = tx.CreateMember(bullpen.Member{Handle: "idle", DisplayName: "Idle", Kind: bullpen.KindAgent})
			return err
		})
		beat(t, db, "a")
		beat(t, db, "b")
		if _, _, err := placedClaim(t, db, "b", idle.ID); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Fatalf("claim with nothing pending: %v, want not found", err)
		}
		wantReplica(t, db, idle.ID, "")

		placed, wakes, err := placedClaim(t, db, "a", agents[0])
		if err != nil || len(wakes) != 1 || !placed.New || placed.From != "" {
			t.Fatalf("first claim by a = %+v, %d wakes, %v; want a new placement and one wake", placed, len(wakes), err)
		}
		wantReplica(t, db, agents[0], "a")
		if _, _, err := placedClaim(t, db, "b", agents[0]); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Fatalf("claim by b of an agent placed on live a: %v, want not found", err)
		}
		if pending, _, _ := db.InboxCounts(context.Background()); pending != 5 {
			t.Fatalf("%d wakes pending after b's refused claim, want 5", pending)
		}
		placed, wakes, err = placedClaim(t, db, "a", agents[0])
		if err != nil || len(wakes) != 1 || placed != (store.Placed{}) {
			t.Fatalf("a's next claim = %+v, %d wakes, %v; want its own agent's wake", placed, len(wakes), err)
		}
		// Another agent is b's to take.
		if placed, _, err := placedClaim(t, db, "b", agents[1]); err != nil || !placed.New {
			t.Fatalf("b's claim of an unplaced agent = %+v, %v", placed, err)
		}
		wantReplica(t, db, agents[1], "b")
	})
}

// An agent whose replica has not beaten for the liveness bound moves to
// the claimer, which learns where it was; not a moment before.
func TestPlacedClaimMovesFromDeadReplica(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, clk := openClocked(t, cfg)
		agent := inboxFixture(t, db, 1, 4)[0]
		beat(t, db, "a")
		if _, _, err := placedClaim(t, db, "a", agent); err != nil {
			t.Fatal(err)
		}
		clk.Add(store.DefaultLiveness)
		beat(t, db, "b")
		if _, _, err := placedClaim(t, db, "b", agent); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Fatalf("claim by b when a was seen %v ago: %v, want not found", store.DefaultLiveness, err)
		}
		clk.Add(time.Second)
		beat(t, db, "b")
		placed, wakes, err := placedClaim(t, db, "b", agent)
		if err != nil || len(wakes) != 1 || placed.From != "a" || placed.New {
			t.Fatalf("claim by b after a died = %+v, %d wakes, %v; want a move from a", placed, len(wakes), err)
		}
		wantReplica(t, db, agent, "b")
		beat(t, db, "a") // a comes back: the agent stays where its new workspace is
		if _, _, err := placedClaim(t, db, "a", agent); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Fatalf("claim by a, back, of the agent that moved to live b: %v, want not found", err)
		}
		// A replica that never beat is dead too.
		clk.Add(store.DefaultLiveness + time.Second)
		placed, _, err = placedClaim(t, db, "c", agent)
		if err != nil || placed.From != "b" {
			t.Fatalf("claim by c after b died = %+v, %v; want a move from b", placed, err)
		}
	})
}

// Two processes, each a replica, race to claim one unplaced agent's
// wakes, turn after turn: every turn runs on the replica that placed it
// first, and every wake is claimed once.
func TestPlacedClaimsConcurrentOneReplica(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		dbs := make([]*store.DB, 2)
		for i := range dbs {
			db, err := store.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			dbs[i] = db
			beat(t, db, fmt.Sprintf("r%d", i))
		}
		const wakesN = 16
		agent := inboxFixture(t, dbs[0], 1, wakesN)[0]
		var (
			mu      sync.Mutex
			byWake  = map[int64][]string{}
			replica = map[string]int{}
			wg      sync.WaitGroup
		)
		for p := range 4 { // two workers in each process
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("r%d", p%2)
				for idle := 0; idle < 30; {
					_, wakes, err := placedClaim(t, dbs[p%2], name, agent)
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
					replica[name]++
					for _, w := range wakes {
						byWake[w.ID] = append(byWake[w.ID], name)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(replica) != 1 {
			t.Errorf("turns per replica = %v, want every turn on one replica", replica)
		}
		if len(byWake) != wakesN {
			t.Errorf("%d wakes claimed, want %d", len(byWake), wakesN)
		}
		for id, names := range byWake {
			if len(names) != 1 {
				t.Errorf("wake %d claimed %d times: %v", id, len(names), names)
			}
		}
	})
}
