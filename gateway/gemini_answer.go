package gateway

import (
	"bytes"
	"encoding/json"
	"sort"
)

// geminiAnswer builds a Gemini GenerateContentResponse from a provider's
// answer, given to it in Chat terms (it is an answerSink): text becomes
// text parts, reasoning thought parts, tool calls functionCall parts
// (with the provider's call id, which Gemini CLI sends back on its
// functionResponse), the finish reason Gemini's, and the usage
// usageMetadata, exactly as the provider reported it. Streaming, each
// text delta is a chunk of its own as it arrives; the function calls,
// the finish reason and the usage come in the last chunk.
type geminiAnswer struct {
	id, model string
	// emit writes a chunk to a streaming client; nil when the client
	// wants one whole response.
	emit   func(chunk map[string]any)
	parts  []map[string]any // a whole response's text and thought parts
	calls  map[int]*geminiCall
	finish string
	usage  *chatWireUsage
}

type geminiCall struct {
	order    int // when it was first seen
	id, name string
	args     []byte
}

func newGeminiAnswer(model string) *geminiAnswer {
	return &geminiAnswer{id: newID("bpr"), model: model, calls: map[int]*geminiCall{}}
}

func (a *geminiAnswer) setFinish(reason string)   { a.finish = reason }
func (a *geminiAnswer) setUsage(u *chatWireUsage) { a.usage = u }

func (a *geminiAnswer) add(d chatDelta) {
	var parts []map[string]any
	for _, r := range []*string{d.ReasoningContent, d.Reasoning} {
		if r != nil && *r != "" {
			parts = append(parts, map[string]any{"text": *r, "thought": true})
			break
		}
	}
	for _, t := range []*string{d.Content, d.Refusal} {
		if t != nil && *t != "" {
			parts = append(parts, map[string]any{"text": *t})
		}
	}
	for pos, tc := range d.ToolCalls {
		a.callDelta(pos, tc)
	}
	if len(parts) == 0 {
		return
	}
	if a.emit != nil {
		a.emit(a.chunk(parts, false))
		return
	}
	for _, p := range parts {
		a.appendPart(p)
	}
}

// appendPart adds a part to a whole response, joining it to the last
// one when both are text of the same kind.
func (a *geminiAnswer) appendPart(p map[string]any) {
	if n := len(a.parts); n > 0 {
		last := a.parts[n-1]
		if last["thought"] == p["thought"] {
			last["text"] = last["text"].(string) + p["text"].(string)
			return
		}
	}
	a.parts = append(a.parts, p)
}

func (a *geminiAnswer) callDelta(pos int, tc chatToolDelta) {
	idx := pos
	if tc.Index != nil {
		idx = *tc.Index
	}
	c := a.calls[idx]
	if c == nil {
		c = &geminiCall{order: len(a.calls)}
		a.calls[idx] = c
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	c.name += tc.Function.Name
	c.args = append(c.args, tc.Function.Arguments...)
}

// chunk is a response object holding parts; a final one has the finish
// reason and the usage.
func (a *geminiAnswer) chunk(parts []map[string]any, final bool) map[string]any {
	cand := map[string]any{"index": 0}
	if len(parts) > 0 {
		cand["content"] = map[string]any{"role": "model", "parts": parts}
	}
	o := map[string]any{"candidates": []any{cand}, "modelVersion": a.model, "responseId": a.id}
	if !final {
		return o
	}
	cand["finishReason"] = a.finishReason()
	if a.usage != nil {
		o["usageMetadata"] = geminiUsage(a.usage)
	}
	return o
}

// final is the last chunk (streaming) or the whole response: the
// function calls in the order the provider made them, after the text.
func (a *geminiAnswer) final() map[string]any {
	calls := make([]*geminiCall, 0, len(a.calls))
	for _, c := range a.calls {
		calls = append(calls, c)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].order < calls[j].order })
	parts := a.parts
	for _, c := range calls {
		args := bytes.TrimSpace(c.args)
		if len(args) == 0 {
			args = []byte("{}")
		}
		var obj map[string]json.RawMessage
		if c.name == "" || json.Unmarshal(args, &obj) != nil || obj == nil {
			a.finish = "malformed" // a call cut short, or arguments that are not an object
			continue
		}
		fc := map[string]any{"name": c.name, "args": json.RawMessage(args)}
		if c.id != "" {
			fc["id"] = c.id
		}
		parts = append(parts, map[string]any{"functionCall": fc})
	}
	return a.chunk(parts, true)
}

// finishReason is the Chat finish reason in Gemini's words.
func (a *geminiAnswer) finishReason() string {
	switch a.finish {
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	case "malformed":
		return "MALFORMED_FUNCTION_CALL"
	}
	return "STOP" // stop, tool_calls, and a provider that said none
}

// geminiUsage is the provider's usage as usageMetadata: the prompt with
// its cached part, the output without the reasoning Chat counts in it
// (Gemini counts thoughts apart), and their total.
func geminiUsage(u *chatWireUsage) map[string]any {
	reasoning, cached := 0, 0
	if u.CompletionDetails != nil {
		reasoning = u.CompletionDetails.ReasoningTokens
	}
	if u.PromptDetails != nil {
		cached = u.PromptDetails.CachedTokens
	}
	m := map[string]any{"promptTokenCount": u.PromptTokens, "candidatesTokenCount": u.CompletionTokens - reasoning,
		"totalTokenCount": u.PromptTokens + u.CompletionTokens}
	if reasoning > 0 {
		m["thoughtsTokenCount"] = reasoning
	}
	if cached > 0 {
		m["cachedContentTokenCount"] = cached
	}
	return m
}
