package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/web"
)

// telegramEnv reads the bridge's environment variables.
func telegramEnv() (telegram.Env, string, error) {
	users, err := telegram.ParseUsers(os.Getenv("BULLPEN_TELEGRAM_USERS"), os.Getenv("BULLPEN_TELEGRAM_APPROVERS"))
	if err != nil {
		return telegram.Env{}, "", fmt.Errorf("BULLPEN_TELEGRAM_USERS/APPROVERS: %w", err)
	}
	env := telegram.Env{Token: os.Getenv("BULLPEN_TELEGRAM_TOKEN"), Mode: os.Getenv("BULLPEN_TELEGRAM_MODE"),
		WebhookURL: os.Getenv("BULLPEN_TELEGRAM_WEBHOOK_URL"), WebhookSecret: os.Getenv("BULLPEN_TELEGRAM_WEBHOOK_SECRET"), Users: users}
	return env, os.Getenv("BULLPEN_TELEGRAM_API_URL"), nil
}

// openTelegram starts the Telegram bridge. It runs when a token is set,
// from the environment or the dashboard; a bad token shows in its status,
// not as a start-up failure.
func (m *Main) openTelegram(ctx context.Context) error {
	env, apiURL, err := telegramEnv()
	if err != nil {
		return err
	}
	br, err := telegram.New(telegram.Config{Office: m.Office, Approvals: m.TelegramApprovals, Env: env, ServerURL: apiURL,
		OfficeName: m.OfficeName, Logger: m.Logger, Shared: m.SharedDatabase && m.DatabaseURL != ""})
	if err != nil {
		return err
	}
	if err := br.Start(ctx); err != nil {
		return fmt.Errorf("telegram: %w", err)
	}
	m.Telegram = br
	return nil
}

// telegramService is the bridge for the web server, nil when it is off.
func (m *Main) telegramService() web.Telegram {
	if m.Telegram == nil {
		return nil
	}
	return m.Telegram
}
