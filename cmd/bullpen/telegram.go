package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/web"
)

// openTelegram starts the Telegram bridge. It runs when a token is set,
// from the environment or the dashboard; a bad token shows in its status,
// not as a start-up failure.
func (m *Main) openTelegram(ctx context.Context) error {
	env, apiURL, err := telegram.EnvFrom(os.Getenv)
	if err != nil {
		return err
	}
	m.Secrets.Add(env.Token, env.WebhookSecret)
	br, err := telegram.New(telegram.Config{Office: m.Office, DB: m.DB, Approvals: m.TelegramApprovals, Env: env, ServerURL: apiURL,
		OfficeName: m.OfficeName, Logger: m.Logger, Secrets: m.Secrets, Shared: m.Shared()})
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
