package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// TestGatewayResponses: a kept Responses conversation comes back byte for
// byte to its own agent only (another agent's lookup is not found, as an
// unknown id is), the same id replaces it, and it is pruned with its
// turn's records.
func TestGatewayResponses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, clk := openClocked(t, cfg)
		ctx := context.Background()
		ids := inboxFixture(t, db, 2, 2)
		old := startTurn(t, db, ids[0])
		clk.Add(40 * 24 * time.Hour)
		fresh := startTurn(t, db, ids[0])
		items := `[{"type":"message","role":"user","content":"héllo \"quoted\"\n"}]`
		if err := db.PutResponse(ctx, "resp_old", ids[0], old.ID, []byte(items)); err != nil {
			t.Fatal(err)
		}
		if err := db.PutResponse(ctx, "resp_new", ids[0], fresh.ID, []byte(`[]`)); err != nil {
			t.Fatal(err)
		}
		if got, err := db.GetResponse(ctx, ids[0], "resp_old"); err != nil || string(got) != items {
			t.Errorf("own response = %s, %v", got, err)
		}
		for _, probe := range []struct {
			agent int64
			id    string
		}{{ids[1], "resp_old"}, {ids[0], "resp_none"}} {
			if _, err := db.GetResponse(ctx, probe.agent, probe.id); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
				t.Errorf("agent %d getting %s: %v, want not found", probe.agent, probe.id, err)
			}
		}
		if err := db.PutResponse(ctx, "resp_new", ids[0], fresh.ID, []byte(`[1]`)); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.GetResponse(ctx, ids[0], "resp_new"); string(got) != `[1]` {
			t.Errorf("replaced response = %s", got)
		}
		res, err := db.PruneTurnRecords(ctx, clk.Now().Add(-30*24*time.Hour), 1024)
		if err != nil || res.Responses != 1 {
			t.Fatalf("PruneTurnRecords = %+v, %v; want 1 response", res, err)
		}
		if _, err := db.GetResponse(ctx, ids[0], "resp_old"); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("pruned response: %v", err)
		}
		if _, err := db.GetResponse(ctx, ids[0], "resp_new"); err != nil {
			t.Errorf("fresh response: %v", err)
		}
	})
}
