// Package anthropic is an llm.Provider for the Anthropic Messages API built
// on anthropic-sdk-go. It streams, and it marks the stable prefix for prompt
// caching: a cache breakpoint on the last tool definition and one on the
// system block, so tools + system are read from the cache on every turn
// after the first.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/call"
)

// DefaultMaxTokens is sent when Request.MaxTokens is 0; the API requires one.
const DefaultMaxTokens = 4096

// Config configures a Provider.
type Config struct {
	// BaseURL of the API without the /v1 path; empty means the SDK default.
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
	client sdk.Client
	policy call.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg. Configuration is explicit: the SDK's
// environment defaults (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles) are
// not read.
func New(cfg Config) *Provider {
	hc := call.Client(cfg.HTTPClient, cfg.Timeouts)
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // ours, in call.Do
		option.WithAPIKey(cfg.APIKey),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &Provider{
		cfg:    cfg,
		client: sdk.NewClient(opts...),
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
	params, err := p.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	return call.Do(ctx, p.policy, func(ctx context.Context) (llm.Response, bool, error) {
		return p.attempt(ctx, params, onDelta)
	})
}

// attempt makes one HTTP call and reports it to the context's recorder
// (llm.WithRecorder) with the bodies as they went over the wire.
func (p *Provider) attempt(ctx context.Context, params sdk.MessageNewParams, onDelta func(string)) (llm.Response, bool, error) {
	var capture call.Capture
	resp, streamed, err := p.stream(ctx, &capture, params, onDelta)
	model := resp.Model
	if model == "" {
		model = string(params.Model)
	}
	capture.Report(ctx, call.Outcome{Provider: "anthropic", Model: model, Usage: resp.Usage, Err: err})
	return resp, streamed, err
}

func (p *Provider) stream(ctx context.Context, capture *call.Capture, params sdk.MessageNewParams, onDelta func(string)) (llm.Response, bool, error) {
	stream := p.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(capture.Middleware))
	defer stream.Close()

	var (
		msg      sdk.Message
		streamed bool
		stopped  bool
	)
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return llm.Response{}, streamed, err
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
				streamed = true
				if onDelta != nil {
					onDelta(ev.Delta.Text)
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		if se := capture.Err(); se != nil {
			return llm.Response{}, streamed, se
		}
		return llm.Response{}, streamed, err
	}
	if !stopped {
		return llm.Response{}, streamed, errors.New("stream ended before message_stop")
	}
	return response(&msg), streamed, nil
}

func response(msg *sdk.Message) llm.Response {
	resp := llm.Response{
		Model: msg.Model,
		Usage: llm.Usage{
			InputTokens: int(msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens +
				msg.Usage.CacheCreationInputTokens),
			CachedInputTokens: int(msg.Usage.CacheReadInputTokens),
			CacheWriteTokens:  int(msg.Usage.CacheCreationInputTokens),
			OutputTokens:      int(msg.Usage.OutputTokens),
		},
	}
	var text []byte
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text...)
		case "tool_use":
			args := json.RawMessage(b.Input)
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	resp.Text = string(text)
	switch msg.StopReason {
	case sdk.StopReasonToolUse:
		resp.StopReason = llm.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		resp.StopReason = llm.StopMaxTokens
	default:
		resp.StopReason = llm.StopEnd
	}
	return resp
}
