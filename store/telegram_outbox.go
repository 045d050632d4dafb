package store

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
)

type outboxRow struct {
	ID            int64 `gorm:"primaryKey"`
	ChatID        int64
	Method        string
	Text          string
	Markup        string
	ReplyTo       int64
	MessageID     *int64
	ApprovalID    *int64
	Part          int
	State         string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	TgMessageID   int64
	CreatedAt     time.Time
	SentAt        *time.Time
}

func (outboxRow) TableName() string { return "telegram_outbox" }

func (r *outboxRow) toItem() bullpen.OutboxItem {
	return bullpen.OutboxItem{ID: r.ID, ChatID: r.ChatID, Method: r.Method, Text: r.Text, Markup: r.Markup, ReplyTo: r.ReplyTo,
		MessageID: deref(r.MessageID), ApprovalID: deref(r.ApprovalID), Part: r.Part, State: r.State, Attempts: r.Attempts,
		NextAttemptAt: r.NextAttemptAt.UTC(), LastError: r.LastError, TgMessageID: r.TgMessageID,
		CreatedAt: r.CreatedAt.UTC(), SentAt: utcPtr(r.SentAt)}
}

// EnqueueTelegram adds pending calls to the outbox, due now.
func (tx *Tx) EnqueueTelegram(items ...bullpen.OutboxItem) error {
	for _, it := range items {
		row := outboxRow{ChatID: it.ChatID, Method: it.Method, Text: it.Text, Markup: it.Markup, ReplyTo: it.ReplyTo,
			MessageID: ref(it.MessageID), ApprovalID: ref(it.ApprovalID), Part: it.Part, State: bullpen.OutboxPending,
			NextAttemptAt: tx.now, CreatedAt: tx.now}
		if row.Method == "" {
			row.Method = bullpen.OutboxSend
		}
		if err := tx.g.Create(&row).Error; err != nil {
			return fmt.Errorf("store: enqueue telegram: %w", err)
		}
	}
	return nil
}

// PendingTelegram returns up to limit pending outbox items, oldest first.
func (db *DB) PendingTelegram(ctx context.Context, limit int) ([]bullpen.OutboxItem, error) {
	var rows []outboxRow
	err := db.read(ctx).Where("state = ?", bullpen.OutboxPending).Order("id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: pending telegram: %w", err)
	}
	return outboxItems(rows), nil
}

// TelegramOutbox lists outbox items in a state ("" for all), newest first.
func (db *DB) TelegramOutbox(ctx context.Context, state string, limit int) ([]bullpen.OutboxItem, error) {
	q := db.read(ctx).Order("id DESC").Limit(limit)
	if state != "" {
		q = q.Where("state = ?", state)
	}
	var rows []outboxRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list telegram outbox: %w", err)
	}
	return outboxItems(rows), nil
}

func outboxItems(rows []outboxRow) []bullpen.OutboxItem {
	out := make([]bullpen.OutboxItem, len(rows))
	for i := range rows {
		out[i] = rows[i].toItem()
	}
	return out
}

// TelegramOutboxCounts counts outbox items by state.
func (db *DB) TelegramOutboxCounts(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		State string
		N     int64
	}
	err := db.read(ctx).Model(&outboxRow{}).Select("state, COUNT(*) AS n").Group("state").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: count telegram outbox: %w", err)
	}
	out := map[string]int64{bullpen.OutboxPending: 0, bullpen.OutboxSending: 0, bullpen.OutboxSent: 0, bullpen.OutboxFailed: 0, bullpen.OutboxUncertain: 0}
	for _, r := range rows {
		out[r.State] = r.N
	}
	return out, nil
}

// ClaimTelegram moves a pending item to sending and counts the attempt. It
// reports false when the item was not pending.
func (tx *Tx) ClaimTelegram(id int64) (bool, error) {
	res := tx.g.Exec("UPDATE telegram_outbox SET state = ?, attempts = attempts + 1 WHERE id = ? AND state = ?",
		bullpen.OutboxSending, id, bullpen.OutboxPending)
	if res.Error != nil {
		return false, fmt.Errorf("store: claim telegram %d: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// MarkTelegramSent records that Telegram accepted the call, with the
// message ID it gave, and maps that message to what it carries, in one
// step.
func (tx *Tx) MarkTelegramSent(id, tgMessageID int64) error {
	var row outboxRow
	if err := tx.g.First(&row, id).Error; err != nil {
		return notFound(err, "outbox item %d not found", id)
	}
	res := tx.g.Model(&outboxRow{}).Where("id = ? AND state = ?", id, bullpen.OutboxSending).
		Updates(map[string]any{"state": bullpen.OutboxSent, "tg_message_id": tgMessageID, "sent_at": tx.now, "last_error": ""})
	if res.Error != nil {
		return fmt.Errorf("store: mark telegram %d sent: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ECONFLICT, "outbox item %d is %s, not sending", id, row.State)
	}
	if row.Method != bullpen.OutboxSend || tgMessageID == 0 {
		return nil
	}
	return tx.RecordTelegramMessage(TelegramMessage{ChatID: row.ChatID, TgMessageID: tgMessageID, Direction: TelegramOut,
		MessageID: deref(row.MessageID), ApprovalID: deref(row.ApprovalID)})
}

// RetryTelegram puts a claimed item back to pending, due at next.
func (tx *Tx) RetryTelegram(id int64, next time.Time, lastError string) error {
	err := tx.g.Model(&outboxRow{}).Where("id = ?", id).
		Updates(map[string]any{"state": bullpen.OutboxPending, "next_attempt_at": next.UTC(), "last_error": clipString(lastError, 500)}).Error
	if err != nil {
		return fmt.Errorf("store: retry telegram %d: %w", id, err)
	}
	return nil
}

// SetTelegramState ends an item as failed or uncertain, with the reason.
func (tx *Tx) SetTelegramState(id int64, state, lastError string) error {
	err := tx.g.Model(&outboxRow{}).Where("id = ?", id).
		Updates(map[string]any{"state": state, "last_error": clipString(lastError, 500)}).Error
	if err != nil {
		return fmt.Errorf("store: telegram %d %s: %w", id, state, err)
	}
	return nil
}

// RecoverTelegram marks the items left in sending by a stopped process as
// uncertain and returns how many there were. Call it before delivering.
func (tx *Tx) RecoverTelegram() (int64, error) {
	res := tx.g.Model(&outboxRow{}).Where("state = ?", bullpen.OutboxSending).
		Updates(map[string]any{"state": bullpen.OutboxUncertain,
			"last_error": "the process stopped while this was being sent; Telegram may or may not have it"})
	if res.Error != nil {
		return 0, fmt.Errorf("store: recover telegram outbox: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// RequeueTelegram sends a failed or uncertain item again, on a human's
// say-so.
func (tx *Tx) RequeueTelegram(id int64) (bullpen.OutboxItem, error) {
	res := tx.g.Model(&outboxRow{}).Where("id = ? AND state IN ?", id, []string{bullpen.OutboxFailed, bullpen.OutboxUncertain}).
		Updates(map[string]any{"state": bullpen.OutboxPending, "next_attempt_at": tx.now})
	if res.Error != nil {
		return bullpen.OutboxItem{}, fmt.Errorf("store: requeue telegram %d: %w", id, res.Error)
	}
	var row outboxRow
	if err := tx.g.First(&row, id).Error; err != nil {
		return bullpen.OutboxItem{}, notFound(err, "outbox item %d not found", id)
	}
	if res.RowsAffected == 0 {
		return row.toItem(), bullpen.Errorf(bullpen.ECONFLICT, "outbox item %d is %s; only failed or uncertain items can be sent again", id, row.State)
	}
	return row.toItem(), nil
}

// clipString shortens s to at most n bytes without splitting a character.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
