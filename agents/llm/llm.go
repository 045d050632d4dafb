// Package llm is the model-provider layer for Bullpen's agents: one small
// Provider interface with an OpenAI-compatible adapter (llm/openai), an
// Anthropic adapter with prompt-cache breakpoints (llm/anthropic), a
// deterministic simulation (llm/scripted), and fake vendor servers for tests
// (llm/llmtest).
//
// Errors returned by providers are *bullpen.Error values: EUNAVAILABLE (an
// outage, a timeout, retries exhausted), ERATELIMIT (429 after retries),
// EUNAUTHORIZED (401/403) and EINVALID (400 and friends). Their messages name
// the provider and the HTTP status, fit to show in a channel.
package llm

import (
	"context"
	"encoding/json"
)

// Role is the author of a Message.
type Role string

// Roles of a conversation. The system prompt is not a message: it is
// Request.System, the byte-stable prefix.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Stop reasons of a Response, the same for every provider.
const (
	StopEnd       = "end"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
)

// ToolCall is a model's request to run a tool. Arguments is a JSON object.
type ToolCall struct {
	ID, Name  string
	Arguments json.RawMessage
}

// Message is one entry of a conversation.
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall // assistant messages: the calls the model made
	ToolCallID string     // tool messages: the call this result answers
	IsError    bool       // tool messages: the tool failed
}

// Tool is a function the model may call. Parameters is a JSON Schema object.
type Tool struct {
	Name, Description string
	Parameters        json.RawMessage
}

// Usage counts the tokens of one call.
//
// InputTokens is every prompt token, cached or not (the same meaning for
// every provider: Anthropic's input, cache-read and cache-write counts are
// summed into it). CachedInputTokens and CacheWriteTokens are the parts of
// InputTokens read from and written to the provider's prompt cache.
type Usage struct {
	InputTokens, CachedInputTokens, CacheWriteTokens, OutputTokens int
}

// Add returns the sum of u and v, for totals over several calls.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + v.InputTokens,
		CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens + v.CacheWriteTokens,
		OutputTokens:      u.OutputTokens + v.OutputTokens,
	}
}

// Request is one call to a model.
type Request struct {
	// Model overrides the provider's configured default model.
	Model string
	// System is the byte-stable prefix: role prompt and roster. Providers
	// with explicit prompt caching put a cache breakpoint after System and
	// Tools.
	System string
	// Tools are passed sorted by name by the caller; providers send them in
	// the given order and never reorder them.
	Tools    []Tool
	Messages []Message
	// MaxTokens caps the output; 0 means the provider's default.
	MaxTokens   int
	Temperature *float64
}

// Response is a model's complete answer to a Request.
type Response struct {
	Text       string
	ToolCalls  []ToolCall
	Usage      Usage
	StopReason string // StopEnd, StopToolUse or StopMaxTokens
	Model      string // the model that answered, as the provider reports it
}

// Provider is a language model behind some API.
type Provider interface {
	// Name is a short label such as "openai", "anthropic" or "scripted".
	Name() string
	// Complete sends req and returns the whole answer. If onDelta is not
	// nil it is called, in order and from the calling goroutine's call
	// tree, with each piece of text as it arrives; the pieces concatenate
	// to Response.Text. A call that has delivered deltas is never retried,
	// so onDelta never sees text twice.
	Complete(ctx context.Context, req Request, onDelta func(text string)) (Response, error)
}
