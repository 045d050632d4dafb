// Package llmtest has fake model servers that speak the real wire protocols
// of the OpenAI Chat Completions API (FakeOpenAI) and the Anthropic Messages
// API (FakeAnthropic): real request JSON in, real SSE streams or JSON bodies
// out, vendor-shaped error bodies, token usage from the offline tokenizer
// and prompt-cache accounting. They listen on 127.0.0.1 (httptest), so the
// real SDKs, and external agent CLIs pointed at them, can be tested offline.
//
// A fake is scripted by a Handler that sees each decoded request and returns
// a Reply; every request is recorded for assertions.
package llmtest

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Handler scripts a fake: it gets each request and says how to answer.
// Calls are serialized, so a Handler may keep state without locking.
type Handler func(req CapturedRequest) Reply

// Reply is how a fake answers one request.
type Reply struct {
	// Text is streamed in deltas of ChunkSize runes (default 4).
	Text string
	// ToolCalls are streamed after the text. Empty IDs are generated.
	ToolCalls []llm.ToolCall
	// StopReason in llm terms (llm.StopEnd …); default StopToolUse when
	// there are tool calls, else StopEnd.
	StopReason string
	// Model reported back; default the requested model.
	Model string
	// Usage overrides the computed usage (llm.Usage meaning: InputTokens
	// includes cached tokens).
	Usage *llm.Usage

	// Status, when not 0 or 200, answers with that HTTP status and an error
	// body in the vendor's format carrying Message.
	Status     int
	Message    string
	RetryAfter string // Retry-After header on an error reply

	// Delay waits before any response header; ChunkDelay between stream
	// events. Both end early when the client goes away.
	Delay, ChunkDelay time.Duration
	ChunkSize         int
	// CutOff breaks the connection after the first text delta, as a
	// dropped connection would.
	CutOff bool
}

// CapturedRequest is one request a fake received, decoded into a
// vendor-neutral view, with the raw bytes and the full JSON for anything
// else.
type CapturedRequest struct {
	Seq    int       // 1 for the first request
	Time   time.Time // when it arrived
	Method string
	Path   string
	Header http.Header
	Raw    []byte
	Body   map[string]any

	Model  string
	Stream bool
	// InputTokens is the prompt's size by the offline tokenizer, as the
	// usage reports it (Anthropic and Responses fakes).
	InputTokens  int
	IncludeUsage bool // OpenAI: stream_options.include_usage
	MaxTokens    int  // max_tokens or max_completion_tokens
	Temperature  *float64
	// System is the system prompt: OpenAI system/developer messages,
	// Anthropic system text blocks, joined by blank lines.
	System string
	// SystemCacheControl holds the cache_control type of each Anthropic
	// system block ("" where none).
	SystemCacheControl []string
	Tools              []CapturedTool
	// Messages excludes system messages. Anthropic tool_result blocks come
	// out as Role "tool" messages, tool_use blocks as ToolCalls.
	Messages []CapturedMessage
}

// CapturedTool is a tool definition as sent.
type CapturedTool struct {
	Name, Description string
	Parameters        json.RawMessage // parameters / input_schema, raw
	CacheControl      string          // Anthropic cache_control type, "" if none
	// Namespace is the Responses API namespace tool this function belongs
	// to (Codex puts each MCP server's tools in one); Name is then
	// Namespace + "__" + the function's own name, as the CLI names it.
	Namespace string
	Function  string // the function's own name within Namespace
}

// CapturedMessage is a message as sent.
type CapturedMessage struct {
	Role         string // "user", "assistant", "tool"
	Content      string
	ToolCalls    []llm.ToolCall
	ToolCallID   string
	IsError      bool
	CacheControl string // Anthropic: cache_control of any of its blocks
}

// Text returns a Handler that always answers text.
func Text(text string) Handler {
	return func(CapturedRequest) Reply { return Reply{Text: text} }
}

// Sequence returns a Handler that answers with replies in order and then
// repeats the last one.
func Sequence(replies ...Reply) Handler {
	n := 0
	return func(CapturedRequest) Reply {
		if len(replies) == 0 {
			return Reply{Text: "ok"}
		}
		r := replies[min(n, len(replies)-1)]
		n++
		return r
	}
}

// recorder is the request log and handler shared by both fakes.
type recorder struct {
	mu      sync.Mutex
	handler Handler
	reqs    []CapturedRequest
	cache   map[string]bool // prefix hashes seen, for cache accounting
	// MinCacheTokens is the shortest prefix that is cached (the real
	// services use 1024 or more); 0 caches any prefix.
	minCache int
}

func (r *recorder) handle(c CapturedRequest) (CapturedRequest, Reply) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.Seq = len(r.reqs) + 1
	r.reqs = append(r.reqs, c)
	h := r.handler
	if h == nil {
		h = Text("ok")
	}
	return c, h(c)
}

func (r *recorder) requests() []CapturedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]CapturedRequest(nil), r.reqs...)
}

func (r *recorder) setHandler(h Handler) {
	r.mu.Lock()
	r.handler = h
	r.mu.Unlock()
}

// chunks splits s into pieces of n runes.
func chunks(s string, n int) []string {
	if n <= 0 {
		n = 4
	}
	var out []string
	for len(s) > 0 {
		i, k := 0, 0
		for i < len(s) && k < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// byteChunks splits s into pieces of n bytes, as servers split tool
// arguments (fragments need not be valid JSON or even whole runes).
func byteChunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// wait sleeps d or until the client goes away; it reports whether to go on.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func stopOf(rep Reply) string {
	if rep.StopReason != "" {
		return rep.StopReason
	}
	if len(rep.ToolCalls) > 0 {
		return llm.StopToolUse
	}
	return llm.StopEnd
}

func outputTokens(rep Reply) int {
	n := llm.Count(rep.Text)
	for _, tc := range rep.ToolCalls {
		n += llm.Count(tc.Name) + llm.Count(string(tc.Arguments)) + 3
	}
	return max(n, 1)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
