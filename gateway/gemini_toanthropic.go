package gateway

import (
	"encoding/json"
	"strings"
)

// A Gemini request for an Anthropic provider: the system instruction is
// the system prompt, contents the messages (consecutive ones of a role
// joined; function results tool_result blocks first in their user
// message, function calls tool_use blocks), function declarations tools
// with their schema as input_schema, toolConfig tool_choice, and
// generationConfig max_tokens, temperature, top_k and stop_sequences.
// topP goes only when temperature does not (recent Claude models refuse
// both, and Gemini CLI sends both); a JSON answer (responseMimeType
// application/json) is asked for in the system prompt, with its schema,
// as the Messages API has no such setting; thinkingConfig is dropped.

// jsonAnswerPrompt asks for a JSON answer in the system prompt.
const jsonAnswerPrompt = "Answer with one JSON value only, with no other text and no code fence."

func (req *geminiRequest) anthropicBody(model string, stream bool) ([]byte, error) {
	msgs, err := req.conversation()
	if err != nil {
		return nil, err
	}
	sys, err := req.systemText()
	if err != nil {
		return nil, err
	}
	var am []map[string]any
	for _, m := range msgs {
		blocks := anthropicBlocks(m)
		if n := len(am); n > 0 && am[n-1]["role"] == m.role {
			am[n-1]["content"] = append(am[n-1]["content"].([]any), blocks...)
			continue
		}
		am = append(am, map[string]any{"role": m.role, "content": blocks})
	}
	out := map[string]any{"model": model, "messages": am}
	mode, allowed, err := req.toolMode()
	if err != nil {
		return nil, err
	}
	if funcs := req.offered(mode, allowed); len(funcs) > 0 {
		tools := make([]any, 0, len(funcs))
		for _, f := range funcs {
			t := map[string]any{"name": f.Name, "input_schema": funcSchema(f)}
			if f.Description != "" {
				t["description"] = f.Description
			}
			tools = append(tools, t)
		}
		out["tools"] = tools
		switch {
		case mode == "NONE":
			out["tool_choice"] = map[string]string{"type": "none"}
		case mode == "ANY" && len(funcs) == 1:
			out["tool_choice"] = map[string]string{"type": "tool", "name": funcs[0].Name}
		case mode == "ANY":
			out["tool_choice"] = map[string]string{"type": "any"}
		}
	}
	sys = req.anthropicConfig(out, sys)
	if sys != "" {
		out["system"] = sys
	}
	if stream {
		out["stream"] = true
	}
	return json.Marshal(out)
}

// anthropicBlocks are one message's content blocks.
func anthropicBlocks(m convMessage) []any {
	var blocks []any
	for _, r := range m.results {
		b := map[string]any{"type": "tool_result", "tool_use_id": anthropicID(r.id), "content": r.content}
		if r.isError {
			b["is_error"] = true
		}
		blocks = append(blocks, b)
	}
	for _, p := range m.parts {
		if p.mediaType != "" {
			blocks = append(blocks, map[string]any{"type": "image",
				"source": map[string]string{"type": "base64", "media_type": p.mediaType, "data": p.data}})
		} else {
			blocks = append(blocks, map[string]any{"type": "text", "text": p.text})
		}
	}
	for _, c := range m.calls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": anthropicID(c.id), "name": c.name, "input": c.args})
	}
	return blocks
}

// anthropicID is a call id as the Messages API takes it (letters,
// digits, _ and -); a call and its result map to the same one.
func anthropicID(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, id)
}

// anthropicConfig carries generationConfig over and returns the system
// prompt, with the JSON answer's instructions added.
func (req *geminiRequest) anthropicConfig(out map[string]any, sys string) string {
	gc := req.GenerationConfig
	if gc == nil {
		return sys
	}
	if gc.MaxOutputTokens != nil {
		out["max_tokens"] = *gc.MaxOutputTokens
	}
	setIf(out, "temperature", gc.Temperature)
	if gc.Temperature == nil {
		setIf(out, "top_p", gc.TopP)
	}
	if gc.TopK != nil && *gc.TopK >= 1 {
		out["top_k"] = int(*gc.TopK)
	}
	if len(gc.StopSequences) > 0 {
		out["stop_sequences"] = gc.StopSequences
	}
	if gc.ResponseMimeType != "application/json" {
		return sys
	}
	ask := jsonAnswerPrompt
	if s := gc.schema(); s != nil {
		ask += " It must match this JSON Schema:\n" + string(s)
	}
	if sys == "" {
		return ask
	}
	return sys + "\n\n" + ask
}
