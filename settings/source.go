package settings

import (
	"context"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/agents/llm/providers"
)

// anthropicOAuthBeta is the beta header Anthropic's API wants with a
// Claude subscription (OAuth) token instead of an API key.
const anthropicOAuthBeta = "oauth-2025-04-20"

// ProviderConfig is everything needed to call a provider, secrets
// included: for the model gateway, which forwards agent CLIs' calls to
// the provider configured for their agent. Never serialize it.
type ProviderConfig struct {
	Name       string
	Kind       string // bullpen.ProviderOpenAI or bullpen.ProviderAnthropic
	BaseURL    string // "" means the vendor's public API
	APIKey     string
	OAuthToken string // Anthropic only
	Model      string // the provider's default model
}

// Resolve returns the provider named name ("" is the office default) with
// its secrets; ENOTFOUND when there is none.
func (s *Service) Resolve(ctx context.Context, name string) (ProviderConfig, error) {
	p, err := s.db.ProviderByName(ctx, name)
	if err != nil {
		return ProviderConfig{}, err
	}
	s.learn(p)
	return ProviderConfig{Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, APIKey: p.APIKey,
		OAuthToken: p.OAuthToken, Model: modelOf(p)}, nil
}

// Provider returns the model client of the provider named name ("" is
// the office default) and the name it resolved to. It reads the
// provider's row each time, so a change in Settings applies from the next
// call; the client is rebuilt only when the row's version moved. With no
// such provider the error is ENOTFOUND and the name is the one asked for
// (for the default: the default's name if one is set, else "").
func (s *Service) Provider(ctx context.Context, name string) (llm.Provider, string, error) {
	p, err := s.db.ProviderByName(ctx, name)
	if err != nil {
		return nil, name, err
	}
	s.learn(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.built[p.ID]; ok && b.version == p.Version {
		return b.p, p.Name, nil
	}
	c := s.client(p, 0)
	s.built[p.ID] = builtProvider{version: p.Version, p: c}
	return c, p.Name, nil
}

// client builds the model client of p; timeout 0 keeps the adapter's.
func (s *Service) client(p bullpen.Provider, timeout time.Duration) llm.Provider {
	if p.Kind == bullpen.ProviderAnthropic {
		cfg := anthropic.Config{BaseURL: p.BaseURL, APIKey: p.APIKey, Model: modelOf(p), HTTPClient: s.cfg.HTTPClient, Timeout: timeout}
		if p.OAuthToken != "" {
			// A subscription token replaces the key: Bearer auth and the
			// OAuth beta.
			cfg.APIKey = ""
			cfg.Headers = map[string]string{"Authorization": "Bearer " + p.OAuthToken, "anthropic-beta": anthropicOAuthBeta}
		}
		if timeout != 0 {
			cfg.MaxRetries = -1
		}
		return anthropic.New(cfg)
	}
	cfg := openai.Config{BaseURL: p.BaseURL, APIKey: p.APIKey, Model: modelOf(p), HTTPClient: s.cfg.HTTPClient, Timeout: timeout}
	if timeout != 0 {
		cfg.MaxRetries = -1
	}
	return openai.New(cfg)
}

// modelOf is p's default model, or the kind's when p names none.
func modelOf(p bullpen.Provider) string {
	switch {
	case p.Model != "":
		return p.Model
	case p.Kind == bullpen.ProviderAnthropic:
		return providers.DefaultAnthropicModel
	}
	return providers.DefaultOpenAIModel
}

// Test makes a real request to a provider — a one-token completion, the
// cheapest call both protocols share — and returns the provider's answer
// or its error text. Admins only. A failed test is a result (OK false),
// not an error.
func (s *Service) Test(ctx context.Context, actor bullpen.Member, id int64) (bullpen.ProviderTest, error) {
	if err := admin(actor); err != nil {
		return bullpen.ProviderTest{}, err
	}
	p, err := s.db.Provider(ctx, id)
	if err != nil {
		return bullpen.ProviderTest{}, err
	}
	s.learn(p)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.TestTimeout)
	defer cancel()
	start := s.cfg.Now()
	resp, err := s.client(p, s.cfg.TestTimeout).Complete(ctx, llm.Request{MaxTokens: 1,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Reply with OK."}}}, nil)
	out := bullpen.ProviderTest{LatencyMS: s.cfg.Now().Sub(start).Milliseconds()}
	if err != nil {
		out.Message = s.cfg.Secrets.String(bullpen.ErrorMessage(err))
		return out, nil
	}
	out.OK, out.Model = true, s.cfg.Secrets.String(resp.Model)
	out.Message = "Connected: " + p.Name + " answered"
	if resp.Model != "" {
		out.Message += " with model " + out.Model
	}
	return out, nil
}
