package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// BenchmarkEventPage times one timeline page (50 events, backwards from
// the newest) over a log of 50,000 events by 20 actors in 10 channels,
// unfiltered and with each filter, as a non-admin (the audience check is
// part of the query). The figure is the time per page.
func BenchmarkEventPage(b *testing.B) {
	for _, dialect := range storetest.Dialects(b) {
		db, err := store.Open(context.Background(), storetest.Config(b, dialect))
		if err != nil {
			b.Fatal(err)
		}
		fillLog(b, db, 50_000)
		if dialect == store.Postgres {
			// autovacuum would have by now: without statistics the
			// planner scans an index it should not (about 15 ms a page).
			if err := db.ExecSQL("ANALYZE events"); err != nil {
				b.Fatal(err)
			}
		}
		for _, c := range []struct {
			name string
			f    bullpen.EventFilter
		}{
			{"all", bullpen.EventFilter{}},
			{"agent", bullpen.EventFilter{ActorID: 7}},
			{"channel", bullpen.EventFilter{ChannelID: 3}},
			{"kind", bullpen.EventFilter{Kinds: []string{"agent.tool_finished"}}},
			{"namespace", bullpen.EventFilter{Kinds: []string{"wiki"}}},
			{"agent+kind", bullpen.EventFilter{ActorID: 7, Kinds: []string{"agent.tool_finished", "agent.turn_started"}}},
		} {
			b.Run(dialect+"/"+c.name, func(b *testing.B) {
				f := c.f
				f.Before, f.Limit = 1<<40, 50
				for b.Loop() {
					p, err := db.EventPage(context.Background(), store.EventViewer{ID: 2}, f)
					if err != nil || len(p.Items) == 0 {
						b.Fatalf("page: %d items, %v", len(p.Items), err)
					}
				}
			})
		}
		db.Close()
	}
}

// fillLog writes n events in batches: mostly agent tool calls, some
// messages and wiki edits, a tenth with a DM audience.
func fillLog(b *testing.B, db *store.DB, n int) {
	b.Helper()
	kinds := []string{"agent.tool_started", "agent.tool_finished", "message.posted", "agent.turn_started", "wiki.page_saved"}
	// The events' 10 channels (ids 1 to 10): public, so an audience
	// narrows what their kind allows (the store checks it).
	if _, err := db.Transact(context.Background(), func(tx *store.Tx) error {
		m, err := tx.CreateMember(bullpen.Member{Handle: "ada", DisplayName: "Ada", Kind: bullpen.KindHuman})
		for i := 1; i <= 10 && err == nil; i++ {
			_, err = tx.CreateChannel(bullpen.Channel{Name: fmt.Sprint("c", i), Kind: bullpen.ChannelPublic, CreatedBy: m.ID})
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	for done := 0; done < n; {
		_, err := db.Transact(context.Background(), func(tx *store.Tx) error {
			for i := 0; i < 1000 && done < n; i, done = i+1, done+1 {
				var aud []int64
				if done%10 == 0 {
					aud = []int64{2, 9}
				}
				actor := int64(done%20 + 1)
				payload := map[string]any{"agent_id": actor, "author_id": actor, "n": done, "tool": fmt.Sprint("t", done%7)}
				if _, err := tx.Emit(kinds[done%len(kinds)], int64(done%10+1), aud, payload); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
