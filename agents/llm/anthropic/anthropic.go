// Package anthropic is an llm.Provider for the Anthropic Messages API on
// net/http. It streams, and it marks the stable prefix for prompt
// caching: a cache breakpoint on the last tool definition and one on the
// system block, so tools + system are read from the cache on every turn
// after the first.
package anthropic

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/call"
)

// DefaultMaxTokens is sent when Request.MaxTokens is 0; the API requires one.
const DefaultMaxTokens = 4096

// DefaultBaseURL is Anthropic's API, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com"

// Config configures a Provider.
type Config struct {
	// BaseURL of the API without the /v1 path; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// Model is used when Request.Model is empty.
	Model string
	// MaxTokens is used when Request.MaxTokens is 0; default DefaultMaxTokens.
	MaxTokens int
	// HTTPClient defaults to a client without a timeout (Timeout applies).
	HTTPClient *http.Client
	// Timeout bounds one attempt, streaming included. Default 120 s.
	Timeout time.Duration
	// Timeouts bound connecting, the wait for the first byte and silences
	// in the stream (defaults llm.DefaultTimeouts); llm.WithTimeouts on a
	// call's context overrides them for that call.
	Timeouts llm.Timeouts
	// MaxRetries on 429, 408, 409, 5xx (529 overloaded too) and network
	// errors. 0 means 3, negative means none.
	MaxRetries int
	// Sleep waits between retries; nil means a real, cancellable timer.
	Sleep func(time.Duration)
	// BaseDelay and MaxDelay shape the backoff (defaults 1 s and 30 s);
	// Rand is its jitter source, Now the clock for Retry-After dates.
	BaseDelay, MaxDelay time.Duration
	Rand                func() float64
	Now                 func() time.Time
	// Headers are added to every request.
	Headers map[string]string
}

// Provider talks to the Anthropic Messages API.
type Provider struct {
	cfg    Config
	hc     *http.Client
	header http.Header
	policy call.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg. Configuration is explicit: no
// environment variable (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) is read.
func New(cfg Config) *Provider {
	h := http.Header{}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("Anthropic-Version", Version)
	if cfg.APIKey != "" {
		h.Set("X-Api-Key", cfg.APIKey)
	}
	return &Provider{
		cfg:    cfg,
		hc:     call.Client(cfg.HTTPClient, cfg.Timeouts),
		header: h,
		policy: call.Policy{
			Provider: "anthropic", Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
			BaseDelay: cfg.BaseDelay, MaxDelay: cfg.MaxDelay,
			Sleep: cfg.Sleep, Rand: cfg.Rand, Now: cfg.Now,
		},
	}
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return "anthropic" }

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

// endpoint is BaseURL + /v1/messages.
func (p *Provider) endpoint() (string, error) {
	base := p.cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", invalid("base URL %q is not an http(s) URL", base)
	}
	return u.JoinPath("v1/messages").String(), nil
}

// attempt makes one HTTP call and reports it to the context's recorder
// (llm.WithRecorder) with the bodies as they went over the wire.
func (p *Provider) attempt(ctx context.Context, endpoint, model string, body []byte, onDelta func(string)) (llm.Response, bool, error) {
	var capture call.Capture
	resp, streamed, err := p.stream(ctx, &capture, endpoint, body, onDelta)
	if resp.Model != "" {
		model = resp.Model
	}
	capture.Report(ctx, call.Outcome{Provider: "anthropic", Model: model, Usage: resp.Usage, Err: err})
	return resp, streamed, err
}
