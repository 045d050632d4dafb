package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm/clause"
)

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
