package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm/clause"
)

// Directions of a TelegramMessage.
const (
	TelegramIn  = "in"
	TelegramOut = "out"
)

// TelegramMessage maps a Telegram message to the office message (or the
// approval) it carries.
type TelegramMessage struct {
	ChatID      int64
	TgMessageID int64
	Direction   string
	MessageID   int64
	ApprovalID  int64
}

type telegramMessageRow struct {
	ChatID      int64 `gorm:"primaryKey;autoIncrement:false"`
	TgMessageID int64 `gorm:"primaryKey;autoIncrement:false"`
	Direction   string
	MessageID   *int64
	ApprovalID  *int64
	CreatedAt   time.Time
}

func (telegramMessageRow) TableName() string { return "telegram_messages" }

func (r *telegramMessageRow) toMessage() TelegramMessage {
	return TelegramMessage{ChatID: r.ChatID, TgMessageID: r.TgMessageID, Direction: r.Direction,
		MessageID: deref(r.MessageID), ApprovalID: deref(r.ApprovalID)}
}

// RecordTelegramMessage stores a message mapping; recording one twice is
// harmless.
func (tx *Tx) RecordTelegramMessage(m TelegramMessage) error {
	row := telegramMessageRow{ChatID: m.ChatID, TgMessageID: m.TgMessageID, Direction: m.Direction,
		MessageID: ref(m.MessageID), ApprovalID: ref(m.ApprovalID), CreatedAt: tx.now}
	if err := tx.g.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return fmt.Errorf("store: record telegram message: %w", err)
	}
	return nil
}

// TelegramMessage returns the mapping of a Telegram message; ENOTFOUND when
// the bridge does not know it.
func (db *DB) TelegramMessage(ctx context.Context, chatID, tgMessageID int64) (TelegramMessage, error) {
	var row telegramMessageRow
	if err := db.read(ctx).First(&row, "chat_id = ? AND tg_message_id = ?", chatID, tgMessageID).Error; err != nil {
		return TelegramMessage{}, notFound(err, "Telegram message %d/%d not known", chatID, tgMessageID)
	}
	return row.toMessage(), nil
}

// TelegramMessagesFor returns the Telegram messages of one chat that carry
// an office message (messageID > 0) or an approval (approvalID > 0),
// oldest first.
func (db *DB) TelegramMessagesFor(ctx context.Context, chatID, messageID, approvalID int64) ([]TelegramMessage, error) {
	q := db.read(ctx).Where("chat_id = ?", chatID).Order("tg_message_id")
	switch {
	case messageID > 0:
		q = q.Where("message_id = ?", messageID)
	case approvalID > 0:
		q = q.Where("approval_id = ?", approvalID)
	default:
		return nil, bullpen.Errorf(bullpen.EINVALID, "a message or an approval is required")
	}
	var rows []telegramMessageRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: telegram messages: %w", err)
	}
	out := make([]TelegramMessage, len(rows))
	for i := range rows {
		out[i] = rows[i].toMessage()
	}
	return out, nil
}
