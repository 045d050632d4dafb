package store_test

import (
	"slices"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// The prepared inserts of the post path store exactly what GORM stores
// for the same message and event: same column types, same time format.
func TestHotInsertsMatchGORM(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ada, _, ch := people(t, db)
		var gormMsg, gormSeq int64
		var hot bullpen.Message
		var hotEv bullpen.Event
		write(t, db, func(tx *store.Tx) error {
			var err error
			if gormMsg, gormSeq, err = tx.CreateRowsByGORM(ch.ID, ada.ID); err != nil {
				return err
			}
			hot, err = tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, Body: "by hand", Mentions: []string{"ada"}, Source: "api"})
			if err != nil {
				return err
			}
			hotEv, err = tx.Emit(testKind, ch.ID, []int64{1, 2}, map[string]any{})
			return err
		})
		const msgCols = "SELECT channel_id, author_id, thread_id, mentions, reply_count, source, created_at, 't=' || created_at, edited_at, deleted_at, turn_id FROM messages WHERE id = ?"
		const evCols = "SELECT type, channel_id, actor_id, audience, payload, created_at, 't=' || created_at FROM events WHERE seq = ?"
		for _, c := range []struct {
			what, query string
			gorm, hot   int64
		}{{"message", msgCols, gormMsg, hot.ID}, {"event", evCols, gormSeq, hotEv.Seq}} {
			want, err1 := db.RawRow(c.query, c.gorm)
			got, err2 := db.RawRow(c.query, c.hot)
			if err1 != nil || err2 != nil || len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%s stored by the prepared insert = %v, %v; by GORM %v, %v", c.what, got, err2, want, err1)
			}
		}
		if hot.ID != gormMsg+1 || hotEv.Seq != gormSeq+1 {
			t.Errorf("ids: message %d after %d, event %d after %d; want consecutive", hot.ID, gormMsg, hotEv.Seq, gormSeq)
		}
	})
}

// A message event's actor, taken from the message without decoding its
// payload, is the one the decoder finds.
func TestMessageEventActor(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ada, bob, ch := people(t, db)
		var evs []bullpen.Event
		write(t, db, func(tx *store.Tx) error {
			for _, m := range []bullpen.Member{ada, bob} {
				msg, err := tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: m.ID, Body: "hi", Source: "api"})
				if err != nil {
					return err
				}
				for _, typ := range []string{bullpen.EventMessagePosted, bullpen.EventMessageEdited} {
					ev, err := tx.Emit(typ, ch.ID, nil, msg)
					if err != nil {
						return err
					}
					evs = append(evs, ev)
				}
			}
			return nil
		})
		for _, ev := range evs {
			if want := bullpen.EventActorID(ev.Type, ev.Payload); ev.ActorID != want || want == 0 {
				t.Errorf("%s event %d: actor %d, want %d", ev.Type, ev.Seq, ev.ActorID, want)
			}
		}
	})
}
