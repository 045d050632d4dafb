package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/settings"
	"github.com/bullpen-hq/bullpen/web"
)

// openSettings opens the provider settings and seeds them from the
// environment (settings.SeedFromEnv says the precedence).
func (m *Main) openSettings(ctx context.Context) error {
	svc, err := settings.New(settings.Config{DB: m.DB, Logger: m.Logger, Secrets: m.Secrets})
	if err != nil {
		return err
	}
	if err := svc.SeedFromEnv(ctx, os.Getenv); err != nil {
		return err
	}
	if err := svc.LearnAll(ctx); err != nil {
		return err
	}
	m.Settings = svc
	return nil
}

// settingsService returns the settings for the web server (nil-safe).
func (m *Main) settingsService() web.Settings {
	if m.Settings == nil {
		return nil
	}
	return m.Settings
}

// adminToken is `bullpen admin-token`: it mints a new login token for an
// admin on this server's database (the data directory or --database-url)
// and prints it once. The server may be running meanwhile.
func (m *Main) adminToken(ctx context.Context, handle string) error {
	if err := m.OpenStore(ctx); err != nil {
		return err
	}
	defer m.DB.Close()
	off, err := office.New(ctx, m.DB, office.Config{})
	if err != nil {
		return err
	}
	secret, admin, err := off.MintAdminToken(ctx, handle)
	if err != nil {
		return fmt.Errorf("admin-token: %w", err)
	}
	fmt.Fprintf(m.Stdout, "New login token for @%s (shown only once; revoke old ones in Settings → Tokens):\n\n    %s\n\n", admin.Handle, secret)
	return nil
}
