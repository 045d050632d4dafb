package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// A grouped write's rows, which PostgreSQL writes in one statement for
// the whole batch, are stored exactly as GORM stores the same message
// and event; the GORM insert that follows them in the transaction finds
// them written (its ID and sequence come after theirs).
func TestBatchInsertsMatchGORM(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ada, _, ch := people(t, db)
		var gormMsg, gormSeq int64
		var msg bullpen.Message
		var ev bullpen.Event
		_, err := db.TransactGrouped(context.Background(), func(tx *store.Tx) error {
			var err error
			msg, err = tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, Body: "by gorm", Mentions: []string{"ada"}, Source: "api"})
			if err != nil {
				return err
			}
			if ev, err = tx.Emit(testKind, ch.ID, []int64{1, 2}, map[string]any{}); err != nil {
				return err
			}
			gormMsg, gormSeq, err = tx.CreateRowsByGORM(ch.ID, ada.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		const msgCols = "SELECT channel_id, author_id, thread_id, body, mentions, reply_count, source, created_at, 't=' || created_at, edited_at, deleted_at, turn_id FROM messages WHERE id = ?"
		const evCols = "SELECT type, channel_id, actor_id, audience, payload, created_at, 't=' || created_at FROM events WHERE seq = ?"
		for _, c := range []struct {
			what, query string
			gorm, batch int64
		}{{"message", msgCols, gormMsg, msg.ID}, {"event", evCols, gormSeq, ev.Seq}} {
			want, err1 := db.RawRow(c.query, c.gorm)
			got, err2 := db.RawRow(c.query, c.batch)
			if err1 != nil || err2 != nil || len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%s stored by the batch = %v, %v; by GORM %v, %v", c.what, got, err2, want, err1)
			}
		}
		if gormMsg <= msg.ID || gormSeq != ev.Seq+1 {
			t.Errorf("GORM's message %d, event %d after the batch's %d, %d; want later ids, the next seq", gormMsg, gormSeq, msg.ID, ev.Seq)
		}
	})
}

// A reply to a message written earlier in the same batch finds its root:
// the batch's held rows are written before the UPDATE that counts the
// reply, and the reply, which references its root, is written after it.
func TestBatchReplyToMessageOfSameBatch(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ada, _, ch := people(t, db)
		var root, reply bullpen.Message
		evs, err := db.TransactGrouped(context.Background(), func(tx *store.Tx) error {
			var err error
			if root, err = tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, Body: "root", Source: "api"}); err != nil {
				return err
			}
			if _, err = tx.Emit(bullpen.EventMessagePosted, ch.ID, nil, root); err != nil {
				return err
			}
			if reply, err = tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, ThreadID: root.ID, Body: "reply", Source: "api"}); err != nil {
				return err
			}
			_, err = tx.Emit(bullpen.EventMessagePosted, ch.ID, nil, reply)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		gotRoot, err1 := db.Message(ctx, root.ID)
		gotReply, err2 := db.Message(ctx, reply.ID)
		if err1 != nil || err2 != nil || gotRoot.ReplyCount != 1 || gotReply.ThreadID != root.ID || gotReply.Body != "reply" {
			t.Errorf("root %+v, %v; reply %+v, %v; want the root counting one reply", gotRoot, err1, gotReply, err2)
		}
		var named []int64
		for _, ev := range evs {
			var m bullpen.Message
			json.Unmarshal(ev.Payload, &m)
			named = append(named, m.ID)
		}
		if !slices.Equal(named, []int64{root.ID, reply.ID}) || len(evs) != 2 || evs[1].Seq != evs[0].Seq+1 {
			t.Errorf("events name messages %v (%v); want %d then %d, consecutive", named, seqs(evs), root.ID, reply.ID)
		}
		assertGapFree(t, db, 2)
	})
}

// In a batch whose shared write fails (a message in a channel that does
// not exist, found only when the batch's rows are written), the other
// writes commit in the order they queued, their events gap-free.
func TestBatchFailingRowKeepsOrder(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ada, _, ch := people(t, db)
		posts := make([]*groupPost, 12)
		for i := range posts {
			posts[i] = &groupPost{}
		}
		posts[5].fail = "fk"
		runBatch(t, db, ch, ada.ID, posts)
		checkGroup(t, db, posts, 0)
		evs, err := db.EventsAfter(context.Background(), 1, 100) // after the holding write's
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, ev := range evs {
			var m bullpen.Message
			json.Unmarshal(ev.Payload, &m)
			ids = append(ids, m.ID)
		}
		if !slices.IsSorted(ids) || len(ids) != len(posts)-1 {
			t.Errorf("events name messages %v; want %d, in the order their messages were written", ids, len(posts)-1)
		}
	})
}

// Two handles on one database (two replicas on PostgreSQL) post grouped
// batches concurrently: every event is numbered once, 1..N with no gap,
// and each names a message that was stored with it.
func TestBatchesOfTwoHandlesGapFree(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		var dbs []*store.DB
		for range 2 {
			db, err := store.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs = append(dbs, db)
		}
		ada, _, ch := people(t, dbs[0])
		const writers, posts = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range posts {
					p := &groupPost{}
					if _, err := dbs[w%2].TransactGrouped(ctx, p.write(ch, ada.ID)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		assertGapFree(t, dbs[0], writers*posts)
		evs, _ := dbs[1].EventsAfter(ctx, 0, writers*posts)
		seen := map[int64]bool{}
		for _, ev := range evs {
			var m bullpen.Message
			json.Unmarshal(ev.Payload, &m)
			if stored, err := dbs[1].Message(ctx, m.ID); err != nil || seen[m.ID] || stored.ID != m.ID {
				t.Fatalf("event %d names message %d: stored %+v, %v, seen before %v", ev.Seq, m.ID, stored, err, seen[m.ID])
			}
			seen[m.ID] = true
		}
	})
}
