package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// The light reads a turn's start uses in a large office: members by ID in
// handle order (as Members orders them), members by handle, and the
// agents' states and fired members without their specs.
func TestMembersAndAgentStatesLight(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var ids []int64
		_, err = db.Transact(ctx, func(tx *store.Tx) error {
			for i, h := range []string{"zed", "amy", "bob", "cat"} {
				m, err := tx.CreateMember(bullpen.Member{Handle: h, DisplayName: h, Kind: bullpen.KindAgent})
				if err != nil {
					return err
				}
				ids = append(ids, m.ID)
				if _, err := tx.CreateAgent(bullpen.Agent{MemberID: m.ID, Role: "inline", Spec: fmt.Sprintf(`{"n":%d}`, i)}); err != nil {
					return err
				}
			}
			return tx.FireAgent(ids[2]) // bob
		})
		if err != nil {
			t.Fatal(err)
		}
		in, err := db.MembersIn(ctx, []int64{ids[0], ids[2], ids[1], 999})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range in {
			got = append(got, m.Handle)
		}
		if fmt.Sprint(got) != "[amy bob zed]" {
			t.Errorf("MembersIn = %v, want [amy bob zed] (by handle, unknown IDs left out)", got)
		}
		if none, err := db.MembersIn(ctx, nil); err != nil || len(none) != 0 {
			t.Errorf("MembersIn(nil) = %v, %v; want none", none, err)
		}
		byHandle, err := db.MembersByHandle(ctx, []string{"cat", "nobody", "zed"})
		if err != nil || len(byHandle) != 2 || byHandle[ids[3]].Handle != "cat" || byHandle[ids[0]].Handle != "zed" {
			t.Errorf("MembersByHandle = %v, %v; want cat and zed by ID", byHandle, err)
		}
		fired, err := db.FiredAgentMembers(ctx)
		if err != nil || len(fired) != 1 || !fired[ids[2]] {
			t.Errorf("FiredAgentMembers = %v, %v; want only bob (%d)", fired, err, ids[2])
		}
		states, err := db.AgentStates(ctx)
		if err != nil || len(states) != 4 || states[ids[2]] != bullpen.AgentFired || states[ids[0]] != bullpen.AgentActive {
			t.Errorf("AgentStates = %v, %v; want 4, bob fired, the rest active", states, err)
		}
	})
}
