package bullpen

// TelegramWebhookPath is where the web server receives Telegram webhook
// updates.
const TelegramWebhookPath = "/telegram/webhook"

// TelegramStatus is what the dashboard and /status show of the bridge.
type TelegramStatus struct {
	State        string           `json:"state"`
	Error        string           `json:"error,omitempty"`
	Mode         string           `json:"mode"`
	TokenHint    string           `json:"token_hint,omitempty"`
	TokenFromEnv bool             `json:"token_from_env"`
	BotUsername  string           `json:"bot_username,omitempty"`
	WebhookURL   string           `json:"webhook_url,omitempty"`
	WebhookPath  string           `json:"webhook_path"`
	UpdateOffset int64            `json:"update_offset"`
	RelayCursor  int64            `json:"relay_cursor"`
	Outbox       map[string]int64 `json:"outbox"`
}

// TelegramSettings changes the bridge's configuration; nil fields stay as
// they are, and an empty token turns the bridge off.
type TelegramSettings struct {
	Token      *string `json:"token"`
	Mode       *string `json:"mode"`
	WebhookURL *string `json:"webhook_url"`
}

// TelegramUserView is an allowlist entry with its member's handle.
type TelegramUserView struct {
	TelegramUser
	Handle      string `json:"handle"`
	DisplayName string `json:"display_name"`
}

// TelegramUserInput adds or changes an allowlist entry; the member is
// named by handle or ID and must be a human.
type TelegramUserInput struct {
	TelegramUserID int64  `json:"telegram_user_id"`
	Handle         string `json:"handle"`
	MemberID       int64  `json:"member_id"`
	CanApprove     bool   `json:"can_approve"`
}

// TelegramChatView is a linked chat with its channel's name.
type TelegramChatView struct {
	TelegramChat
	ChannelName string `json:"channel_name"`
	ChannelKind string `json:"channel_kind"`
}

// TelegramLinkInput names what a chat is linked to: a channel by ID or
// name, or the DM between the human As (default: the caller) and the
// agent DMWith.
type TelegramLinkInput struct {
	ChannelID int64  `json:"channel_id"`
	Channel   string `json:"channel"`
	DMWith    string `json:"dm_with"`
	As        string `json:"as"`
}
