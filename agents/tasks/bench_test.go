package tasks_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// seedTasks stores n tasks spread over the states, 20 agents and 10
// labels, each with its thread, in one transaction.
func seedTasks(b *testing.B, f *fixture, n int) []bullpen.Member {
	b.Helper()
	var agents []bullpen.Member
	for i := range 20 {
		agents = append(agents, f.agent(b, fmt.Sprintf("worker%d", i)))
	}
	_, err := f.db.Transact(context.Background(), func(tx *store.Tx) error {
		for i := range n {
			m, err := tx.CreateMessage(bullpen.Message{ChannelID: f.general.ID, AuthorID: f.ada.ID, Body: "task", Source: bullpen.SourceAPI})
			if err != nil {
				return err
			}
			t := bullpen.Task{Title: fmt.Sprintf("task %d", i), State: bullpen.TaskStates[i%len(bullpen.TaskStates)], CreatorID: f.ada.ID,
				ChannelID: f.general.ID, ThreadID: m.ID, Labels: []string{fmt.Sprintf("l%d", i%10)}}
			if i%3 != 0 {
				t.OwnerID = agents[i%len(agents)].ID
			}
			if _, err := tx.CreateTask(t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return agents
}

// BenchmarkTaskBoard: 10,000 tasks; the board's first page (50 tasks of
// each state, one query per column) and task_list for one agent (its
// open tasks), as p95 milliseconds, on SQLite and PostgreSQL.
func BenchmarkTaskBoard(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			f := newFixture(b, storetest.Config(b, d))
			agents := seedTasks(b, f, 10000)
			ctx := context.Background()
			var board, mine []time.Duration
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				for _, st := range bullpen.TaskStates {
					if _, err := f.svc.List(ctx, f.ada, bullpen.TaskFilter{States: []string{st}, Limit: 50}); err != nil {
						b.Fatal(err)
					}
				}
				board = append(board, time.Since(start))
				start = time.Now()
				if _, err := f.svc.List(ctx, agents[3], bullpen.TaskFilter{OwnerID: agents[3].ID, Open: true, Limit: 30}); err != nil {
					b.Fatal(err)
				}
				mine = append(mine, time.Since(start))
			}
			b.ReportMetric(p95(board), "board_p95_ms")
			b.ReportMetric(p95(mine), "task_list_p95_ms")
		})
	}
}

func p95(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)*95/100].Microseconds()) / 1000
}
