// Package settings keeps the office's model providers: the endpoints,
// their secrets (stored, only ever shown as hints) and the office default.
// Admins edit them at run time (the Settings page, /api/v1/settings);
// agents ask for a provider at the start of every turn (Provider), so a
// change applies from the next turn without a restart. Built clients are
// cached per provider and rebuilt when its row's version moves, which
// also covers other processes writing the same database.
package settings

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/internal/redact"
	"github.com/bullpen-hq/bullpen/store"
)

// Config configures the service.
type Config struct {
	DB *store.DB // required
	// HTTPClient carries model calls and connection tests (nil: the
	// adapters' default client).
	HTTPClient *http.Client
	// TestTimeout bounds one "test connection" (default 20 s).
	TestTimeout time.Duration
	Now         func() time.Time
	Logger      *slog.Logger
	// Secrets learns every provider's key, OAuth token and base URL's
	// user information as soon as the service reads them (nil: a set of
	// its own), so every view redacts them; Test's results are redacted
	// with it.
	Secrets *redact.Secrets
}

// Service is the provider settings. It is safe for concurrent use.
type Service struct {
	cfg Config
	db  *store.DB
	log *slog.Logger

	mu    sync.Mutex
	built map[int64]builtProvider // provider ID → its client at a version
}

type builtProvider struct {
	version int64
	p       llm.Provider
}

// New returns the service.
func New(cfg Config) (*Service, error) {
	if cfg.DB == nil {
		return nil, fmt.Errorf("settings: no database")
	}
	if cfg.TestTimeout == 0 {
		cfg.TestTimeout = 20 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Secrets == nil {
		cfg.Secrets = redact.New()
	}
	return &Service{cfg: cfg, db: cfg.DB, log: cfg.Logger, built: map[int64]builtProvider{}}, nil
}

func admin(actor bullpen.Member) error {
	if !actor.IsAdmin {
		return bullpen.Errorf(bullpen.EFORBIDDEN, "only an admin can see or change the provider settings")
	}
	return nil
}

// Providers lists the providers, by name; admins only (EFORBIDDEN).
func (s *Service) Providers(ctx context.Context, actor bullpen.Member) ([]bullpen.Provider, error) {
	if err := admin(actor); err != nil {
		return nil, err
	}
	ps, err := s.db.Providers(ctx)
	for _, p := range ps {
		s.learn(p)
	}
	return ps, err
}

// learn adds p's secrets to the set every view redacts.
func (s *Service) learn(p bullpen.Provider) bullpen.Provider {
	s.cfg.Secrets.Add(p.APIKey, p.OAuthToken, p.BaseURL)
	return p
}

// LearnAll adds every stored provider's secrets to the redaction set: at
// start, so that a secret is redacted even before its provider is used.
func (s *Service) LearnAll(ctx context.Context) error {
	ps, err := s.db.Providers(ctx)
	if err != nil {
		return fmt.Errorf("settings: reading providers: %w", err)
	}
	for _, p := range ps {
		s.learn(p)
	}
	return nil
}

// Get returns one provider; admins only.
func (s *Service) Get(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Provider, error) {
	if err := admin(actor); err != nil {
		return bullpen.Provider{}, err
	}
	p, err := s.db.Provider(ctx, id)
	return s.learn(p), err
}

// Create adds a provider; admins only. Bad input is EINVALID, a taken
// name ECONFLICT. The first provider becomes the default.
func (s *Service) Create(ctx context.Context, actor bullpen.Member, in bullpen.ProviderInput) (bullpen.Provider, error) {
	if err := admin(actor); err != nil {
		return bullpen.Provider{}, err
	}
	if in.Name == nil || in.Kind == nil {
		return bullpen.Provider{}, bullpen.Errorf(bullpen.EINVALID, "name and kind (openai or anthropic) are required")
	}
	p := apply(bullpen.Provider{Source: bullpen.ProviderFromSettings}, in)
	if err := validate(p); err != nil {
		return bullpen.Provider{}, err
	}
	var out bullpen.Provider
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		if _, err := tx.ProviderByNameTx(""); bullpen.IsCode(err, bullpen.ENOTFOUND) {
			p.IsDefault = true // the first provider: agents can think at once
		} else if err != nil {
			return err
		}
		var err error
		out, err = tx.CreateProvider(s.learn(p))
		return err
	})
	return out, err
}

// Update edits a provider; admins only. An edit makes it a Settings row:
// the environment no longer overwrites it at start.
func (s *Service) Update(ctx context.Context, actor bullpen.Member, id int64, in bullpen.ProviderInput) (bullpen.Provider, error) {
	if err := admin(actor); err != nil {
		return bullpen.Provider{}, err
	}
	if in.IsDefault != nil && !*in.IsDefault {
		return bullpen.Provider{}, bullpen.Errorf(bullpen.EINVALID, "to change the default, make another provider the default")
	}
	var out bullpen.Provider
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error {
		cur, err := tx.Provider(id)
		if err != nil {
			return err
		}
		p := apply(cur, in)
		if editsConnection(in) { // choosing the default is not an edit of the provider
			p.Source = bullpen.ProviderFromSettings
		}
		if err := validate(p); err != nil {
			return err
		}
		out, err = tx.UpdateProvider(s.learn(p))
		return err
	})
	return out, err
}

// Delete removes a provider; admins only. Agents that named it get a
// notice on their next turn saying so.
func (s *Service) Delete(ctx context.Context, actor bullpen.Member, id int64) error {
	if err := admin(actor); err != nil {
		return err
	}
	_, err := s.db.Transact(ctx, func(tx *store.Tx) error { return tx.DeleteProvider(id) })
	if err == nil {
		s.mu.Lock()
		delete(s.built, id)
		s.mu.Unlock()
	}
	return err
}

// editsConnection reports whether in changes more than the default.
func editsConnection(in bullpen.ProviderInput) bool {
	return in.Name != nil || in.Kind != nil || in.BaseURL != nil || in.APIKey != nil || in.OAuthToken != nil ||
		in.Model != nil || in.EmbeddingsModel != nil || in.ClearOAuthToken
}

// apply copies the set fields of in onto p.
func apply(p bullpen.Provider, in bullpen.ProviderInput) bullpen.Provider {
	str := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	str(&p.Name, in.Name)
	str(&p.Kind, in.Kind)
	str(&p.BaseURL, in.BaseURL)
	str(&p.Model, in.Model)
	str(&p.EmbeddingsModel, in.EmbeddingsModel)
	if p.Kind == "openai-compatible" {
		p.Kind = bullpen.ProviderOpenAI
	}
	p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	// An empty secret on an edit keeps the stored one: the form never
	// holds the secret, so it cannot send it back.
	if in.APIKey != nil && strings.TrimSpace(*in.APIKey) != "" {
		p.APIKey = strings.TrimSpace(*in.APIKey)
	}
	if in.OAuthToken != nil && strings.TrimSpace(*in.OAuthToken) != "" {
		p.OAuthToken = strings.TrimSpace(*in.OAuthToken)
	}
	if in.ClearOAuthToken {
		p.OAuthToken = ""
	}
	if in.IsDefault != nil && *in.IsDefault {
		p.IsDefault = true
	}
	return p
}

func validate(p bullpen.Provider) error {
	if err := bullpen.ValidateProviderName(p.Name); err != nil {
		return err
	}
	if p.Name == "scripted" {
		return bullpen.FieldErrorf("name", bullpen.EINVALID, "the name \"scripted\" is kept for the simulation")
	}
	if p.Kind != bullpen.ProviderOpenAI && p.Kind != bullpen.ProviderAnthropic {
		return bullpen.FieldErrorf("kind", bullpen.EINVALID, "kind must be \"openai\" (any OpenAI-compatible server) or \"anthropic\", not %q", p.Kind)
	}
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bullpen.FieldErrorf("base_url", bullpen.EINVALID, "base_url must be an http:// or https:// address, such as http://127.0.0.1:11434/v1")
		}
	}
	if err := validateLengths(p); err != nil {
		return err
	}
	if err := validateEmbeddingsModel(p); err != nil {
		return err
	}
	if p.OAuthToken != "" && p.Kind != bullpen.ProviderAnthropic {
		return bullpen.FieldErrorf("oauth_token", bullpen.EINVALID, "an OAuth token is for Anthropic providers only")
	}
	switch {
	case p.Kind == bullpen.ProviderOpenAI && p.APIKey == "" && p.BaseURL == "":
		return bullpen.Errorf(bullpen.EINVALID, "an OpenAI-compatible provider needs an API key, a base URL (Ollama, vLLM need only that) or both")
	case p.Kind == bullpen.ProviderAnthropic && p.APIKey == "" && p.OAuthToken == "":
		return bullpen.Errorf(bullpen.EINVALID, "an Anthropic provider needs an API key or an OAuth token")
	}
	return nil
}

// validateLengths bounds the free-text fields, naming the first too long.
func validateLengths(p bullpen.Provider) error {
	for _, f := range []struct {
		name  string
		value string
		max   int
	}{{"base_url", p.BaseURL, 500}, {"model", p.Model, 200}, {"embeddings_model", p.EmbeddingsModel, 200},
		{"api_key", p.APIKey, 1000}, {"oauth_token", p.OAuthToken, 1000}} {
		if len(f.value) > f.max {
			return bullpen.FieldErrorf(f.name, bullpen.EINVALID, "%s is longer than %d characters", f.name, f.max)
		}
	}
	return nil
}

// validateEmbeddingsModel checks the embeddings model: OpenAI-compatible
// providers only, and a model's name, which holds no space or control
// character (a pasted "model: x" would otherwise fail every write later,
// quietly, as recall by full text alone).
func validateEmbeddingsModel(p bullpen.Provider) error {
	switch {
	case p.EmbeddingsModel == "":
		return nil
	case p.Kind != bullpen.ProviderOpenAI:
		return bullpen.FieldErrorf("embeddings_model", bullpen.EINVALID, "embeddings_model is for OpenAI-compatible providers only (their /embeddings endpoint)")
	case strings.IndexFunc(p.EmbeddingsModel, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return bullpen.FieldErrorf("embeddings_model", bullpen.EINVALID,
			"embeddings_model %q is not a model name: no spaces (e.g. text-embedding-3-small, nomic-embed-text)", p.EmbeddingsModel)
	}
	return nil
}
