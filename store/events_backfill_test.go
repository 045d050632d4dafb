package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/migrations"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// TestActorBackfillAgreesWithGo runs migration 0010's UPDATE over events
// of every family, on each database, and checks it gives the actor that
// bullpen.EventActorID gives new events: old and new rows filter alike.
func TestActorBackfillAgreesWithGo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		payloads := []struct {
			typ     string
			payload any
			actor   int64
		}{
			{"agent.hired", map[string]any{"id": 11, "handle": "eng"}, 11},
			{"agent.tool_finished", map[string]any{"agent_id": 12, "tool": "x", "result": "nul \u0000 inside"}, 12},
			{"approval.answered", map[string]any{"agent_id": 13, "answered_by": 1}, 13},
			{"message.posted", map[string]any{"id": 5, "author_id": 14}, 14},
			{"wiki.page_saved", map[string]any{"slug": "a", "author_id": 15}, 15},
			{"sandbox.exec_finished", map[string]any{"id": "sb", "owner_id": 3, "by_id": 16}, 16},
			{"sandbox.state", map[string]any{"id": "sb", "owner_id": 17}, 17},
			{"channel.created", map[string]any{"id": 2, "created_by": 18}, 18},
			{"channel.joined", map[string]any{"channel_id": 2, "member": map[string]any{"id": 19}}, 19},
			{"member.updated", map[string]any{"id": 20, "handle": "h"}, 20},
		}
		_, err = db.Transact(ctx, func(tx *store.Tx) error {
			for _, p := range payloads {
				if _, err := tx.Emit(p.typ, 0, nil, p.payload); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// A kind nobody declares (any more) can only be an old row: the
		// store refuses to write one.
		payloads = append(payloads, struct {
			typ     string
			payload any
			actor   int64
		}{"something.else", map[string]any{"id": 21}, 0})
		if err := db.ExecSQL(`INSERT INTO events (seq, type, actor_id, audience, payload, created_at)
			VALUES ((SELECT MAX(seq) + 1 FROM events), 'something.else', 0, '', '{"id":21}', CURRENT_TIMESTAMP)`); err != nil {
			t.Fatal(err)
		}
		if err := db.ExecSQL("UPDATE events SET actor_id = -1"); err != nil {
			t.Fatal(err)
		}
		if err := db.ExecSQL(backfillSQL(t, db.Dialect())); err != nil {
			t.Fatalf("backfill: %v", err)
		}
		rows, err := db.EventActors()
		if err != nil || len(rows) != len(payloads) {
			t.Fatalf("EventActors = %d rows, %v", len(rows), err)
		}
		for i, r := range rows {
			typ, payload, actor := r[0].(string), r[1].(string), r[2].(int64)
			goActor := bullpen.EventActorID(typ, []byte(payload))
			if actor != goActor || goActor != payloads[i].actor {
				raw, _ := json.Marshal(payloads[i].payload)
				t.Errorf("%s %s: backfill %d, Go %d, want %d", typ, raw, actor, goActor, payloads[i].actor)
			}
		}
	})
}

// backfillSQL is the UPDATE statement of the dialect's migration 0010.
func backfillSQL(t *testing.T, dialect string) string {
	t.Helper()
	raw, err := migrations.FS.ReadFile(dialect + "/0010_event_filters.sql")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "UPDATE events")
	j := strings.Index(s[i:], ";")
	if i < 0 || j < 0 {
		t.Fatal("no UPDATE in migration 0010")
	}
	return s[i : i+j]
}
