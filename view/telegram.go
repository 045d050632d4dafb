package view

import "github.com/bullpen-hq/bullpen"

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

// TelegramUserView is an allowlist entry with its member's handle.
type TelegramUserView struct {
	bullpen.TelegramUser
	Handle      string `json:"handle"`
	DisplayName string `json:"display_name"`
}

// TelegramChatView is a linked chat with its channel's name.
type TelegramChatView struct {
	bullpen.TelegramChat
	ChannelName string `json:"channel_name"`
	ChannelKind string `json:"channel_kind"`
}
