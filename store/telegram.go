package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm/clause"
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

type telegramUserRow struct {
	TelegramUserID int64 `gorm:"primaryKey;autoIncrement:false"`
	MemberID       int64
	CanApprove     bool
	CreatedAt      time.Time
}

func (telegramUserRow) TableName() string { return "telegram_users" }

func (r *telegramUserRow) toUser() bullpen.TelegramUser {
	return bullpen.TelegramUser{TelegramUserID: r.TelegramUserID, MemberID: r.MemberID, CanApprove: r.CanApprove, CreatedAt: r.CreatedAt.UTC()}
}

// PutTelegramUser adds a user to the allowlist or changes its entry.
func (tx *Tx) PutTelegramUser(u bullpen.TelegramUser) (bullpen.TelegramUser, error) {
	row := telegramUserRow{TelegramUserID: u.TelegramUserID, MemberID: u.MemberID, CanApprove: u.CanApprove, CreatedAt: tx.now}
	err := tx.g.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "telegram_user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"member_id", "can_approve"})}).Create(&row).Error
	if err != nil {
		return bullpen.TelegramUser{}, fmt.Errorf("store: put telegram user: %w", err)
	}
	if err := tx.g.First(&row, "telegram_user_id = ?", u.TelegramUserID).Error; err != nil {
		return bullpen.TelegramUser{}, fmt.Errorf("store: read telegram user: %w", err)
	}
	return row.toUser(), nil
}

// DeleteTelegramUser removes a user from the allowlist.
func (tx *Tx) DeleteTelegramUser(telegramUserID int64) error {
	res := tx.g.Where("telegram_user_id = ?", telegramUserID).Delete(&telegramUserRow{})
	if res.Error != nil {
		return fmt.Errorf("store: delete telegram user: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "Telegram user %d is not on the allowlist", telegramUserID)
	}
	return nil
}

// TelegramUser returns an allowlisted user; ENOTFOUND for anyone else.
func (db *DB) TelegramUser(ctx context.Context, telegramUserID int64) (bullpen.TelegramUser, error) {
	var row telegramUserRow
	if err := db.read(ctx).First(&row, "telegram_user_id = ?", telegramUserID).Error; err != nil {
		return bullpen.TelegramUser{}, notFound(err, "Telegram user %d is not on the allowlist", telegramUserID)
	}
	return row.toUser(), nil
}

// TelegramUsers lists the allowlist by Telegram user ID.
func (db *DB) TelegramUsers(ctx context.Context) ([]bullpen.TelegramUser, error) {
	var rows []telegramUserRow
	if err := db.read(ctx).Order("telegram_user_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list telegram users: %w", err)
	}
	out := make([]bullpen.TelegramUser, len(rows))
	for i := range rows {
		out[i] = rows[i].toUser()
	}
	return out, nil
}

type telegramChatRow struct {
	ChatID    int64 `gorm:"primaryKey;autoIncrement:false"`
	ChannelID int64
	Type      string
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (telegramChatRow) TableName() string { return "telegram_chats" }

func (r *telegramChatRow) toChat() bullpen.TelegramChat {
	return bullpen.TelegramChat{ChatID: r.ChatID, ChannelID: r.ChannelID, Type: r.Type, Title: r.Title,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// PutTelegramChat links a chat to a channel, replacing an earlier link.
func (tx *Tx) PutTelegramChat(c bullpen.TelegramChat) (bullpen.TelegramChat, error) {
	row := telegramChatRow{ChatID: c.ChatID, ChannelID: c.ChannelID, Type: c.Type, Title: c.Title, CreatedAt: tx.now, UpdatedAt: tx.now}
	err := tx.g.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chat_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"channel_id", "type", "title", "updated_at"})}).Create(&row).Error
	if err != nil {
		return bullpen.TelegramChat{}, fmt.Errorf("store: link telegram chat: %w", err)
	}
	if err := tx.g.First(&row, "chat_id = ?", c.ChatID).Error; err != nil {
		return bullpen.TelegramChat{}, fmt.Errorf("store: read telegram chat: %w", err)
	}
	return row.toChat(), nil
}

// DeleteTelegramChat unlinks a chat.
func (tx *Tx) DeleteTelegramChat(chatID int64) error {
	res := tx.g.Where("chat_id = ?", chatID).Delete(&telegramChatRow{})
	if res.Error != nil {
		return fmt.Errorf("store: unlink telegram chat: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "Telegram chat %d is not linked", chatID)
	}
	return nil
}

// TelegramChat returns a linked chat; ENOTFOUND when it is not linked.
func (db *DB) TelegramChat(ctx context.Context, chatID int64) (bullpen.TelegramChat, error) {
	var row telegramChatRow
	if err := db.read(ctx).First(&row, "chat_id = ?", chatID).Error; err != nil {
		return bullpen.TelegramChat{}, notFound(err, "Telegram chat %d is not linked", chatID)
	}
	return row.toChat(), nil
}

// TelegramChats lists linked chats; channelID > 0 keeps those of one
// channel.
func (db *DB) TelegramChats(ctx context.Context, channelID int64) ([]bullpen.TelegramChat, error) {
	q := db.read(ctx).Order("chat_id")
	if channelID > 0 {
		q = q.Where("channel_id = ?", channelID)
	}
	var rows []telegramChatRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list telegram chats: %w", err)
	}
	out := make([]bullpen.TelegramChat, len(rows))
	for i := range rows {
		out[i] = rows[i].toChat()
	}
	return out, nil
}

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
