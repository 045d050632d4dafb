package agents

import (
	"context"
	"fmt"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// BenchmarkTaskTokens reports the prompt tokens per turn of the starter
// engineer (with its task tools) answering the same requests in an
// office where it owns no task and one where it owns 50 open tasks, and
// the ratio (target: within 10 %). Open tasks cost a turn nothing unless
// the agent asks for them: no task list is put in the prompt, and the task
// tools' schemas are the same either way.
func BenchmarkTaskTokens(b *testing.B) {
	for range b.N {
		none := taskTurnTokens(b, 0)
		fifty := taskTurnTokens(b, 50)
		b.ReportMetric(none, "tokens/turn-0-tasks")
		b.ReportMetric(fifty, "tokens/turn-50-tasks")
		b.ReportMetric(fifty/none, "ratio")
		if fifty > none*1.1 {
			b.Errorf("tokens per turn with 50 open tasks %.0f, with none %.0f: more than 10 %% apart", fifty, none)
		}
	}
}

// TestTaskTokensFlat is the benchmark's target as a test.
func TestTaskTokensFlat(t *testing.T) {
	none, fifty := taskTurnTokens(t, 0), taskTurnTokens(t, 50)
	if none == 0 || fifty > none*1.1 {
		t.Errorf("tokens per turn with 50 open tasks %.0f, with none %.0f; want within 10 %%", fifty, none)
	}
}

// taskTurnTokens runs memoryAsks (without memory) for an engineer that
// owns open open tasks and returns its mean input tokens per turn.
func taskTurnTokens(tb testing.TB, open int) float64 {
	sc := newMemoryScenario(tb, storetest.Dialects(tb)[0], false)
	defer sc.h.close()
	seedOwnedTasks(tb, sc.h, sc.eng, open)
	total := 0
	for _, ask := range memoryAsks {
		d, _ := sc.ask(sc.h.general.ID, 0, ask)
		total += d.Turn.InputTokens
	}
	return float64(total) / float64(len(memoryAsks))
}

// seedOwnedTasks stores n unfinished tasks owned by owner, each with its
// thread and a label, straight in the store (no wakes).
func seedOwnedTasks(tb testing.TB, h *harness, owner bullpen.Member, n int) {
	tb.Helper()
	states := []string{bullpen.TaskOpen, bullpen.TaskInProgress, bullpen.TaskBlocked}
	_, err := h.db.Transact(context.Background(), func(tx *store.Tx) error {
		for i := range n {
			m, err := tx.CreateMessage(bullpen.Message{ChannelID: h.general.ID, AuthorID: h.admin.ID, Body: fmt.Sprintf("Task: fix bug %d", i), Source: bullpen.SourceAPI})
			if err != nil {
				return err
			}
			t := bullpen.Task{Title: fmt.Sprintf("Fix bug %d in the billing service", i), Body: "Steps to reproduce: open the invoice page.",
				State: states[i%len(states)], OwnerID: owner.ID, CreatorID: h.admin.ID, ChannelID: h.general.ID, ThreadID: m.ID,
				Labels: []string{fmt.Sprintf("area%d", i%5)}}
			if _, err := tx.CreateTask(t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if n > 0 {
		ts, err := h.db.Tasks(context.Background(), bullpen.TaskFilter{OwnerID: owner.ID, Open: true, Limit: 100})
		if err != nil || len(ts) != n {
			tb.Fatalf("seeded %d open tasks, found %d (%v)", n, len(ts), err)
		}
	}
}
