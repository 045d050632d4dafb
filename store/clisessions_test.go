package store_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// TestCLISessions: an agent's CLI session is stored per runtime, a later
// one replaces it, and an agent without one gets "".
func TestCLISessions(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var ag bullpen.Member
		write(t, db, func(tx *store.Tx) error {
			var err error
			if ag, err = tx.CreateMember(bullpen.Member{Handle: "eng", DisplayName: "Eng", Kind: bullpen.KindAgent}); err != nil {
				return err
			}
			_, err = tx.CreateAgent(bullpen.Agent{MemberID: ag.ID, Role: "engineer", Spec: "{}", State: bullpen.AgentActive})
			return err
		})
		if s, err := db.CLISession(ctx, ag.ID, "claude-code"); err != nil || s != "" {
			t.Fatalf("none yet: %q %v", s, err)
		}
		write(t, db, func(tx *store.Tx) error { return tx.SaveCLISession(ag.ID, "claude-code", "s1", 1) })
		write(t, db, func(tx *store.Tx) error { return tx.SaveCLISession(ag.ID, "codex", "c1", 1) })
		write(t, db, func(tx *store.Tx) error { return tx.SaveCLISession(ag.ID, "claude-code", "s2", 2) })
		for rt, want := range map[string]string{"claude-code": "s2", "codex": "c1", "opencode": ""} {
			if s, err := db.CLISession(ctx, ag.ID, rt); err != nil || s != want {
				t.Errorf("%s: %q %v, want %q", rt, s, err, want)
			}
		}
	})
}
