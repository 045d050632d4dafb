package bullpen

// TelegramWebhookPath is where the web server receives Telegram webhook
// updates.
const TelegramWebhookPath = "/telegram/webhook"

// TelegramSettings changes the bridge's configuration; nil fields stay as
// they are, and an empty token turns the bridge off.
type TelegramSettings struct {
	Token      *string `json:"token"`
	Mode       *string `json:"mode"`
	WebhookURL *string `json:"webhook_url"`
}

// TelegramUserInput adds or changes an allowlist entry; the member is
// named by handle or ID and must be a human.
type TelegramUserInput struct {
	TelegramUserID int64  `json:"telegram_user_id"`
	Handle         string `json:"handle"`
	MemberID       int64  `json:"member_id"`
	CanApprove     bool   `json:"can_approve"`
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
