package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TelegramBot is the Telegram bridge's one settings row: the bot token (a
// secret: callers show only a hint of it), the mode, and the bridge's two
// cursors.
type TelegramBot struct {
	Token         string
	Mode          string // "polling" or "webhook"
	WebhookURL    string
	WebhookSecret string
	BotID         int64
	BotUsername   string
	// UpdateOffset is the next Telegram update_id to process; every update
	// below it has been handled and its effects committed.
	UpdateOffset int64
	// RelayCursor is the office event sequence relayed so far; nil before
	// the bridge first ran.
	RelayCursor *int64
	UpdatedAt   *time.Time
}

type telegramBotRow struct {
	ID            int `gorm:"primaryKey;autoIncrement:false"`
	Token         string
	Mode          string
	WebhookURL    string
	WebhookSecret string
	BotID         int64
	BotUsername   string
	UpdateOffset  int64
	RelayCursor   *int64
	UpdatedAt     *time.Time
}

func (telegramBotRow) TableName() string { return "telegram_bot" }

// TelegramBot returns the bridge's settings row.
func (db *DB) TelegramBot(ctx context.Context) (TelegramBot, error) {
	var r telegramBotRow
	if err := db.read(ctx).First(&r, 1).Error; err != nil {
		return TelegramBot{}, fmt.Errorf("store: telegram settings: %w", err)
	}
	return TelegramBot{Token: r.Token, Mode: r.Mode, WebhookURL: r.WebhookURL, WebhookSecret: r.WebhookSecret,
		BotID: r.BotID, BotUsername: r.BotUsername, UpdateOffset: r.UpdateOffset, RelayCursor: r.RelayCursor,
		UpdatedAt: utcPtr(r.UpdatedAt)}, nil
}

// SetTelegramSettings saves the token, mode and webhook. A token for
// another bot (its numeric prefix differs) restarts both cursors: the new
// bot has its own updates, and the office history is not replayed to it.
func (tx *Tx) SetTelegramSettings(token, mode, webhookURL, webhookSecret string, botID int64, relayFrom int64) error {
	var cur telegramBotRow
	if err := tx.g.First(&cur, 1).Error; err != nil {
		return fmt.Errorf("store: telegram settings: %w", err)
	}
	up := map[string]any{"token": token, "mode": mode, "webhook_url": webhookURL, "webhook_secret": webhookSecret,
		"updated_at": tx.now}
	if botID != cur.BotID {
		up["bot_id"], up["bot_username"], up["update_offset"], up["relay_cursor"] = botID, "", 0, relayFrom
	}
	if err := tx.g.Model(&telegramBotRow{}).Where("id = 1").Updates(up).Error; err != nil {
		return fmt.Errorf("store: save telegram settings: %w", err)
	}
	return nil
}

// SetTelegramUsername records the bot's @username as getMe reported it.
func (tx *Tx) SetTelegramUsername(username string) error {
	if err := tx.g.Model(&telegramBotRow{}).Where("id = 1").Update("bot_username", username).Error; err != nil {
		return fmt.Errorf("store: telegram username: %w", err)
	}
	return nil
}

// SetTelegramOffset moves the update offset forward (never back).
func (tx *Tx) SetTelegramOffset(offset int64) error {
	err := tx.g.Model(&telegramBotRow{}).Where("id = 1 AND update_offset < ?", offset).Update("update_offset", offset).Error
	if err != nil {
		return fmt.Errorf("store: telegram offset: %w", err)
	}
	return nil
}

// ErrTelegramUpdateHandled is AdvanceTelegramOffset's answer for an
// update whose effects a transaction (of this process or another replica)
// already committed: the caller's transaction must roll back.
var ErrTelegramUpdateHandled = errors.New("store: telegram update already handled")

// ErrTelegramRelayMoved is MoveTelegramRelayCursor's answer when the
// cursor is not where the caller left it: another relay ran meanwhile.
var ErrTelegramRelayMoved = errors.New("store: telegram relay cursor moved elsewhere")

// AdvanceTelegramOffset moves the update offset past updateID, in the
// transaction that commits the update's effects. It returns
// ErrTelegramUpdateHandled when the offset is already past it: writers are
// serialized (the events lock on PostgreSQL), so of two deliveries of one
// update, to one process or to two replicas, only the first commits.
func (tx *Tx) AdvanceTelegramOffset(updateID int64) error {
	res := tx.g.Model(&telegramBotRow{}).Where("id = 1 AND update_offset <= ?", updateID).Update("update_offset", updateID+1)
	if res.Error != nil {
		return fmt.Errorf("store: telegram offset: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrTelegramUpdateHandled
	}
	return nil
}

// MoveTelegramRelayCursor moves the relay cursor from from to to, in the
// transaction that queues the events between them. It returns
// ErrTelegramRelayMoved when the cursor is not at from, so that two relays
// can never queue the same events.
func (tx *Tx) MoveTelegramRelayCursor(from, to int64) error {
	res := tx.g.Model(&telegramBotRow{}).Where("id = 1 AND relay_cursor = ?", from).Update("relay_cursor", to)
	if res.Error != nil {
		return fmt.Errorf("store: telegram relay cursor: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrTelegramRelayMoved
	}
	return nil
}

// SetTelegramRelayCursor records the last office event sequence relayed.
func (tx *Tx) SetTelegramRelayCursor(seq int64) error {
	if err := tx.g.Model(&telegramBotRow{}).Where("id = 1").Update("relay_cursor", seq).Error; err != nil {
		return fmt.Errorf("store: telegram relay cursor: %w", err)
	}
	return nil
}
