package settings

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// envProviders reads the provider environment variables (see SeedFromEnv)
// in the order their default is picked: anthropic, then openai.
func envProviders(getenv func(string) string) []bullpen.Provider {
	var out []bullpen.Provider
	key, tok := getenv("BULLPEN_ANTHROPIC_API_KEY"), getenv("BULLPEN_ANTHROPIC_OAUTH_TOKEN")
	if key != "" || tok != "" {
		out = append(out, bullpen.Provider{Name: bullpen.ProviderAnthropic, Kind: bullpen.ProviderAnthropic, APIKey: key, OAuthToken: tok,
			BaseURL: getenv("BULLPEN_ANTHROPIC_BASE_URL"), Model: getenv("BULLPEN_ANTHROPIC_MODEL"), Source: bullpen.ProviderFromEnv})
	}
	if key, base := getenv("BULLPEN_OPENAI_API_KEY"), getenv("BULLPEN_OPENAI_BASE_URL"); key != "" || base != "" {
		out = append(out, bullpen.Provider{Name: bullpen.ProviderOpenAI, Kind: bullpen.ProviderOpenAI, APIKey: key, BaseURL: base,
			Model: getenv("BULLPEN_OPENAI_MODEL"), Source: bullpen.ProviderFromEnv})
	}
	return out
}

// SeedFromEnv writes the providers the environment configures into the
// settings, at every start:
//
//	BULLPEN_ANTHROPIC_API_KEY or BULLPEN_ANTHROPIC_OAUTH_TOKEN,
//	  BULLPEN_ANTHROPIC_BASE_URL, BULLPEN_ANTHROPIC_MODEL  → provider "anthropic"
//	BULLPEN_OPENAI_API_KEY and/or BULLPEN_OPENAI_BASE_URL,
//	  BULLPEN_OPENAI_MODEL                                 → provider "openai"
//	BULLPEN_PROVIDER                                       → the default, if none is set
//
// Precedence: a provider of that name that does not exist yet is created;
// one the environment created and nobody edited since follows the
// environment (change a variable, restart, it applies); one an admin
// edited in Settings keeps the Settings values and the environment is
// ignored for it (logged). The default set in Settings always wins over
// BULLPEN_PROVIDER; without either, the first provider seeded (anthropic,
// then openai) becomes the default.
func (s *Service) SeedFromEnv(ctx context.Context, getenv func(string) string) error {
	env := envProviders(getenv)
	for _, p := range env {
		if err := validate(p); err != nil {
			return fmt.Errorf("settings: environment for provider %q: %w", p.Name, err)
		}
	}
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		for _, p := range env {
			if err := s.seedOne(tx, p); err != nil {
				return err
			}
		}
		return seedDefault(tx, getenv("BULLPEN_PROVIDER"), env)
	})
	return err
}

func (s *Service) seedOne(tx *store.Tx, p bullpen.Provider) error {
	cur, err := tx.ProviderByNameTx(p.Name)
	switch {
	case bullpen.IsCode(err, bullpen.ENOTFOUND):
		_, err = tx.CreateProvider(p)
		return err
	case err != nil:
		return err
	case cur.Source != bullpen.ProviderFromEnv:
		s.log.Info("provider edited in Settings: its environment variables are ignored", "provider", p.Name)
		return nil
	case cur.Kind == p.Kind && cur.BaseURL == p.BaseURL && cur.APIKey == p.APIKey && cur.OAuthToken == p.OAuthToken && cur.Model == p.Model:
		return nil
	}
	p.ID, p.IsDefault = cur.ID, cur.IsDefault
	_, err = tx.UpdateProvider(p)
	return err
}

// seedDefault sets the default when the office has none: the provider
// named by BULLPEN_PROVIDER, else the first one the environment seeded.
func seedDefault(tx *store.Tx, want string, env []bullpen.Provider) error {
	if _, err := tx.ProviderByNameTx(""); !bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return err
	}
	if want == "" && len(env) > 0 {
		want = env[0].Name
	}
	if want == "" {
		return nil
	}
	p, err := tx.ProviderByNameTx(want)
	if err != nil {
		return fmt.Errorf("settings: BULLPEN_PROVIDER=%s: %w", want, err)
	}
	p.IsDefault = true
	_, err = tx.UpdateProvider(p)
	return err
}
