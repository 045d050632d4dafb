package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// startTurn claims agent's first pending wake as a turn and finishes it.
func startTurn(t *testing.T, db *store.DB, agent int64) bullpen.Turn {
	t.Helper()
	turn, _, err := claim(db, agent, "me", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	turn.State = bullpen.TurnDone
	write(t, db, func(tx *store.Tx) error { return tx.FinishTurn(turn, bullpen.WakeDone) })
	return turn
}

func record(t *testing.T, db *store.DB, c bullpen.ModelCall) {
	t.Helper()
	if err := db.RecordModelCall(context.Background(), c); err != nil {
		t.Fatalf("RecordModelCall: %v", err)
	}
}

// Model calls are numbered per turn in the order they are recorded, and
// come back byte for byte with their usage.
func TestModelCallsSeqPerTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, _ := openClocked(t, cfg)
		ids := inboxFixture(t, db, 1, 2)
		t1, t2 := startTurn(t, db, ids[0]), startTurn(t, db, ids[0])
		body := `{"model":"m","messages":[{"role":"user","content":"héllo \"quoted\"\n"}]}`
		record(t, db, bullpen.ModelCall{TurnID: t1.ID, Via: bullpen.ViaBuiltin, Provider: "openai", Model: "m",
			Request: body, Response: "data: {}\n\ndata: [DONE]\n\n", Status: 200, InputTokens: 12, CachedInputTokens: 4, OutputTokens: 3})
		record(t, db, bullpen.ModelCall{TurnID: t2.ID, Via: bullpen.ViaGateway, Request: "b"})
		record(t, db, bullpen.ModelCall{TurnID: t1.ID, Via: bullpen.ViaBuiltin, Request: "second"})
		got, err := db.ModelCalls(context.Background(), t1.ID)
		if err != nil || len(got) != 2 {
			t.Fatalf("ModelCalls = %+v, %v; want 2", got, err)
		}
		c := got[0]
		if c.Seq != 1 || got[1].Seq != 2 || got[1].Request != "second" || c.AgentID != ids[0] {
			t.Errorf("seqs = %d, %d (%q), agent %d; want 1, 2 (second), %d", c.Seq, got[1].Seq, got[1].Request, c.AgentID, ids[0])
		}
		if c.Request != body || c.RequestBytes != len(body) || c.RequestTruncated || c.Response != "data: {}\n\ndata: [DONE]\n\n" ||
			c.InputTokens != 12 || c.CachedInputTokens != 4 || c.OutputTokens != 3 || c.Status != 200 {
			t.Errorf("call = %+v; want the body and usage as recorded", c)
		}
		other, _ := db.ModelCalls(context.Background(), t2.ID)
		if len(other) != 1 || other[0].Seq != 1 || other[0].Via != bullpen.ViaGateway {
			t.Errorf("other turn = %+v; want its own seq 1", other)
		}
	})
}

// Bad input is refused and stores nothing.
func TestRecordModelCallRefuses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, _ := openClocked(t, cfg)
		ids := inboxFixture(t, db, 2, 1)
		turn := startTurn(t, db, ids[0])
		ctx := context.Background()
		for _, tc := range []struct {
			name string
			c    bullpen.ModelCall
			code string
		}{
			{"no turn", bullpen.ModelCall{Via: bullpen.ViaBuiltin}, bullpen.EINVALID},
			{"bad via", bullpen.ModelCall{TurnID: turn.ID, Via: "carrier pigeon"}, bullpen.EINVALID},
			{"unknown turn", bullpen.ModelCall{TurnID: turn.ID + 100, Via: bullpen.ViaBuiltin}, bullpen.ENOTFOUND},
			{"another agent's turn", bullpen.ModelCall{TurnID: turn.ID, AgentID: ids[1], Via: bullpen.ViaGateway}, bullpen.EINVALID},
		} {
			wantCode(t, tc.name, db.RecordModelCall(ctx, tc.c), tc.code)
		}
		if got, err := db.ModelCalls(ctx, turn.ID); err != nil || len(got) != 0 {
			t.Errorf("ModelCalls = %+v, %v; want none stored", got, err)
		}
	})
}

// A body over the per-body cap is cut at a character boundary and marked;
// once the turn's total cap is used up, later bodies are cut to nothing,
// marked, and keep their whole size.
func TestModelCallCaps(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		cfg.Record = store.RecordCaps{BodyCap: 100, TurnCap: 250}
		db, _ := openClocked(t, cfg)
		ids := inboxFixture(t, db, 1, 1)
		turn := startTurn(t, db, ids[0])
		big := strings.Repeat("a", 99) + "é" + strings.Repeat("b", 50) // é straddles byte 100
		record(t, db, bullpen.ModelCall{TurnID: turn.ID, Via: bullpen.ViaBuiltin, Request: big, Response: "short"})
		record(t, db, bullpen.ModelCall{TurnID: turn.ID, Via: bullpen.ViaBuiltin, Request: strings.Repeat("c", 100), Response: strings.Repeat("d", 100)})
		record(t, db, bullpen.ModelCall{TurnID: turn.ID, Via: bullpen.ViaBuiltin, Request: "late", Response: "also late"})
		got, err := db.ModelCalls(context.Background(), turn.ID)
		if err != nil || len(got) != 3 {
			t.Fatalf("ModelCalls = %d, %v; want 3", len(got), err)
		}
		first, second, third := got[0], got[1], got[2]
		if first.Request != strings.Repeat("a", 99) || !first.RequestTruncated || first.RequestBytes != len(big) ||
			first.Response != "short" || first.ResponseTruncated {
			t.Errorf("first = %q (cut %v, %d bytes), %q (cut %v); want cut before é, whole size %d, response kept",
				first.Request, first.RequestTruncated, first.RequestBytes, first.Response, first.ResponseTruncated, len(big))
		}
		// 104 bytes used; 146 left: the request fits, the response gets 46.
		if second.RequestTruncated || len(second.Response) != 46 || !second.ResponseTruncated || second.ResponseBytes != 100 {
			t.Errorf("second = cut %v, response %d bytes (cut %v, whole %d); want request whole, response cut to 46 of 100",
				second.RequestTruncated, len(second.Response), second.ResponseTruncated, second.ResponseBytes)
		}
		if third.Request != "" || !third.RequestTruncated || third.RequestBytes != 4 || !third.ResponseTruncated || third.ResponseBytes != 9 {
			t.Errorf("third = %+v; want both bodies cut to nothing, sizes 4 and 9 kept", third)
		}
	})
}

// Retention deletes the model calls of turns older than the cutoff and
// empties their large tool results; newer turns keep everything.
func TestPruneTurnRecords(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, clk := openClocked(t, cfg)
		ids := inboxFixture(t, db, 1, 2)
		old := startTurn(t, db, ids[0])
		clk.Add(40 * 24 * time.Hour)
		fresh := startTurn(t, db, ids[0])
		long := strings.Repeat("x", 3000)
		for _, turn := range []bullpen.Turn{old, fresh} {
			record(t, db, bullpen.ModelCall{TurnID: turn.ID, Via: bullpen.ViaBuiltin, Request: "req"})
			write(t, db, func(tx *store.Tx) error {
				for _, result := range []string{long, "small"} {
					c, err := tx.CreateToolCall(bullpen.ToolCall{TurnID: turn.ID, AgentID: ids[0], Name: "sandbox_exec", Arguments: "{}"})
					if err != nil {
						return err
					}
					c.State, c.Result = "ok", result
					if err := tx.FinishToolCall(c); err != nil {
						return err
					}
				}
				return nil
			})
		}
		ctx := context.Background()
		res, err := db.PruneTurnRecords(ctx, clk.Now().Add(-30*24*time.Hour), 1024)
		if err != nil || res.ModelCalls != 1 || res.ToolResults != 1 {
			t.Fatalf("PruneTurnRecords = %+v, %v; want 1 model call, 1 tool result", res, err)
		}
		if got, _ := db.ModelCalls(ctx, old.ID); len(got) != 0 {
			t.Errorf("old turn keeps %d model calls, want 0", len(got))
		}
		if got, _ := db.ModelCalls(ctx, fresh.ID); len(got) != 1 {
			t.Errorf("fresh turn has %d model calls, want 1", len(got))
		}
		turns, _ := db.Turns(ctx, ids[0], 10)
		if len(turns) != 2 {
			t.Fatalf("Turns = %d, want both turn rows kept", len(turns))
		}
		for _, turn := range turns {
			wantLong := long
			if turn.ID == old.ID {
				wantLong = store.PrunedResult
			}
			if turn.ToolCalls[0].Result != wantLong || turn.ToolCalls[1].Result != "small" {
				t.Errorf("turn %d tool results = %.40q, %q; want %.40q, small", turn.ID, turn.ToolCalls[0].Result, turn.ToolCalls[1].Result, wantLong)
			}
		}
		if res, err := db.PruneTurnRecords(ctx, clk.Now().Add(-30*24*time.Hour), 1024); err != nil || res != (store.PruneResult{}) {
			t.Errorf("second PruneTurnRecords = %+v, %v; want nothing left to prune", res, err)
		}
	})
}
