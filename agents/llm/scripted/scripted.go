// Package scripted is a deterministic llm.Provider for tests and the
// `bullpen demo` command. It answers from a script, streams the text in a
// few deltas and reports realistic usage counted with the offline
// tokenizer, including prompt-cache hits when the stable prefix (system +
// tools) repeats. Its Name is "scripted"; the UI labels it a simulation.
package scripted

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Func is a script: it sees each request and returns the answer. Text,
// ToolCalls and StopReason are used as given; empty tool-call IDs, the
// stop reason, Model and (when zero) Usage are filled in. An error is
// returned to the caller as is.
type Func func(req llm.Request) (llm.Response, error)

// Step is one scripted answer of a queue.
type Step struct {
	Text      string
	ToolCalls []llm.ToolCall
	Err       error // returned instead of an answer
}

// Provider is the scripted llm.Provider. It is safe for concurrent use.
type Provider struct {
	// DeltaDelay pauses before each delta after the first, so a demo
	// streams visibly. Zero in tests.
	DeltaDelay time.Duration
	// WordsPerDelta sets the delta size; default 4.
	WordsPerDelta int

	script Func
	mu     sync.Mutex
	calls  int
	seen   map[[32]byte]bool // stable prefixes answered before
	reqs   []llm.Request
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider that answers with script.
func New(script Func) *Provider {
	return &Provider{script: script, seen: map[[32]byte]bool{}}
}

// NewSteps returns a Provider that answers with steps in order. A call
// after the last step fails with EUNAVAILABLE ("script exhausted").
func NewSteps(steps ...Step) *Provider {
	var mu sync.Mutex
	next := 0
	return New(func(llm.Request) (llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(steps) {
			return llm.Response{}, bullpen.Errorf(bullpen.EUNAVAILABLE,
				"scripted: script exhausted after %d steps", len(steps))
		}
		s := steps[next]
		next++
		if s.Err != nil {
			return llm.Response{}, s.Err
		}
		return llm.Response{Text: s.Text, ToolCalls: s.ToolCalls}, nil
	})
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return "scripted" }

// Requests returns the requests answered so far, in order.
func (p *Provider) Requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llm.Request(nil), p.reqs...)
}

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, canceled(err)
	}
	started := time.Now()
	resp, err := p.script(req)
	if err != nil {
		record(ctx, req, llm.Response{}, started, err)
		return llm.Response{}, err
	}
	p.mu.Lock()
	p.calls++
	n := p.calls
	p.reqs = append(p.reqs, req)
	cached := p.cached(req)
	p.mu.Unlock()

	resp.ToolCalls = append([]llm.ToolCall(nil), resp.ToolCalls...)
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].ID == "" {
			resp.ToolCalls[i].ID = fmt.Sprintf("call_scripted_%d_%d", n, i)
		}
		if len(resp.ToolCalls[i].Arguments) == 0 {
			resp.ToolCalls[i].Arguments = json.RawMessage("{}")
		}
	}
	if resp.StopReason == "" {
		resp.StopReason = llm.StopEnd
		if len(resp.ToolCalls) > 0 {
			resp.StopReason = llm.StopToolUse
		}
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	if resp.Model == "" {
		resp.Model = "scripted"
	}
	if resp.Usage == (llm.Usage{}) {
		resp.Usage = usage(req, resp, cached)
	}
	record(ctx, req, resp, started, nil)
	for i, d := range split(resp.Text, p.WordsPerDelta) {
		if i > 0 && p.DeltaDelay > 0 {
			select {
			case <-time.After(p.DeltaDelay):
			case <-ctx.Done():
				return llm.Response{}, canceled(ctx.Err())
			}
		}
		if onDelta != nil {
			onDelta(d)
		}
	}
	return resp, nil
}

// SimulatedURL stands for the endpoint of a scripted call: none was asked.
const SimulatedURL = "simulation:scripted"

// record hands the call to the context's llm.Recorder, marked simulated:
// its request is the JSON of the llm.Request the loop built and its
// response the JSON of the scripted answer, as no HTTP body exists.
func record(ctx context.Context, req llm.Request, resp llm.Response, started time.Time, err error) {
	rec := llm.RecorderFrom(ctx)
	if rec == nil {
		return
	}
	reqJSON, _ := json.Marshal(req)
	respJSON, _ := json.Marshal(resp)
	mc := bullpen.ModelCall{Via: bullpen.ViaBuiltin, Provider: "scripted", Model: resp.Model, URL: SimulatedURL, Simulated: true,
		Request: string(reqJSON), RequestBytes: len(reqJSON), Response: string(respJSON), ResponseBytes: len(respJSON),
		InputTokens: resp.Usage.InputTokens, CachedInputTokens: resp.Usage.CachedInputTokens,
		CacheWriteTokens: resp.Usage.CacheWriteTokens, OutputTokens: resp.Usage.OutputTokens,
		StartedAt: started.UTC(), DurationMS: time.Since(started).Milliseconds()}
	if err != nil {
		mc.Error, mc.Response, mc.ResponseBytes = err.Error(), "", 0
	}
	_ = rec.RecordModelCall(context.WithoutCancel(ctx), mc)
}

// cached reports whether req's stable prefix was answered before and
// remembers it. Callers hold p.mu.
func (p *Provider) cached(req llm.Request) bool {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s", req.Model, req.System)
	for _, t := range req.Tools {
		fmt.Fprintf(h, "\x00%s\x00%s\x00%s", t.Name, t.Description, t.Parameters)
	}
	var key [32]byte
	copy(key[:], h.Sum(nil))
	hit := p.seen[key]
	p.seen[key] = true
	return hit
}

// usage counts tokens as a provider with prefix caching would report them.
func usage(req llm.Request, resp llm.Response, cached bool) llm.Usage {
	prefix := llm.Count(req.System)
	for _, t := range req.Tools {
		prefix += llm.Count(t.Name) + llm.Count(t.Description) + llm.Count(string(t.Parameters)) + 8
	}
	u := llm.Usage{InputTokens: prefix}
	if cached {
		u.CachedInputTokens = prefix
	} else {
		u.CacheWriteTokens = prefix
	}
	for _, m := range req.Messages {
		u.InputTokens += llm.Count(m.Content) + 3
		for _, tc := range m.ToolCalls {
			u.InputTokens += llm.Count(tc.Name) + llm.Count(string(tc.Arguments)) + 3
		}
	}
	u.OutputTokens = llm.Count(resp.Text)
	for _, tc := range resp.ToolCalls {
		u.OutputTokens += llm.Count(tc.Name) + llm.Count(string(tc.Arguments)) + 3
	}
	return u
}

// split cuts text into deltas of n words, keeping every byte.
func split(text string, n int) []string {
	if n <= 0 {
		n = 4
	}
	var out []string
	words := 0
	start := 0
	for i := 1; i <= len(text); i++ {
		if i == len(text) {
			out = append(out, text[start:])
			break
		}
		if text[i] == ' ' && text[i-1] != ' ' {
			words++
			if words%n == 0 {
				out = append(out, text[start:i])
				start = i
			}
		}
	}
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

func canceled(err error) error {
	return &bullpen.Error{Code: bullpen.EUNAVAILABLE, Message: "scripted: request canceled", Err: err}
}

// Echo is a script that answers with the last user message, prefixed.
// Handy as a default for demos and smoke tests.
func Echo(prefix string) Func {
	return func(req llm.Request) (llm.Response, error) {
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == llm.RoleUser {
				return llm.Response{Text: prefix + strings.TrimSpace(req.Messages[i].Content)}, nil
			}
		}
		return llm.Response{Text: prefix}, nil
	}
}
