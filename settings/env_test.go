package settings_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The environment seeds providers at the first start, keeps the rows it
// seeded in step at later starts, and never overwrites what an admin
// edited in Settings, nor the default chosen there.
func TestSeedFromEnvPrecedence(t *testing.T) {
	cfg := storetest.Config(t, store.SQLite)
	s := open(t, cfg)
	ctx := context.Background()
	env := map[string]string{"BULLPEN_OPENAI_API_KEY": "sk-one", "BULLPEN_OPENAI_MODEL": "m1",
		"BULLPEN_ANTHROPIC_OAUTH_TOKEN": "oat-abcdefgh1", "BULLPEN_PROVIDER": "openai"}
	if err := s.SeedFromEnv(ctx, getenv(env)); err != nil {
		t.Fatal(err)
	}
	byName := func() map[string]bullpen.Provider {
		list, err := s.Providers(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bullpen.Provider{}
		for _, p := range list {
			out[p.Name] = p
		}
		return out
	}
	got := byName()
	if o := got["openai"]; o.APIKey != "sk-one" || o.Model != "m1" || !o.IsDefault || o.Source != bullpen.ProviderFromEnv {
		t.Errorf("seeded openai = %+v", o)
	}
	if a := got["anthropic"]; a.OAuthToken != "oat-abcdefgh1" || a.IsDefault {
		t.Errorf("seeded anthropic = %+v", a)
	}

	// A changed variable applies at the next start to a row nobody edited.
	env["BULLPEN_OPENAI_API_KEY"] = "sk-two"
	if err := s.SeedFromEnv(ctx, getenv(env)); err != nil {
		t.Fatal(err)
	}
	if o := byName()["openai"]; o.APIKey != "sk-two" {
		t.Errorf("after an env change openai's key = %q, want sk-two", o.APIKey)
	}

	// Choosing the default alone is not an edit: the environment still
	// keeps that provider in step.
	o := byName()["openai"]
	if _, err := s.Update(ctx, admin, o.ID, bullpen.ProviderInput{IsDefault: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if o := byName()["openai"]; o.Source != bullpen.ProviderFromEnv {
		t.Errorf("making openai the default turned it into a Settings row")
	}

	// An admin's edit wins from then on, and so does their default.
	a := byName()["anthropic"]
	if _, err := s.Update(ctx, admin, a.ID, bullpen.ProviderInput{Model: ptr("claude-edited"), IsDefault: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	env["BULLPEN_ANTHROPIC_OAUTH_TOKEN"] = "oat-from-env-2"
	if err := s.SeedFromEnv(ctx, getenv(env)); err != nil {
		t.Fatal(err)
	}
	got = byName()
	if a := got["anthropic"]; a.OAuthToken != "oat-abcdefgh1" || a.Model != "claude-edited" || !a.IsDefault || a.Source != bullpen.ProviderFromSettings {
		t.Errorf("after an admin's edit the environment changed anthropic: %+v", a)
	}
	if got["openai"].IsDefault {
		t.Errorf("BULLPEN_PROVIDER took the default back from the one chosen in Settings")
	}

	// A bad variable is a clear error and changes nothing.
	env["BULLPEN_OPENAI_BASE_URL"] = "not a url"
	if err := s.SeedFromEnv(ctx, getenv(env)); !bullpen.IsCode(err, bullpen.EINVALID) {
		t.Errorf("a bad BULLPEN_OPENAI_BASE_URL: %v, want EINVALID", err)
	}
	if o := byName()["openai"]; o.BaseURL != "" {
		t.Errorf("a refused environment stored base_url %q", o.BaseURL)
	}
}
