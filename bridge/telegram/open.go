package telegram

import (
	"context"
	"fmt"
)

// Open makes the bridge with the settings of the environment (EnvFrom
// reads them through getenv, filling cfg.Env and cfg.ServerURL; their
// token and webhook secret join cfg.Secrets at once) and starts it. It
// runs when a token is set, from the environment or the dashboard; a bad
// token shows in its status, not as a failure here.
func Open(ctx context.Context, cfg Config, getenv func(string) string) (*Bridge, error) {
	env, apiURL, err := EnvFrom(getenv)
	if err != nil {
		return nil, err
	}
	cfg.Secrets.Add(env.Token, env.WebhookSecret)
	cfg.Env, cfg.ServerURL = env, apiURL
	br, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := br.Start(ctx); err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return br, nil
}

// OutboxCounts counts the outbox's items per state (for the metrics).
func (b *Bridge) OutboxCounts(ctx context.Context) (map[string]int64, error) {
	return b.db.TelegramOutboxCounts(ctx)
}
