package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// An update's offset moves once: a second delivery's transaction is
// refused, and rolls back with the effects it wrote. The relay cursor
// moves only from where its relay left it.
func TestTelegramOffsetAndRelayCursorRefuseRepeats(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		ctx := context.Background()
		db, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		mustWrite(t, db, func(tx *store.Tx) error { return tx.AdvanceTelegramOffset(101) })
		for _, id := range []int64{101, 100} {
			_, err := db.Transact(ctx, func(tx *store.Tx) error {
				if err := tx.EnqueueTelegram(bullpen.OutboxItem{ChatID: 1, Text: "effect"}); err != nil {
					return err
				}
				return tx.AdvanceTelegramOffset(id)
			})
			if !errors.Is(err, store.ErrTelegramUpdateHandled) {
				t.Errorf("AdvanceTelegramOffset(%d) after 101 = %v, want ErrTelegramUpdateHandled", id, err)
			}
		}
		if c, _ := db.TelegramOutboxCounts(ctx); c[bullpen.OutboxPending] != 0 {
			t.Errorf("a refused update left %d outbox rows, want 0", c[bullpen.OutboxPending])
		}
		mustWrite(t, db, func(tx *store.Tx) error { return tx.AdvanceTelegramOffset(105) }) // gaps are fine
		if st, _ := db.TelegramBot(ctx); st.UpdateOffset != 106 {
			t.Errorf("offset = %d, want 106", st.UpdateOffset)
		}

		mustWrite(t, db, func(tx *store.Tx) error { return tx.SetTelegramRelayCursor(10) })
		mustWrite(t, db, func(tx *store.Tx) error { return tx.MoveTelegramRelayCursor(10, 20) })
		_, err = db.Transact(ctx, func(tx *store.Tx) error { return tx.MoveTelegramRelayCursor(10, 30) })
		if !errors.Is(err, store.ErrTelegramRelayMoved) {
			t.Errorf("MoveTelegramRelayCursor(10, 30) at 20 = %v, want ErrTelegramRelayMoved", err)
		}
		if st, _ := db.TelegramBot(ctx); *st.RelayCursor != 20 {
			t.Errorf("relay cursor = %d, want 20", *st.RelayCursor)
		}
	})
}
