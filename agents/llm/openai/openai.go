// Package openai is an llm.Provider for OpenAI-compatible Chat Completions
// APIs (OpenAI, Ollama, vLLM, LiteLLM, OpenRouter …) built on openai-go. It
// always streams, asks for the usage chunk, and assembles tool calls from
// the streamed fragments.
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/call"
)

// Config configures a Provider. Only Model (or Request.Model) is required
// in practice; BaseURL is required for anything but OpenAI itself.
type Config struct {
	// BaseURL of the API including its version path, such as
	// "http://127.0.0.1:11434/v1" for Ollama. Empty means the SDK default.
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
	client sdk.Client
	policy call.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	hc := call.Client(cfg.HTTPClient, cfg.Timeouts)
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // ours, in call.Do
		option.WithAPIKey(cfg.APIKey),
		// Explicit config only: no ambient organization or project.
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
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
func (p *Provider) attempt(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(string)) (llm.Response, bool, error) {
	var capture call.Capture
	resp, streamed, err := p.stream(ctx, &capture, params, onDelta)
	model := resp.Model
	if model == "" {
		model = params.Model
	}
	capture.Report(ctx, call.Outcome{Provider: p.cfg.Name, Model: model, Usage: resp.Usage, Err: err})
	return resp, streamed, err
}

func (p *Provider) stream(ctx context.Context, capture *call.Capture, params sdk.ChatCompletionNewParams, onDelta func(string)) (llm.Response, bool, error) {
	stream := p.client.Chat.Completions.NewStreaming(ctx, params, option.WithMiddleware(capture.Middleware))
	defer stream.Close()

	var (
		resp     llm.Response
		text     []byte
		streamed bool
		calls    toolCalls
		finish   string
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			resp.Usage = usage(chunk.Usage)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // n is never set, but be safe
			}
			if d := ch.Delta.Content; d != "" {
				text = append(text, d...)
				streamed = true
				if onDelta != nil {
					onDelta(d)
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				calls.add(int(tc.Index), tc.ID, tc.Function.Name, tc.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		if se := capture.Err(); se != nil {
			return llm.Response{}, streamed, se
		}
		return llm.Response{}, streamed, err
	}
	if finish == "" {
		// The stream ended without a finish_reason: cut off, not complete.
		return llm.Response{}, streamed, errors.New("stream ended before the answer was complete")
	}
	resp.Text = string(text)
	resp.ToolCalls = calls.list()
	resp.StopReason = stopReason(finish, len(resp.ToolCalls) > 0)
	return resp, streamed, nil
}

func usage(u sdk.CompletionUsage) llm.Usage {
	return llm.Usage{
		InputTokens:       int(u.PromptTokens),
		CachedInputTokens: int(u.PromptTokensDetails.CachedTokens),
		CacheWriteTokens:  int(u.PromptTokensDetails.CacheWriteTokens),
		OutputTokens:      int(u.CompletionTokens),
	}
}

func stopReason(finish string, hasCalls bool) string {
	switch {
	case finish == "tool_calls" || finish == "function_call" || hasCalls && finish == "stop":
		return llm.StopToolUse
	case finish == "length":
		return llm.StopMaxTokens
	}
	return llm.StopEnd
}

// toolCalls assembles streamed tool-call fragments. Fragments of one call
// share an index; the first carries id and name, the rest pieces of the
// arguments. A new id at a used index (some servers always send index 0)
// starts a new call.
type toolCalls struct {
	calls []*partialCall
	byIdx map[int]*partialCall
}

type partialCall struct {
	id, name string
	args     []byte
}

func (t *toolCalls) add(index int, id, name, args string) {
	if t.byIdx == nil {
		t.byIdx = map[int]*partialCall{}
	}
	c := t.byIdx[index]
	if c == nil || id != "" && c.id != "" && id != c.id {
		c = &partialCall{}
		t.calls = append(t.calls, c)
		t.byIdx[index] = c
	}
	if id != "" {
		c.id = id
	}
	c.name += name
	c.args = append(c.args, args...)
}

func (t *toolCalls) list() []llm.ToolCall {
	if len(t.calls) == 0 {
		return nil
	}
	out := make([]llm.ToolCall, 0, len(t.calls))
	for i, c := range t.calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		args := c.args
		if len(args) == 0 {
			args = []byte("{}")
		}
		out = append(out, llm.ToolCall{ID: id, Name: c.name, Arguments: args})
	}
	return out
}

func errInvalid(p *Provider, format string, args ...any) error {
	e := bullpen.Errorf(bullpen.EINVALID, format, args...)
	e.Message = p.cfg.Name + ": " + e.Message
	return e
}
