package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

func mustWrite(t *testing.T, db *store.DB, fn func(tx *store.Tx) error) {
	t.Helper()
	if _, err := db.Transact(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func TestTelegramSettingsAndCursors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st, err := db.TelegramBot(ctx)
		if err != nil || st.Token != "" || st.Mode != "polling" || st.RelayCursor != nil {
			t.Fatalf("fresh settings = %+v, %v", st, err)
		}
		mustWrite(t, db, func(tx *store.Tx) error { return tx.SetTelegramSettings("1:a", "polling", "", "s", 1, 7) })
		mustWrite(t, db, func(tx *store.Tx) error { return tx.SetTelegramOffset(5_000_000_000) })
		mustWrite(t, db, func(tx *store.Tx) error { return tx.SetTelegramOffset(10) }) // never back
		mustWrite(t, db, func(tx *store.Tx) error { return tx.SetTelegramRelayCursor(9) })
		st, _ = db.TelegramBot(ctx)
		if st.UpdateOffset != 5_000_000_000 || st.RelayCursor == nil || *st.RelayCursor != 9 || st.BotID != 1 {
			t.Errorf("settings = %+v, want offset 5e9 and cursor 9", st)
		}
		// The same bot keeps its cursors; another bot starts afresh.
		mustWrite(t, db, func(tx *store.Tx) error {
			return tx.SetTelegramSettings("1:b", "webhook", "https://x/telegram/webhook", "s", 1, 99)
		})
		if st, _ = db.TelegramBot(ctx); st.UpdateOffset != 5_000_000_000 || *st.RelayCursor != 9 || st.Mode != "webhook" {
			t.Errorf("after a new token of the same bot: %+v", st)
		}
		mustWrite(t, db, func(tx *store.Tx) error { return tx.SetTelegramSettings("2:c", "polling", "", "s", 2, 99) })
		if st, _ = db.TelegramBot(ctx); st.UpdateOffset != 0 || *st.RelayCursor != 99 {
			t.Errorf("after another bot's token: %+v, want offset 0 and cursor 99", st)
		}
	})
}

func TestTelegramUsersChatsMessages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var alice bullpen.Member
		var ch bullpen.Channel
		var msg bullpen.Message
		mustWrite(t, db, func(tx *store.Tx) error {
			var err error
			if alice, err = tx.CreateMember(bullpen.Member{Handle: "alice", DisplayName: "Alice", Kind: bullpen.KindHuman}); err != nil {
				return err
			}
			if ch, err = tx.CreateChannel(bullpen.Channel{Name: "tg-x", Kind: bullpen.ChannelPublic, CreatedBy: alice.ID}); err != nil {
				return err
			}
			msg, err = tx.CreateMessage(bullpen.Message{ChannelID: ch.ID, AuthorID: alice.ID, Body: "hi", Source: bullpen.SourceTelegram})
			return err
		})
		if _, err := db.TelegramUser(ctx, 77); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("TelegramUser(unknown) = %v, want ENOTFOUND", err)
		}
		mustWrite(t, db, func(tx *store.Tx) error {
			_, err := tx.PutTelegramUser(bullpen.TelegramUser{TelegramUserID: 77, MemberID: alice.ID})
			return err
		})
		mustWrite(t, db, func(tx *store.Tx) error {
			_, err := tx.PutTelegramUser(bullpen.TelegramUser{TelegramUserID: 77, MemberID: alice.ID, CanApprove: true})
			return err
		})
		if u, err := db.TelegramUser(ctx, 77); err != nil || !u.CanApprove || u.MemberID != alice.ID {
			t.Errorf("TelegramUser = %+v, %v", u, err)
		}
		group := int64(-1001234567890) // supergroup IDs need 64 bits
		mustWrite(t, db, func(tx *store.Tx) error {
			_, err := tx.PutTelegramChat(bullpen.TelegramChat{ChatID: group, ChannelID: ch.ID, Type: "supergroup", Title: "Team"})
			return err
		})
		if cs, err := db.TelegramChats(ctx, ch.ID); err != nil || len(cs) != 1 || cs[0].ChatID != group {
			t.Errorf("TelegramChats = %+v, %v", cs, err)
		}
		mustWrite(t, db, func(tx *store.Tx) error {
			m := store.TelegramMessage{ChatID: group, TgMessageID: 5, Direction: store.TelegramIn, MessageID: msg.ID}
			if err := tx.RecordTelegramMessage(m); err != nil {
				return err
			}
			return tx.RecordTelegramMessage(m) // twice is harmless
		})
		if m, err := db.TelegramMessage(ctx, group, 5); err != nil || m.MessageID != msg.ID || m.Direction != store.TelegramIn {
			t.Errorf("TelegramMessage = %+v, %v", m, err)
		}
		if ms, _ := db.TelegramMessagesFor(ctx, group, msg.ID, 0); len(ms) != 1 {
			t.Errorf("TelegramMessagesFor = %+v", ms)
		}
		mustWrite(t, db, func(tx *store.Tx) error { return tx.DeleteTelegramChat(group) })
		if _, err := db.TelegramChat(ctx, group); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
			t.Errorf("chat after unlink: %v", err)
		}
	})
}

func TestTelegramOutboxLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		mustWrite(t, db, func(tx *store.Tx) error {
			return tx.EnqueueTelegram(
				bullpen.OutboxItem{ChatID: -100, Text: "a"},
				bullpen.OutboxItem{ChatID: -100, Text: "b", ApprovalID: 3, Markup: `{"inline_keyboard":[]}`},
				bullpen.OutboxItem{ChatID: 7, Text: "c"},
			)
		})
		items, err := db.PendingTelegram(ctx, 10)
		if err != nil || len(items) != 3 || items[0].Text != "a" || items[1].ApprovalID != 3 {
			t.Fatalf("pending = %+v, %v", items, err)
		}
		claim := func(id int64) bool {
			var ok bool
			mustWrite(t, db, func(tx *store.Tx) error { ok, err = tx.ClaimTelegram(id); return err })
			return ok
		}
		if !claim(items[0].ID) || claim(items[0].ID) {
			t.Fatal("a row must be claimable once")
		}
		mustWrite(t, db, func(tx *store.Tx) error { return tx.MarkTelegramSent(items[0].ID, 555) })
		if _, err := db.Transact(ctx, func(tx *store.Tx) error { return tx.MarkTelegramSent(items[0].ID, 556) }); !bullpen.IsCode(err, bullpen.ECONFLICT) {
			t.Errorf("marking a sent row sent again = %v, want ECONFLICT", err)
		}
		if m, err := db.TelegramMessage(ctx, -100, 555); err != nil || m.Direction != store.TelegramOut {
			t.Errorf("the sent message is not mapped: %+v, %v", m, err)
		}
		claim(items[1].ID)
		next := time.Now().Add(time.Minute)
		mustWrite(t, db, func(tx *store.Tx) error { return tx.RetryTelegram(items[1].ID, next, "429 … retry after 60") })
		claim(items[2].ID) // the process stops while sending it
		var n int64
		mustWrite(t, db, func(tx *store.Tx) error { n, err = tx.RecoverTelegram(); return err })
		if n != 1 {
			t.Errorf("RecoverTelegram = %d, want 1", n)
		}
		c, _ := db.TelegramOutboxCounts(ctx)
		if c[bullpen.OutboxSent] != 1 || c[bullpen.OutboxPending] != 1 || c[bullpen.OutboxUncertain] != 1 {
			t.Errorf("counts = %v", c)
		}
		p, _ := db.PendingTelegram(ctx, 10)
		if len(p) != 1 || p[0].Attempts != 1 || !p[0].NextAttemptAt.After(time.Now()) || p[0].LastError == "" {
			t.Errorf("the retried row = %+v", p)
		}
		if _, err := db.Transact(ctx, func(tx *store.Tx) error { _, err := tx.RequeueTelegram(items[0].ID); return err }); !bullpen.IsCode(err, bullpen.ECONFLICT) {
			t.Errorf("requeue of a sent row = %v, want ECONFLICT", err)
		}
		mustWrite(t, db, func(tx *store.Tx) error { _, err := tx.RequeueTelegram(items[2].ID); return err })
		if p, _ := db.PendingTelegram(ctx, 10); len(p) != 2 {
			t.Errorf("after requeue, %d pending, want 2", len(p))
		}
	})
}
