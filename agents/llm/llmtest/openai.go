package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// FakeOpenAI is an OpenAI-compatible Chat Completions server: POST
// /v1/chat/completions (also without /v1), streaming or not.
type FakeOpenAI struct{ fake }

// NewFakeOpenAI starts a fake on 127.0.0.1; Close it when done. A nil
// handler answers "ok".
func NewFakeOpenAI(h Handler) *FakeOpenAI {
	f := &FakeOpenAI{}
	f.start(h, f.serve)
	return f
}

// BaseURL is the URL to configure a client with (it ends in /v1).
func (f *FakeOpenAI) BaseURL() string { return f.URL + "/v1" }

func (f *FakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if r.Method != http.MethodPost || path != "/chat/completions" {
		openAIError(w, http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path, "")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	c, err := decodeOpenAI(raw)
	if err != nil {
		openAIError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "")
		return
	}
	c.Time, c.Method, c.Path, c.Header = time.Now(), r.Method, r.URL.Path, r.Header.Clone()
	c, rep := f.rec.handle(c)
	if !wait(r, rep.Delay) {
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		openAIError(w, rep.Status, rep.Message, rep.RetryAfter)
		return
	}
	model := rep.Model
	if model == "" {
		model = c.Model
	}
	usage := f.usage(c, rep)
	id := fmt.Sprintf("chatcmpl-fake%d", c.Seq)
	calls := make([]map[string]any, len(rep.ToolCalls))
	for i, tc := range rep.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_fake%d_%d", c.Seq, i)
		}
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		calls[i] = map[string]any{"id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": args}}
	}
	if !c.Stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if rep.Text != "" {
			msg["content"] = rep.Text
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
			"system_fingerprint": "fp_fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil,
				"finish_reason": openAIFinish(stopOf(rep))}},
			"usage": usage,
		})
		return
	}
	f.stream(w, r, c, rep, id, model, calls, usage)
}

func (f *FakeOpenAI) stream(w http.ResponseWriter, r *http.Request, c CapturedRequest, rep Reply,
	id, model string, calls []map[string]any, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := time.Now().Unix()
	first := true
	send := func(choices []any, u any) bool {
		if !first && !wait(r, rep.ChunkDelay) {
			return false
		}
		first = false
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk",
			"created": created, "model": model, "system_fingerprint": "fp_fake",
			"choices": choices, "usage": u})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
		return true
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}
	if !send(choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil) {
		return
	}
	for _, piece := range chunks(rep.Text, rep.ChunkSize) {
		if !send(choice(map[string]any{"content": piece}, nil), nil) {
			return
		}
		if rep.CutOff {
			panic(http.ErrAbortHandler)
		}
	}
	for i, tc := range calls {
		fn := tc["function"].(map[string]any)
		head := map[string]any{"index": i, "id": tc["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}
		if !send(choice(map[string]any{"tool_calls": []any{head}}, nil), nil) {
			return
		}
		for _, frag := range byteChunks(fn["arguments"].(string), 7) {
			part := map[string]any{"index": i, "function": map[string]any{"arguments": frag}}
			if !send(choice(map[string]any{"tool_calls": []any{part}}, nil), nil) {
				return
			}
		}
	}
	if !send(choice(map[string]any{}, openAIFinish(stopOf(rep))), nil) {
		return
	}
	if c.IncludeUsage && !send([]any{}, usage) {
		return
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
}

// usage computes prompt tokens with the tokenizer and cached tokens as
// OpenAI's automatic prefix caching would report them.
func (f *FakeOpenAI) usage(c CapturedRequest, rep Reply) map[string]any {
	var segs []segment
	if len(c.Tools) > 0 {
		var b bytes.Buffer
		n := 0
		for _, t := range c.Tools {
			b.WriteString(t.Name + "\x00" + t.Description + "\x00")
			b.Write(t.Parameters)
			n += toolTokens(t)
		}
		segs = append(segs, segment{key: b.String(), tokens: n})
	}
	if c.System != "" {
		segs = append(segs, segment{key: "system\x00" + c.System, tokens: llm.Count(c.System) + 3})
	}
	for _, m := range c.Messages {
		segs = append(segs, messageSegment(m))
	}
	read, _ := f.rec.cacheUsage(c.Model, segs, false)
	u := llm.Usage{CachedInputTokens: read, OutputTokens: outputTokens(rep)}
	for _, s := range segs {
		u.InputTokens += s.tokens
	}
	if rep.Usage != nil {
		u = *rep.Usage
	}
	return map[string]any{
		"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens,
		"total_tokens": u.InputTokens + u.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedInputTokens,
			"cache_write_tokens": u.CacheWriteTokens, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

func toolTokens(t CapturedTool) int {
	return llm.Count(t.Name) + llm.Count(t.Description) + llm.Count(string(t.Parameters)) + 8
}

func messageSegment(m CapturedMessage) segment {
	var b strings.Builder
	b.WriteString(m.Role + "\x00" + m.ToolCallID + "\x00" + strconv.FormatBool(m.IsError) + "\x00" + m.Content)
	n := llm.Count(m.Content) + 3
	for _, tc := range m.ToolCalls {
		b.WriteString("\x00" + tc.ID + "\x00" + tc.Name + "\x00" + string(tc.Arguments))
		n += llm.Count(tc.Name) + llm.Count(string(tc.Arguments)) + 3
	}
	return segment{key: b.String(), tokens: n}
}

func openAIFinish(stop string) string {
	switch stop {
	case llm.StopToolUse:
		return "tool_calls"
	case llm.StopMaxTokens:
		return "length"
	}
	return "stop"
}

// openAIError writes an error in OpenAI's format.
func openAIError(w http.ResponseWriter, status int, msg, retryAfter string) {
	typ, code := "invalid_request_error", any(nil)
	switch {
	case status == http.StatusUnauthorized:
		code = "invalid_api_key"
	case status == http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": code}})
}

// decodeOpenAI decodes a Chat Completions request body.
func decodeOpenAI(raw []byte) (CapturedRequest, error) {
	var body struct {
		Model               string   `json:"model"`
		Stream              bool     `json:"stream"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
		Temperature         *float64 `json:"temperature"`
		StreamOptions       struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	c := CapturedRequest{Raw: raw}
	if err := json.Unmarshal(raw, &body); err != nil {
		return c, err
	}
	_ = json.Unmarshal(raw, &c.Body)
	c.Model, c.Stream, c.Temperature = body.Model, body.Stream, body.Temperature
	c.IncludeUsage = body.StreamOptions.IncludeUsage
	c.MaxTokens = max(body.MaxTokens, body.MaxCompletionTokens)
	var system []string
	for _, m := range body.Messages {
		text := contentText(m.Content)
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, text)
			continue
		}
		cm := CapturedMessage{Role: m.Role, Content: text, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name,
				Arguments: json.RawMessage(tc.Function.Arguments)})
		}
		c.Messages = append(c.Messages, cm)
	}
	c.System = strings.Join(system, "\n\n")
	for _, t := range body.Tools {
		c.Tools = append(c.Tools, CapturedTool{Name: t.Function.Name,
			Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return c, nil
}

// contentText reads message content that is a string or an array of text
// parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []map[string]any
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if t := str(p["text"]); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}
