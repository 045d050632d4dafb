package bullpen

import "time"

// TelegramUser is one allowlisted Telegram user and the human member it
// acts as.
type TelegramUser struct {
	TelegramUserID int64     `json:"telegram_user_id"`
	MemberID       int64     `json:"member_id"`
	CanApprove     bool      `json:"can_approve"`
	CreatedAt      time.Time `json:"created_at"`
}

// TelegramChat links a Telegram chat to the channel it talks in.
type TelegramChat struct {
	ChatID    int64     `json:"chat_id"`
	ChannelID int64     `json:"channel_id"`
	Type      string    `json:"type"` // private, group, supergroup
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Outbox states. A row goes pending → sending → sent; a permanent
// Telegram error makes it failed. A row found in sending at start-up was
// being sent when the process stopped: Telegram may or may not have it, so
// it becomes uncertain and is not sent again on its own.
const (
	OutboxPending   = "pending"
	OutboxSending   = "sending"
	OutboxSent      = "sent"
	OutboxFailed    = "failed"
	OutboxUncertain = "uncertain"
)

// Outbox methods.
const (
	OutboxSend       = "send"        // sendMessage
	OutboxEditMarkup = "edit_markup" // editMessageReplyMarkup of an approval's message
)

// OutboxItem is one Telegram call waiting to be made, or made.
type OutboxItem struct {
	ID     int64  `json:"id"`
	ChatID int64  `json:"chat_id"`
	Method string `json:"method"`
	Text   string `json:"text,omitempty"` // Telegram HTML
	// Markup is an inline keyboard as JSON, "" for none.
	Markup string `json:"markup,omitempty"`
	// ReplyTo is the Telegram message this one answers, 0 for none.
	ReplyTo int64 `json:"reply_to,omitempty"`
	// MessageID and ApprovalID say what the call carries.
	MessageID     int64      `json:"message_id,omitempty"`
	ApprovalID    int64      `json:"approval_id,omitempty"`
	Part          int        `json:"part,omitempty"`
	State         string     `json:"state"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt time.Time  `json:"next_attempt_at"`
	LastError     string     `json:"last_error,omitempty"`
	TgMessageID   int64      `json:"tg_message_id,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	SentAt        *time.Time `json:"sent_at,omitempty"`
}
