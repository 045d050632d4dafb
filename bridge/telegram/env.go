package telegram

import "fmt"

// EnvFrom reads the bridge's environment variables through getenv
// (os.Getenv in the server): BULLPEN_TELEGRAM_TOKEN, _MODE, _WEBHOOK_URL,
// _WEBHOOK_SECRET, _USERS and _APPROVERS make the Env; serverURL is
// BULLPEN_TELEGRAM_API_URL, the Bot API to talk to (empty: Telegram's).
// A malformed allowlist is refused rather than half applied.
func EnvFrom(getenv func(string) string) (env Env, serverURL string, err error) {
	users, err := ParseUsers(getenv("BULLPEN_TELEGRAM_USERS"), getenv("BULLPEN_TELEGRAM_APPROVERS"))
	if err != nil {
		return Env{}, "", fmt.Errorf("BULLPEN_TELEGRAM_USERS/APPROVERS: %w", err)
	}
	env = Env{Token: getenv("BULLPEN_TELEGRAM_TOKEN"), Mode: getenv("BULLPEN_TELEGRAM_MODE"),
		WebhookURL: getenv("BULLPEN_TELEGRAM_WEBHOOK_URL"), WebhookSecret: getenv("BULLPEN_TELEGRAM_WEBHOOK_SECRET"), Users: users}
	return env, getenv("BULLPEN_TELEGRAM_API_URL"), nil
}
