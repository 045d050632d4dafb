// Package openai is an llm.Provider for OpenAI-compatible Chat Completions
// APIs (OpenAI, Ollama, vLLM, LiteLLM, OpenRouter …) on net/http. It always
// streams, asks for the usage chunk, and assembles tool calls from the
// streamed fragments.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/call"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/sse"
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
func (p *Provider) endpoint() (string, error) {
	base := p.cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errInvalid(p, "base URL %q is not an http(s) URL", base)
	}
	return u.JoinPath("chat/completions").String(), nil
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

func (p *Provider) stream(ctx context.Context, capture *call.Capture, endpoint string, body []byte, onDelta func(string)) (llm.Response, bool, error) {
	res, err := call.Post(ctx, p.hc, capture, endpoint, p.header, body)
	if err != nil {
		return llm.Response{}, false, err
	}
	defer res.Body.Close()
	var a assembly
	r := sse.NewReader(res.Body)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return llm.Response{}, a.streamed, err
		}
		done, err := a.add(ev.Data, onDelta)
		if err != nil {
			return llm.Response{}, a.streamed, err
		}
		if done {
			// Read on to the end, as a client should: the recorded
			// response is the whole body, the connection is reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
			break
		}
	}
	return a.response()
}

// assembly builds a response from the stream's chunks.
type assembly struct {
	resp     llm.Response
	text     []byte
	streamed bool
	calls    toolCalls
	finish   string
}

// add takes one event's data; done is true at the [DONE] sentinel.
func (a *assembly) add(data []byte, onDelta func(string)) (done bool, err error) {
	if string(data) == "[DONE]" {
		return true, nil
	}
	var chunk chatChunk
	if err := json.Unmarshal(data, &chunk); err != nil {
		return false, fmt.Errorf("stream: bad chunk: %w", err)
	}
	if chunk.Error != nil {
		return false, streamError(chunk.Error)
	}
	if chunk.Model != "" {
		a.resp.Model = chunk.Model
	}
	if chunk.Usage != nil {
		a.resp.Usage = usage(chunk.Usage)
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // n is never set, but be safe
		}
		if d := ch.Delta.Content; d != "" {
			a.text = append(a.text, d...)
			a.streamed = true
			if onDelta != nil {
				onDelta(d)
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			a.calls.add(tc.Index, tc.ID, tc.Function.Name, string(tc.Function.Arguments))
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return false, nil
}

func (a *assembly) response() (llm.Response, bool, error) {
	if a.finish == "" {
		// The stream ended without a finish_reason: cut off, not complete.
		return llm.Response{}, a.streamed, errors.New("stream ended before the answer was complete")
	}
	resp := a.resp
	resp.Text = string(a.text)
	resp.ToolCalls = a.calls.list()
	resp.StopReason = stopReason(a.finish, len(resp.ToolCalls) > 0)
	return resp, a.streamed, nil
}

// streamError turns an error object sent inside a 200 stream into the
// status error it stands for, so codes and retries treat it as one.
func streamError(e *chatError) *call.StatusError {
	var code int
	var name string
	if json.Unmarshal(e.Code, &code) == nil && code >= 400 && code <= 599 {
		return &call.StatusError{Status: code, Message: e.Message, Event: orError(e.Type)} // vLLM, LiteLLM
	}
	_ = json.Unmarshal(e.Code, &name) // OpenAI: "rate_limit_exceeded" …
	status := http.StatusInternalServerError
	for _, s := range []string{e.Type, name} {
		switch s {
		case "invalid_request_error", "context_length_exceeded":
			status = http.StatusBadRequest
		case "authentication_error", "invalid_api_key":
			status = http.StatusUnauthorized
		case "rate_limit_error", "rate_limit_exceeded", "insufficient_quota":
			status = http.StatusTooManyRequests
		}
	}
	return &call.StatusError{Status: status, Message: e.Message, Event: orError(e.Type)}
}

func orError(typ string) string {
	if typ == "" {
		return "error"
	}
	return typ
}

func usage(u *chatUsage) llm.Usage {
	return llm.Usage{
		InputTokens:       u.PromptTokens,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens:  u.PromptTokensDetails.CacheWriteTokens,
		OutputTokens:      u.CompletionTokens,
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
