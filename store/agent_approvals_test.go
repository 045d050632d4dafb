package store_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// TestApprovalWithoutTurn: an agent CLI's network policy is asked at hire,
// outside any turn and channel, so an approval stores with neither (the
// schema before migration 0021 refused it), reads back as 0 for both, and
// keeps its network row. Migration 0021 run again over such rows (on
// SQLite it rebuilds the table) keeps them, their ids and the foreign key
// from agent_network_approvals.
func TestApprovalWithoutTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var a bullpen.Approval
		_, err = db.Transact(ctx, func(tx *store.Tx) error {
			m, err := tx.CreateMember(bullpen.Member{Handle: "eng", DisplayName: "Eng", Kind: bullpen.KindAgent})
			if err != nil {
				return err
			}
			if _, err := tx.CreateAgent(bullpen.Agent{MemberID: m.ID, Role: "inline", Spec: "{}"}); err != nil {
				return err
			}
			if a, err = tx.CreateApproval(bullpen.Approval{AgentID: m.ID, Tool: "cli_network", Arguments: "open"}); err != nil {
				return err
			}
			return tx.AskNetwork(m.ID, "open", a.ID)
		})
		if err != nil {
			t.Fatalf("an approval outside any turn and channel: %v", err)
		}
		check := func(when string) {
			t.Helper()
			got, err := db.Approval(ctx, a.ID)
			if err != nil || got.TurnID != 0 || got.ChannelID != 0 || got.State != bullpen.ApprovalPending || got.Arguments != "open" {
				t.Fatalf("%s: approval %d = %+v, %v; want pending, no turn, no channel", when, a.ID, got, err)
			}
			na, err := db.NetworkApproval(ctx, a.AgentID, "open")
			if err != nil || na.ApprovalID != a.ID {
				t.Fatalf("%s: network approval = %+v, %v; want #%d", when, na, err, a.ID)
			}
		}
		check("stored")

		ms, err := store.Migrations(db.Dialect())
		if err != nil {
			t.Fatal(err)
		}
		var m0021 string
		for _, m := range ms {
			if m.Version == 21 {
				m0021 = m.SQL
			}
		}
		if m0021 == "" {
			t.Fatal("no migration 0021")
		}
		if err := db.ExecSQL(m0021); err != nil {
			t.Fatalf("migration 0021 over existing rows: %v", err)
		}
		check("after migration 0021 ran again")

		// The rebuilt table still guards its references, and ids go on
		// after the kept ones.
		_, err = db.Transact(ctx, func(tx *store.Tx) error { return tx.AskNetwork(a.AgentID, "allowlist 10.0.0.1/32", a.ID+1000) })
		if err == nil {
			t.Error("a network approval naming no approval was stored: the foreign key is gone")
		}
		var b bullpen.Approval
		_, err = db.Transact(ctx, func(tx *store.Tx) error {
			var err error
			b, err = tx.CreateApproval(bullpen.Approval{AgentID: a.AgentID, Tool: "cli_network", Arguments: "none"})
			return err
		})
		if err != nil || b.ID <= a.ID {
			t.Fatalf("next approval = #%d, %v; want an id after #%d", b.ID, err, a.ID)
		}
	})
}
