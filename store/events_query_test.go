package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// TestEventPageAudience: a non-admin's pages leave out events whose
// audience excludes them, in the query itself, so a page is full when more
// visible events exist; an admin sees them all.
func TestEventPageAudience(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		write(t, db, func(tx *store.Tx) error {
			for i := range 30 {
				aud := []int64(nil)
				switch i % 3 {
				case 1:
					aud = []int64{7, 12} // 12 must not match 2
				case 2:
					aud = []int64{2}
				}
				if _, err := tx.Emit(testKinds[i%3], 0, aud, map[string]int{"i": i}); err != nil {
					return err
				}
			}
			return nil
		})
		ctx := context.Background()
		count := func(v store.EventViewer) (int, int) {
			t.Helper()
			n, pages := 0, 0
			for before := int64(1 << 40); before != 0; pages++ {
				p, err := db.EventPage(ctx, v, bullpen.EventFilter{Before: before, Limit: 4})
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range p.Items {
					if !ev.VisibleTo(v.ID, v.Admin) {
						t.Errorf("viewer %d sees event %d (audience %v)", v.ID, ev.Seq, ev.Audience)
					}
				}
				n += len(p.Items)
				before = p.NextBefore
			}
			return n, pages
		}
		if n, pages := count(store.EventViewer{ID: 2}); n != 20 || pages != 5 {
			t.Errorf("member 2 sees %d events in %d pages, want 20 in 5", n, pages)
		}
		if n, _ := count(store.EventViewer{ID: 7}); n != 20 {
			t.Errorf("member 7 sees %d events, want 20", n)
		}
		if n, _ := count(store.EventViewer{ID: 99, Admin: true}); n != 30 {
			t.Errorf("an admin sees %d events, want 30", n)
		}
		p, err := db.EventPage(ctx, store.EventViewer{ID: 2}, bullpen.EventFilter{Limit: 100, Kinds: []string{testKinds[2], testKinds[0]}, After: 3})
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range p.Items {
			if ev.Seq <= 3 || (ev.Type != testKinds[2] && ev.Type != testKinds[0]) || (i > 0 && ev.Seq <= p.Items[i-1].Seq) {
				t.Errorf("forward page with kinds: item %d = %d %s", i, ev.Seq, ev.Type)
			}
		}
	})
}

// TestLatestReplies returns the newest replies of many roots in one
// query, oldest first per root, without deleted replies.
func TestLatestReplies(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ada, _, ch := people(t, db)
		var roots []bullpen.Message
		var deleted int64
		write(t, db, func(tx *store.Tx) error {
			for r := range 3 {
				root, err := tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, Body: fmt.Sprintf("root %d", r)})
				if err != nil {
					return err
				}
				roots = append(roots, root)
				for i := range r * 2 { // 0, 2 and 4 replies
					m, err := tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, ThreadID: root.ID, Body: fmt.Sprintf("r%d-%d", r, i)})
					if err != nil {
						return err
					}
					deleted = m.ID
				}
			}
			_, err := tx.UpdateMessageBody(deleted, "", nil, true) // root 2's newest
			return err
		})
		got, err := db.LatestReplies(context.Background(), ch.ID, []int64{roots[0].ID, roots[1].ID, roots[2].ID}, 2)
		if err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for _, m := range got {
			bodies = append(bodies, m.Body)
		}
		if want := "[r1-0 r1-1 r2-1 r2-2]"; fmt.Sprint(bodies) != want {
			t.Errorf("LatestReplies = %v, want %s", bodies, want)
		}
	})
}
