package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// FakeAnthropic is an Anthropic Messages API server: POST /v1/messages,
// streaming or not, and POST /v1/messages/count_tokens. It does prompt-cache
// accounting like the real service: a prefix ending at a cache_control
// breakpoint is written to the cache, and a later request with the same
// prefix reports it as cache_read_input_tokens.
type FakeAnthropic struct{ fake }

// NewFakeAnthropic starts a fake on 127.0.0.1; Close it when done. A nil
// handler answers "ok".
func NewFakeAnthropic(h Handler) *FakeAnthropic {
	f := &FakeAnthropic{}
	f.start(h, f.serve)
	return f
}

// BaseURL is the URL to configure a client with (no /v1; the SDK adds it).
func (f *FakeAnthropic) BaseURL() string { return f.URL }

// Requests returns every Messages request received so far, in order.
func (f *FakeAnthropic) Requests() []CapturedRequest { return f.rec.requests() }

func (f *FakeAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("request-id", fmt.Sprintf("req_fake%d", time.Now().UnixNano()))
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/messages" && r.URL.Path != "/v1/messages/count_tokens") {
		anthropicError(w, http.StatusNotFound, "Not found: "+r.URL.Path, "")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	c, segs, err := decodeAnthropic(raw)
	if err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid request body: "+err.Error(), "")
		return
	}
	if r.URL.Path == "/v1/messages/count_tokens" {
		n := 0
		for _, s := range segs {
			n += s.tokens
		}
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": n})
		return
	}
	c.InputTokens = segTokens(segs)
	c.Time, c.Method, c.Path, c.Header = time.Now(), r.Method, r.URL.Path, r.Header.Clone()
	c, rep := f.rec.handle(c)
	if !wait(r, rep.Delay) {
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		anthropicError(w, rep.Status, rep.Message, rep.RetryAfter)
		return
	}
	model := rep.Model
	if model == "" {
		model = c.Model
	}
	usage := f.usage(c, segs, rep)
	blocks := contentBlocks(c.Seq, rep)
	msg := map[string]any{"id": fmt.Sprintf("msg_fake%d", c.Seq), "type": "message",
		"role": "assistant", "model": model, "content": blocks,
		"stop_reason": anthropicStop(stopOf(rep)), "stop_sequence": nil, "usage": usage}
	if !c.Stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	f.stream(w, r, rep, msg, blocks, usage)
}

func (f *FakeAnthropic) stream(w http.ResponseWriter, r *http.Request, rep Reply,
	msg map[string]any, blocks []map[string]any, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	first := true
	send := func(event string, data map[string]any) bool {
		if !first && !wait(r, rep.ChunkDelay) {
			return false
		}
		first = false
		data["type"] = event
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		w.(http.Flusher).Flush()
		return true
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	startUsage := map[string]any{}
	for k, v := range usage {
		startUsage[k] = v
	}
	startUsage["output_tokens"] = 1
	start["content"], start["stop_reason"], start["usage"] = []any{}, nil, startUsage
	if !send("message_start", map[string]any{"message": start}) || !send("ping", map[string]any{}) {
		return
	}
	for i, b := range blocks {
		var head map[string]any
		var deltas []map[string]any
		if b["type"] == "text" {
			head = map[string]any{"type": "text", "text": ""}
			for _, piece := range chunks(rep.Text, rep.ChunkSize) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": piece})
			}
		} else {
			head = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			args, _ := json.Marshal(b["input"])
			for _, frag := range byteChunks(string(args), 7) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": frag})
			}
		}
		if !send("content_block_start", map[string]any{"index": i, "content_block": head}) {
			return
		}
		for _, d := range deltas {
			if !send("content_block_delta", map[string]any{"index": i, "delta": d}) {
				return
			}
			if rep.CutOff {
				panic(http.ErrAbortHandler)
			}
		}
		if !send("content_block_stop", map[string]any{"index": i}) {
			return
		}
	}
	if !send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": usage}) {
		return
	}
	send("message_stop", map[string]any{})
}

func contentBlocks(seq int, rep Reply) []map[string]any {
	var blocks []map[string]any
	if rep.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": rep.Text})
	}
	for i, tc := range rep.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("toolu_fake%d_%d", seq, i)
		}
		var input any = map[string]any{}
		if len(tc.Arguments) > 0 {
			input = tc.Arguments
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
	}
	return blocks
}

// usage reports tokens the way the Messages API does: input_tokens is only
// the part after the last cache breakpoint, beside the cache read and
// write counts.
func (f *FakeAnthropic) usage(c CapturedRequest, segs []segment, rep Reply) map[string]any {
	read, write := f.rec.cacheUsage(c.Model, segs, true)
	total := 0
	for _, s := range segs {
		total += s.tokens
	}
	u := llm.Usage{InputTokens: total, CachedInputTokens: read, CacheWriteTokens: write,
		OutputTokens: outputTokens(rep)}
	if rep.Usage != nil {
		u = *rep.Usage
	}
	return map[string]any{
		"input_tokens":                max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0),
		"cache_read_input_tokens":     u.CachedInputTokens,
		"cache_creation_input_tokens": u.CacheWriteTokens,
		"output_tokens":               u.OutputTokens,
	}
}

func anthropicStop(stop string) string {
	switch stop {
	case llm.StopToolUse:
		return "tool_use"
	case llm.StopMaxTokens:
		return "max_tokens"
	}
	return "end_turn"
}

// anthropicError writes an error in Anthropic's format.
func anthropicError(w http.ResponseWriter, status int, msg, retryAfter string) {
	typ := "api_error"
	switch status {
	case 400:
		typ = "invalid_request_error"
	case 401:
		typ = "authentication_error"
	case 403:
		typ = "permission_error"
	case 404:
		typ = "not_found_error"
	case 413:
		typ = "request_too_large"
	case 429:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	if msg == "" {
		msg = http.StatusText(status)
		if status == 529 {
			msg = "Overloaded"
		}
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, status, map[string]any{"type": "error",
		"error": map[string]any{"type": typ, "message": msg}, "request_id": w.Header().Get("request-id")})
}

type anthropicBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	CacheControl *struct {
		Type string `json:"type"`
	} `json:"cache_control"`
}

func (b anthropicBlock) cacheControl() string {
	if b.CacheControl == nil {
		return ""
	}
	return b.CacheControl.Type
}

// blocks reads content that is a string or an array of blocks.
func blocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var out []anthropicBlock
	_ = json.Unmarshal(raw, &out)
	return out
}

// decodeAnthropic decodes a Messages request body and cuts it into
// cacheable segments in prompt order: tools, system, message blocks.
func decodeAnthropic(raw []byte) (CapturedRequest, []segment, error) {
	var body struct {
		Model       string          `json:"model"`
		Stream      bool            `json:"stream"`
		MaxTokens   int             `json:"max_tokens"`
		Temperature *float64        `json:"temperature"`
		System      json.RawMessage `json:"system"`
		Tools       []struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl *struct {
				Type string `json:"type"`
			} `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	c := CapturedRequest{Raw: raw}
	if err := json.Unmarshal(raw, &body); err != nil {
		return c, nil, err
	}
	_ = json.Unmarshal(raw, &c.Body)
	c.Model, c.Stream, c.MaxTokens, c.Temperature = body.Model, body.Stream, body.MaxTokens, body.Temperature
	var segs []segment
	for _, t := range body.Tools {
		ct := CapturedTool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}
		if t.CacheControl != nil {
			ct.CacheControl = t.CacheControl.Type
		}
		c.Tools = append(c.Tools, ct)
		segs = append(segs, segment{key: "tool\x00" + t.Name + "\x00" + t.Description + "\x00" + string(t.InputSchema),
			tokens: toolTokens(ct), breakpoint: ct.CacheControl != ""})
	}
	var system []string
	if len(body.System) > 0 && string(body.System) != "null" {
		for _, b := range blocks(body.System) {
			system = append(system, b.Text)
			c.SystemCacheControl = append(c.SystemCacheControl, b.cacheControl())
			segs = append(segs, segment{key: "system\x00" + b.Text, tokens: llm.Count(b.Text),
				breakpoint: b.cacheControl() != ""})
		}
	}
	c.System = strings.Join(system, "\n\n")
	for _, m := range body.Messages {
		ms, ss := anthropicMessage(m.Role, blocks(m.Content))
		c.Messages = append(c.Messages, ms...)
		segs = append(segs, ss...)
	}
	return c, segs, nil
}

// anthropicMessage turns one API message into captured messages (a
// tool_result block becomes a "tool" message) and cacheable segments.
func anthropicMessage(role string, bs []anthropicBlock) ([]CapturedMessage, []segment) {
	var out []CapturedMessage
	var segs []segment
	cur := CapturedMessage{Role: role}
	var text []string
	for _, b := range bs {
		key := role + "\x00" + b.Type + "\x00"
		n := 3
		switch b.Type {
		case "text":
			text = append(text, b.Text)
			key += b.Text
			n += llm.Count(b.Text)
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			cur.ToolCalls = append(cur.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
			key += b.ID + "\x00" + b.Name + "\x00" + string(args)
			n += llm.Count(b.Name) + llm.Count(string(args))
		case "tool_result":
			var parts []string
			for _, rb := range blocks(b.Content) {
				parts = append(parts, rb.Text)
			}
			content := strings.Join(parts, "\n")
			out = append(out, CapturedMessage{Role: "tool", Content: content, ToolCallID: b.ToolUseID,
				IsError: b.IsError, CacheControl: b.cacheControl()})
			key += fmt.Sprintf("%s\x00%v\x00%s", b.ToolUseID, b.IsError, content)
			n += llm.Count(content)
		}
		if cc := b.cacheControl(); cc != "" && b.Type != "tool_result" {
			cur.CacheControl = cc
		}
		segs = append(segs, segment{key: key, tokens: n, breakpoint: b.cacheControl() != ""})
	}
	cur.Content = strings.Join(text, "\n")
	if cur.Content != "" || len(cur.ToolCalls) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out, segs
}
