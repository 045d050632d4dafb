package store_test

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

// The SQL of the office's tables, on every dialect: SQLite always,
// PostgreSQL when CI provides a server. These moved here from the office's
// suite, which now tests the office's rules on SQLite alone.

// openEach runs fn per dialect with a fresh, migrated database.
func openEach(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, _ := openClocked(t, cfg)
		fn(t, db)
	})
}

// people stores two humans and a public channel they made.
func people(t *testing.T, db *store.DB) (ada, bob bullpen.Member, ch bullpen.Channel) {
	t.Helper()
	write(t, db, func(tx *store.Tx) error {
		var err error
		if ada, err = tx.CreateMember(bullpen.Member{Handle: "ada", DisplayName: "Ada", Kind: bullpen.KindHuman}); err != nil {
			return err
		}
		if bob, err = tx.CreateMember(bullpen.Member{Handle: "bob", DisplayName: "Bob", Kind: bullpen.KindHuman}); err != nil {
			return err
		}
		ch, err = tx.CreateChannel(bullpen.Channel{Name: "general", Kind: bullpen.ChannelPublic, CreatedBy: ada.ID})
		return err
	})
	return ada, bob, ch
}

func TestMigrationsAllApplied(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		got, err := db.AppliedMigrations(context.Background())
		list, lerr := store.Migrations(db.Dialect())
		var want []int
		for _, m := range list {
			want = append(want, m.Version)
		}
		if err != nil || lerr != nil || len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("AppliedMigrations = %v, %v; want %v (%v)", got, err, want, lerr)
		}
	})
}

// A taken handle or channel name is ECONFLICT on both dialects (their
// unique-violation errors differ), and the failed insert stores nothing.
func TestUniqueNamesConflict(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ada, _, _ := people(t, db)
		_, err := db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateMember(bullpen.Member{Handle: "ada", DisplayName: "Other Ada", Kind: bullpen.KindHuman})
			return err
		})
		wantCode(t, "duplicate handle", err, bullpen.ECONFLICT)
		_, err = db.Transact(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateChannel(bullpen.Channel{Name: "general", Kind: bullpen.ChannelPublic, CreatedBy: ada.ID})
			return err
		})
		wantCode(t, "duplicate channel", err, bullpen.ECONFLICT)
		if n, err := db.CountMembers(ctx); err != nil || n != 2 {
			t.Errorf("CountMembers = %d, %v; want 2", n, err)
		}
		ms, err := db.Members(ctx)
		if err != nil || len(ms) != 2 || ms[0].Handle != "ada" || ms[1].Handle != "bob" {
			t.Errorf("Members = %+v, %v; want ada, bob", ms, err)
		}
	})
}

// Channel membership is a set: adding twice or removing what is not there
// reports false and changes nothing; Channels lists the public channels
// and only the member's own DMs.
func TestChannelMembers(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ada, bob, ch := people(t, db)
		var added, again, removed, gone bool
		write(t, db, func(tx *store.Tx) error {
			var err error
			if added, err = tx.AddChannelMember(ch.ID, bob.ID); err != nil {
				return err
			}
			if again, err = tx.AddChannelMember(ch.ID, bob.ID); err != nil {
				return err
			}
			if _, err = tx.AddChannelMember(ch.ID, ada.ID); err != nil {
				return err
			}
			if removed, err = tx.RemoveChannelMember(ch.ID, bob.ID); err != nil {
				return err
			}
			gone, err = tx.RemoveChannelMember(ch.ID, bob.ID)
			return err
		})
		if !added || again || !removed || gone {
			t.Errorf("add, add again, remove, remove again = %v %v %v %v; want true false true false", added, again, removed, gone)
		}
		if ids, err := db.ChannelMemberIDs(ctx, ch.ID); err != nil || !slices.Equal(ids, []int64{ada.ID}) {
			t.Errorf("ChannelMemberIDs = %v, %v; want [%d]", ids, err, ada.ID)
		}
		var dm bullpen.Channel
		write(t, db, func(tx *store.Tx) error {
			var err error
			if dm, err = tx.CreateChannel(bullpen.Channel{Name: "dm-ada", Kind: bullpen.ChannelDM, CreatedBy: ada.ID}); err != nil {
				return err
			}
			_, err = tx.AddChannelMember(dm.ID, ada.ID)
			return err
		})
		has := func(cs []bullpen.Channel, id int64) bool {
			return slices.ContainsFunc(cs, func(c bullpen.Channel) bool { return c.ID == id })
		}
		bobs, err := db.Channels(ctx, bob.ID)
		if err != nil || !has(bobs, ch.ID) || has(bobs, dm.ID) {
			t.Errorf("Channels(bob) = %+v, %v; want #general and not ada's DM", bobs, err)
		}
		adas, err := db.Channels(ctx, ada.ID)
		if err != nil || !has(adas, ch.ID) || !has(adas, dm.ID) {
			t.Errorf("Channels(ada) = %+v, %v; want #general and her DM", adas, err)
		}
	})
}

// Root messages page newest first by id, each page oldest first, with a
// flag for older ones; replies stay out of the pages and count on their root.
func TestChannelMessagesPaging(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ada, _, ch := people(t, db)
		var want []int64
		write(t, db, func(tx *store.Tx) error {
			for i := range 25 {
				m, err := tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, Body: fmt.Sprintf("m%d", i), Source: bullpen.SourceWeb})
				if err != nil {
					return err
				}
				want = append(want, m.ID)
			}
			_, err := tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, ThreadID: want[0], AuthorID: ada.ID, Body: "reply", Source: bullpen.SourceWeb})
			return err
		})
		var got []int64
		before := int64(0)
		for pages := 0; ; pages++ {
			page, more, err := db.ChannelMessages(ctx, ch.ID, before, 10)
			if err != nil || pages > 3 || len(page) == 0 {
				t.Fatalf("ChannelMessages(before %d) = %d, %v (page %d)", before, len(page), err, pages)
			}
			var ids []int64
			for _, m := range page {
				ids = append(ids, m.ID)
			}
			got = append(ids, got...)
			if !more {
				break
			}
			before = page[0].ID
		}
		if !slices.Equal(got, want) {
			t.Errorf("paged IDs = %v, want %v", got, want)
		}
		root, err := db.Message(ctx, want[0])
		if err != nil || root.ReplyCount != 1 {
			t.Errorf("root = %+v, %v; want 1 reply", root, err)
		}
		if rs, err := db.ThreadReplies(ctx, want[0], 10); err != nil || len(rs) != 1 || rs[0].Body != "reply" {
			t.Errorf("ThreadReplies = %+v, %v", rs, err)
		}
	})
}

// Edits and deletes keep every earlier body as a revision.
func TestMessageRevisionsKept(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ada, _, ch := people(t, db)
		var m bullpen.Message
		write(t, db, func(tx *store.Tx) error {
			var err error
			m, err = tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: ada.ID, Body: "first @bob", Mentions: []string{"bob"}, Source: bullpen.SourceWeb})
			if err != nil {
				return err
			}
			if _, err = tx.UpdateMessageBody(m.ID, "second", nil, false); err != nil {
				return err
			}
			_, err = tx.UpdateMessageBody(m.ID, "", nil, true)
			return err
		})
		revs, err := db.MessageRevisions(ctx, m.ID)
		if want := []string{"first @bob", "second"}; err != nil || !slices.Equal(revs, want) {
			t.Errorf("MessageRevisions = %q, %v; want %q", revs, err, want)
		}
		got, err := db.Message(ctx, m.ID)
		if err != nil || !got.Deleted || got.EditedAt == nil || len(got.Mentions) != 0 {
			t.Errorf("Message after edit and delete = %+v, %v", got, err)
		}
		_, err = db.Transact(ctx, func(tx *store.Tx) error { _, err := tx.UpdateMessageBody(9999, "x", nil, false); return err })
		wantCode(t, "edit an unknown message", err, bullpen.ENOTFOUND)
	})
}

// A revoked token is no longer found by its hash, only its owner revokes
// it, and a session is found until it expires.
func TestTokensAndSessions(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ada, bob, _ := people(t, db)
		var tok bullpen.Token
		write(t, db, func(tx *store.Tx) error {
			var err error
			tok, err = tx.CreateToken(ada.ID, "laptop", "hash-1", "bp_…1")
			return err
		})
		if got, err := db.TokenByHash(ctx, "hash-1"); err != nil || got.ID != tok.ID || got.MemberID != ada.ID {
			t.Errorf("TokenByHash = %+v, %v", got, err)
		}
		_, err := db.Transact(ctx, func(tx *store.Tx) error { return tx.RevokeToken(bob.ID, tok.ID) })
		wantCode(t, "revoke someone else's token", err, bullpen.ENOTFOUND)
		write(t, db, func(tx *store.Tx) error { return tx.RevokeToken(ada.ID, tok.ID) })
		_, err = db.TokenByHash(ctx, "hash-1")
		wantCode(t, "revoked token", err, bullpen.ENOTFOUND)
		_, err = db.Transact(ctx, func(tx *store.Tx) error { return tx.RevokeToken(ada.ID, tok.ID) })
		wantCode(t, "revoke twice", err, bullpen.ENOTFOUND)

		now := time.Now()
		write(t, db, func(tx *store.Tx) error {
			return tx.CreateSession("cookie-1", store.Session{MemberID: ada.ID, CSRF: "c", ExpiresAt: now.Add(time.Hour).UTC()})
		})
		if s, err := db.SessionByHash(ctx, "cookie-1", now); err != nil || s.MemberID != ada.ID || s.CSRF != "c" {
			t.Errorf("SessionByHash = %+v, %v", s, err)
		}
		_, err = db.SessionByHash(ctx, "cookie-1", now.Add(2*time.Hour))
		wantCode(t, "expired session", err, bullpen.ENOTFOUND)
		write(t, db, func(tx *store.Tx) error { return tx.DeleteSession("cookie-1") })
		_, err = db.SessionByHash(ctx, "cookie-1", now)
		wantCode(t, "deleted session", err, bullpen.ENOTFOUND)
	})
}

// Events come back in sequence order after a given one, with their
// audience as stored.
func TestEventsAfterInOrder(t *testing.T) {
	openEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		write(t, db, func(tx *store.Tx) error {
			for i := range 5 {
				if _, err := tx.Emit(testKind, int64(i), []int64{int64(i), 7}, map[string]int{"n": i}); err != nil {
					return err
				}
			}
			return nil
		})
		evs, err := db.EventsAfter(ctx, 2, 10)
		if err != nil || len(evs) != 3 {
			t.Fatalf("EventsAfter(2) = %d events, %v; want 3", len(evs), err)
		}
		for i, ev := range evs {
			if ev.Seq != int64(i+3) || ev.ChannelID != int64(i+2) || !slices.Equal(ev.Audience, []int64{int64(i + 2), 7}) {
				t.Errorf("event %d = seq %d, channel %d, audience %v", i, ev.Seq, ev.ChannelID, ev.Audience)
			}
		}
		if last, err := db.LastSeq(ctx); err != nil || last != 5 {
			t.Errorf("LastSeq = %d, %v; want 5", last, err)
		}
	})
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := bullpen.ErrorCode(err); got != code {
		t.Errorf("%s: error = %v (code %q), want code %q", what, err, got, code)
	}
}
