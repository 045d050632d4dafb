// Package openai is an llm.Provider for OpenAI-compatible Chat Completions
// APIs (OpenAI, Ollama, vLLM, LiteLLM, OpenRouter …) on net/http. It always
// streams, asks for the usage chunk, and assembles tool calls from the
// streamed fragments.
package openai

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/call"
)

// DefaultBaseURL is OpenAI's API, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Provider. Only Model (or Request.Model) is required
// in practice; BaseURL is required for anything but OpenAI itself.
type Config struct {
	// BaseURL of the API including its version path, such as
	// "http://127.0.0.1:11434/v1" for Ollama. Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a Bearer token; empty sends none (Ollama, vLLM).
	APIKey string
	// Model is used when Request.Model is empty.
	Model string
	// HTTPClient defaults to a client without a timeout (Timeout applies).
	HTTPClient *http.Client
	// Timeout bounds one attempt, streaming included. Default 120 s.
	Timeout time.Duration
	// Timeouts bound connecting, the wait for the first byte and silences
	// in the stream (defaults llm.DefaultTimeouts); llm.WithTimeouts on a
	// call's context overrides them for that call.
	Timeouts llm.Timeouts
	// MaxRetries on 429, 408, 409, 5xx and network errors. 0 means 3,
	// negative means none.
	MaxRetries int
	// Sleep waits between retries; nil means a real, cancellable timer.
	Sleep func(time.Duration)
	// BaseDelay and MaxDelay shape the backoff (defaults 1 s and 30 s);
	// Rand is its jitter source, Now the clock for Retry-After dates.
	BaseDelay, MaxDelay time.Duration
	Rand                func() float64
	Now                 func() time.Time
	// Name labels the provider (Name()); default "openai".
	Name string
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens
	// (required by OpenAI's reasoning models) instead of max_tokens (what
	// most compatible servers read). It defaults to true only when BaseURL
	// is empty.
	MaxCompletionTokens *bool
	// Headers are added to every request (OpenRouter's HTTP-Referer …).
	Headers map[string]string
}

// Provider talks to an OpenAI-compatible Chat Completions endpoint.
type Provider struct {
	cfg    Config
	hc     *http.Client
	header http.Header
	policy call.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg. Configuration is explicit: no
// environment variable, organization or project is read.
func New(cfg Config) *Provider {
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	h := http.Header{}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &Provider{
		cfg:    cfg,
		hc:     call.Client(cfg.HTTPClient, cfg.Timeouts),
		header: h,
		policy: call.Policy{
			Provider: cfg.Name, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
			BaseDelay: cfg.BaseDelay, MaxDelay: cfg.MaxDelay,
			Sleep: cfg.Sleep, Rand: cfg.Rand, Now: cfg.Now,
		},
	}
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return p.cfg.Name }

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	model, body, err := p.body(req)
	if err != nil {
		return llm.Response{}, err
	}
	endpoint, err := p.endpoint()
	if err != nil {
		return llm.Response{}, err
	}
	return call.Do(ctx, p.policy, func(ctx context.Context) (llm.Response, bool, error) {
		return p.attempt(ctx, endpoint, model, body, onDelta)
	})
}

// endpoint is BaseURL + /chat/completions; a query in BaseURL (Azure's
// api-version) is kept.
func (p *Provider) endpoint() (string, error) { return p.endpointOf("chat/completions") }

// endpointOf is BaseURL + /path, keeping a query in BaseURL.
func (p *Provider) endpointOf(path string) (string, error) {
	base := p.cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errInvalid(p, "base URL %q is not an http(s) URL", base)
	}
	return u.JoinPath(path).String(), nil
}

// attempt makes one HTTP call and reports it to the context's recorder
// (llm.WithRecorder) with the bodies as they went over the wire.
func (p *Provider) attempt(ctx context.Context, endpoint, model string, body []byte, onDelta func(string)) (llm.Response, bool, error) {
	var capture call.Capture
	resp, streamed, err := p.stream(ctx, &capture, endpoint, body, onDelta)
	if resp.Model != "" {
		model = resp.Model
	}
	capture.Report(ctx, call.Outcome{Provider: p.cfg.Name, Model: model, Usage: resp.Usage, Err: err})
	return resp, streamed, err
}

func errInvalid(p *Provider, format string, args ...any) error {
	e := bullpen.Errorf(bullpen.EINVALID, format, args...)
	e.Message = p.cfg.Name + ": " + e.Message
	return e
}
