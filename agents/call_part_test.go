package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// fakeCalls is the tool path's store (toolCalls' Transact over callTx),
// and an office backend with a "with tx" write, in memory: a
// transaction's writes are staged and kept only when it commits.
type fakeCalls struct {
	steps  map[string]store.Step
	notes  []string // the backend's effects
	events []string
	calls  int64
	// withNotes are the journal steps committed in a transaction that
	// wrote a note.
	withNotes []string
}

// fakeCallTx is one transaction's writes (callTx).
type fakeCallTx struct {
	f      *fakeCalls
	steps  map[string]store.Step
	notes  []string
	events []string
}

func (f *fakeCalls) Transact(_ context.Context, fn func(callTx) error) error {
	tx := &fakeCallTx{f: f, steps: map[string]store.Step{}}
	if err := fn(tx); err != nil {
		return err
	}
	maps.Copy(f.steps, tx.steps)
	if len(tx.notes) > 0 {
		f.withNotes = slices.AppendSeq(f.withNotes, maps.Keys(tx.steps))
	}
	f.notes = append(f.notes, tx.notes...)
	f.events = append(f.events, tx.events...)
	return nil
}

// addNote is the backend's write: the note and whatever fn writes commit
// together.
func (f *fakeCalls) addNote(ctx context.Context, text string, fn func(tx StepTx) error) error {
	return f.Transact(ctx, func(tx callTx) error {
		tx.(*fakeCallTx).notes = append(tx.(*fakeCallTx).notes, text)
		if fn == nil {
			return nil
		}
		return fn(tx)
	})
}

func (tx *fakeCallTx) Emit(typ string, _ int64, _ []int64, _ any) (bullpen.Event, error) {
	tx.events = append(tx.events, typ)
	return bullpen.Event{Type: typ}, nil
}

func (tx *fakeCallTx) RecordStep(s store.Step) error {
	if _, done := tx.f.steps[s.Key]; done {
		return bullpen.Errorf(bullpen.ECONFLICT, "step %s was already done", s.Key)
	}
	tx.steps[s.Key] = s
	return nil
}

func (tx *fakeCallTx) NoteStep(s store.Step) error {
	if _, done := tx.f.steps[s.Key]; !done {
		tx.steps[s.Key] = s
	}
	return nil
}

func (tx *fakeCallTx) CreateToolCall(c bullpen.ToolCall) (bullpen.ToolCall, error) {
	tx.f.calls++
	c.ID = tx.f.calls
	return c, nil
}

func (tx *fakeCallTx) FinishToolCall(bullpen.ToolCall) error { return nil }

func (tx *fakeCallTx) CreateApproval(a bullpen.Approval) (bullpen.Approval, error) { return a, nil }

func (tx *fakeCallTx) SetApprovalResult(int64, string) error { return nil }

// plainWrites is turnWrites without outages or notices.
type plainWrites struct{}

func (plainWrites) retryWrite(_ context.Context, _ *turnEnv, _ string, write func() error) error {
	return write()
}

func (plainWrites) noticeOnce(context.Context, *turnEnv, string, string) {}

// TestToolCallsAlone builds the turn's tool path (toolCalls) on fakes of
// the interfaces it declares (its Transact over callTx, turnWrites) and a
// registry of fake tools: no service, no database. An office tool's
// effect and its journaled outcome commit in one transaction; the same
// call again is replayed from the journal, not run; and an office tool
// that writes around Call.Write is reported.
func TestToolCallsAlone(t *testing.T) {
	ctx := context.Background()
	f := &fakeCalls{steps: map[string]store.Step{}}
	reg := NewRegistry()
	schema := json.RawMessage(`{"type":"object"}`)
	runs := 0
	err := registerAll(reg,
		Tool{Name: "note_add", Effect: EffectOffice, Parameters: schema, Run: func(ctx context.Context, c *Call) (string, error) {
			runs++
			return c.Write(func(record Record) (string, error) {
				return "noted", f.addNote(ctx, "one", func(tx StepTx) error { return record(tx, "noted") })
			})
		}},
		Tool{Name: "note_raw", Effect: EffectOffice, Parameters: schema, Run: func(ctx context.Context, c *Call) (string, error) {
			return "noted", f.addNote(ctx, "raw", nil) // around Call.Write: its record never runs
		}})
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	tc := &toolCalls{tools: reg, db: f, status: newStatuses(time.Now), now: time.Now, writes: plainWrites{}}
	env := func() *turnEnv {
		return &turnEnv{turn: bullpen.Turn{ID: 7}, agent: bullpen.Member{ID: 2, Handle: "lead"}, role: bullpen.Role{Tools: reg.Names()},
			j: &journal{anchor: 1, turnID: 7, steps: maps.Clone(f.steps)}, log: slog.New(slog.NewTextHandler(&logged, nil))}
	}

	out, failed := tc.call(ctx, env(), "t0.0", llm.ToolCall{ID: "c1", Name: "note_add"})
	if out != "noted" || failed || len(f.notes) != 1 {
		t.Fatalf("call(note_add) = %q, failed %v, notes %v; want noted, one note", out, failed, f.notes)
	}
	var o toolOutcome
	if err := json.Unmarshal([]byte(f.steps["t0.0"].Payload), &o); err != nil || o.Out != "noted" || o.State != "ok" {
		t.Errorf("journal t0.0 = %q (%v), want the outcome", f.steps["t0.0"].Payload, err)
	}
	if !slices.Contains(f.withNotes, "t0.0") {
		t.Errorf("steps committed with the note: %v, want t0.0: the effect and its record in one transaction", f.withNotes)
	}
	if want := []string{bullpen.EventToolStarted, bullpen.EventToolFinished}; strings.Join(f.events, " ") != strings.Join(want, " ") {
		t.Errorf("events = %v, want %v", f.events, want)
	}

	out, failed = tc.call(ctx, env(), "t0.0", llm.ToolCall{ID: "c1", Name: "note_add"})
	if out != "noted" || failed || runs != 1 || len(f.notes) != 1 {
		t.Errorf("the same call again = %q, failed %v, after %d runs and notes %v; want the recorded outcome, run once", out, failed, runs, f.notes)
	}

	if out, _ := tc.call(ctx, env(), "t0.1", llm.ToolCall{ID: "c2", Name: "note_raw"}); out != "noted" || !strings.Contains(logged.String(), "broke the effect rule") {
		t.Errorf("an office tool writing around Call.Write = %q, log %q; want it reported", out, logged.String())
	}
}
