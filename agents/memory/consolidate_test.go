package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
)

// models is a Models of one scripted provider as the office default (nil:
// none set up).
type models struct{ p llm.Provider }

func (m models) Provider(_ context.Context, name string) (llm.Provider, string, error) {
	if m.p == nil || name != "" {
		return nil, name, bullpen.Errorf(bullpen.ENOTFOUND, "no provider named %q", name)
	}
	return m.p, "scripted", nil
}

const folded = `Here you are: [{"text": "Deploys: never on Fridays, smoke tests first, then tag the release", "kind": "lesson"},
	{"text": "Team habits: standup at 9:30, reviews within a day", "kind": "fact"}]`

// overCap writes a pinned entry and eight unpinned ones with cap 5.
func overCap(t *testing.T, f *fixture, m *memory.Service) (pinned bullpen.MemoryEntry, texts []string) {
	t.Helper()
	pinned, _, err := m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "Always answer in English", Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		text := fmt.Sprintf("habit %c%c: item number %d of the team's routine", 'a'+i, 'k'+i, i)
		if _, _, err := m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: text}); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, text)
	}
	return pinned, texts
}

func history(t *testing.T, f *fixture, action string) []bullpen.MemoryHistory {
	t.Helper()
	hs, err := f.m.History(f.ctx, f.ada, f.eng.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []bullpen.MemoryHistory
	for _, h := range hs {
		if h.Action == action {
			out = append(out, h)
		}
	}
	return out
}

// Over the cap, the least used unpinned entries are folded by one model
// call into fewer; the history keeps each one's text and the new text. A
// crash between the model's answer and the commit changes nothing; the
// next round does it once.
func TestConsolidateOverCapExactlyOnce(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		var calls atomic.Int64
		var asked atomic.Pointer[string]
		model := scripted.New(func(req llm.Request) (llm.Response, error) {
			calls.Add(1)
			s := req.Messages[0].Content
			asked.Store(&s)
			return llm.Response{Text: folded}, nil
		})
		cfg := memory.Config{Cap: 5, Models: models{model}}
		m := memory.New(f.db, cfg)
		pinned, texts := overCap(t, f, m)
		if n, _ := f.db.MemoryCount(f.ctx, f.eng.ID); n != 9 {
			t.Fatalf("%d entries after the writes, want 9: a write must not consolidate on its own path", n)
		}
		if calls.Load() != 0 {
			t.Fatalf("the model was called on the writes' path")
		}

		crash := errors.New("crash before commit")
		memory.SetBeforeCommit(m, func() error { return crash })
		if _, err := m.Consolidate(f.ctx, f.eng.ID); !errors.Is(err, crash) {
			t.Fatalf("Consolidate with a crash = %v", err)
		}
		if n, _ := f.db.MemoryCount(f.ctx, f.eng.ID); n != 9 || len(history(t, f, bullpen.MemoryConsolidated)) != 0 {
			t.Fatalf("after a crash before commit: %d entries (want 9) and history %v", n, history(t, f, bullpen.MemoryConsolidated))
		}

		again := memory.New(f.db, cfg) // the restarted server
		res, err := again.Consolidate(f.ctx, f.eng.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res.Folded != 8 || res.Written != 2 || res.Expired != 0 || calls.Load() != 2 {
			t.Fatalf("Consolidate = %+v after %d model calls; want 8 folded into 2, 2 calls", res, calls.Load())
		}
		for _, text := range texts {
			if !strings.Contains(*asked.Load(), text) {
				t.Errorf("the model was not shown %q", text)
			}
		}
		es, err := f.m.List(f.ctx, f.ada, f.eng.ID, bullpen.MemoryListOptions{})
		if err != nil || len(es) != 3 {
			t.Fatalf("after consolidation: %d entries, %v; want the pinned one and 2 new", len(es), err)
		}
		for _, e := range es {
			if e.ID != pinned.ID && (e.SourceKind != bullpen.MemorySourceConsolidation || e.AuthorID != f.eng.ID) {
				t.Errorf("new entry %+v: want source consolidation, written by the agent", e)
			}
		}
		hs := history(t, f, bullpen.MemoryConsolidated)
		if len(hs) != 8 {
			t.Fatalf("%d consolidated rows in the history, want 8 (one per folded entry)", len(hs))
		}
		for _, h := range hs {
			if !strings.Contains(strings.Join(texts, "|"), h.Before) || !strings.Contains(h.After, "never on Fridays") {
				t.Errorf("history row %+v: want the old text before and the new after", h)
			}
		}
		if res, err := again.Consolidate(f.ctx, f.eng.ID); err != nil || res != (memory.Consolidation{}) || calls.Load() != 2 {
			t.Errorf("a second round under the cap = %+v, %v, %d calls; want nothing done", res, err, calls.Load())
		}
	})
}

// An entry edited while the model thinks is not undone: the round
// commits nothing, and the next one folds the edited text.
func TestConsolidateYieldsToEdits(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		var victim atomic.Int64
		edited := "habit edited: a human changed this meanwhile"
		model := scripted.New(func(req llm.Request) (llm.Response, error) {
			if id := victim.Swap(0); id != 0 {
				if _, err := f.m.Update(f.ctx, f.ada, f.eng.ID, id, bullpen.MemoryUpdate{Text: &edited}); err != nil {
					return llm.Response{}, err
				}
			} else if !strings.Contains(req.Messages[0].Content, edited) {
				return llm.Response{}, errors.New("the retry was not shown the edited text")
			}
			return llm.Response{Text: folded}, nil
		})
		m := memory.New(f.db, memory.Config{Cap: 5, Models: models{model}})
		overCap(t, f, m)
		least, err := f.db.LeastUsedMemory(f.ctx, f.eng.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		victim.Store(least[0].ID)
		if _, err := m.Consolidate(f.ctx, f.eng.ID); !bullpen.IsCode(err, bullpen.ECONFLICT) {
			t.Fatalf("Consolidate over an edit = %v, want ECONFLICT", err)
		}
		if e, err := f.db.Memory(f.ctx, least[0].ID); err != nil || e.Text != edited {
			t.Fatalf("the edit was lost: %+v, %v", e, err)
		}
		if n, _ := f.db.MemoryCount(f.ctx, f.eng.ID); n != 9 {
			t.Fatalf("%d entries after a conflicted round, want 9", n)
		}
		if res, err := m.Consolidate(f.ctx, f.eng.ID); err != nil || res.Folded != 8 {
			t.Fatalf("the next round = %+v, %v", res, err)
		}
	})
}

// Without a model, or when its answer is no use, the excess is expired
// with its text kept in the history; Run does it off the write's path.
func TestConsolidateExpiresWithoutModel(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		for _, tc := range []struct {
			name string
			p    llm.Provider
		}{
			{"no provider", nil},
			{"an answer without JSON", scripted.NewSteps(scripted.Step{Text: "I would rather not."})},
		} {
			var log logBuf
			before := len(history(t, f, bullpen.MemoryExpired))
			m := memory.New(f.db, embedConfigLog(memory.Config{Cap: 5, Models: models{tc.p}}, &log))
			ctx, cancel := context.WithCancel(f.ctx)
			done := make(chan struct{})
			go func() { m.Run(ctx, time.Hour); close(done) }()
			overCap(t, f, m)
			deadline := time.Now().Add(10 * time.Second)
			for n := 9; n > 5 && time.Now().Before(deadline); n, _ = f.db.MemoryCount(f.ctx, f.eng.ID) {
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			<-done
			if n, _ := f.db.MemoryCount(f.ctx, f.eng.ID); n != 5 {
				t.Fatalf("%s: %d entries, want the cap of 5", tc.name, n)
			}
			if hs := history(t, f, bullpen.MemoryExpired); len(hs)-before != 4 || !strings.HasPrefix(hs[0].Before, "habit") {
				t.Fatalf("%s: expired history %+v, want 4 rows with the old text", tc.name, hs)
			}
			if tc.p != nil && !strings.Contains(log.String(), "expiring the excess") {
				t.Errorf("%s: no log line: %s", tc.name, log.String())
			}
			// Start the next case afresh.
			es, _ := f.db.MemoryEntries(f.ctx, f.eng.ID, bullpen.MemoryListOptions{Limit: 100})
			_, err := f.db.Transact(f.ctx, func(tx *store.Tx) error {
				for _, e := range es {
					if err := tx.DeleteMemory(e.ID, bullpen.MemoryHistory{AgentID: f.eng.ID, Action: bullpen.MemoryForgot, ActorID: f.ada.ID}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}
