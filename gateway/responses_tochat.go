package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// A Responses request for a provider that serves only Chat Completions is
// translated: instructions and input items become messages, function and
// custom tools become Chat function tools (a custom tool takes one string
// argument, "input"), and the output limit, sampling and format settings
// carry over. What Chat cannot express (built-in tools such as
// web_search, item references, files) is refused with a 400 naming it.

// chatMessage is one Chat Completions message.
type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// customSchema is the parameters of a custom tool offered as a function.
var customSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"The tool's whole input, as free text."}},"required":["input"],"additionalProperties":false}`)

// chatBody translates req for a Chat Completions provider. outputField is
// where max_output_tokens goes; custom returns the names of the custom
// tools, whose calls come back as custom_tool_call items.
func (req *responsesRequest) chatBody(model, outputField string) (body []byte, custom map[string]bool, err error) {
	out := map[string]any{"model": model}
	var msgs []chatMessage
	if req.Instructions != nil && *req.Instructions != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: *req.Instructions})
	}
	for i, raw := range req.items {
		if msgs, err = appendChatItem(msgs, raw); err != nil {
			return nil, nil, bullpen.Errorf(bullpen.EINVALID, "input[%d]: %s", i, bullpen.ErrorMessage(err))
		}
	}
	if len(msgs) == 0 {
		return nil, nil, bullpen.Errorf(bullpen.EINVALID, "input: the request has no input")
	}
	out["messages"] = msgs
	custom = map[string]bool{}
	if len(req.Tools) > 0 {
		tools := make([]any, 0, len(req.Tools))
		for i, raw := range req.Tools {
			t, isCustom, name, err := chatTool(raw)
			if err != nil {
				return nil, nil, bullpen.Errorf(bullpen.EINVALID, "tools[%d]: %s", i, bullpen.ErrorMessage(err))
			}
			if isCustom {
				custom[name] = true
			}
			tools = append(tools, t)
		}
		out["tools"] = tools
	}
	if len(bytes.TrimSpace(req.ToolChoice)) > 0 && string(bytes.TrimSpace(req.ToolChoice)) != "null" {
		tc, err := chatToolChoice(req.ToolChoice)
		if err != nil {
			return nil, nil, err
		}
		out["tool_choice"] = tc
	}
	if req.MaxOutput != nil {
		out[outputField] = *req.MaxOutput
	}
	if req.Temperature != nil {
		out["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		out["top_p"] = *req.TopP
	}
	if req.Parallel != nil && len(req.Tools) > 0 {
		out["parallel_tool_calls"] = *req.Parallel
	}
	if req.User != "" {
		out["user"] = req.User
	}
	if req.Reasoning != nil && req.Reasoning.Effort != "" {
		out["reasoning_effort"] = req.Reasoning.Effort
	}
	if req.Text != nil && len(req.Text.Format) > 0 {
		rf, err := chatResponseFormat(req.Text.Format)
		if err != nil {
			return nil, nil, err
		}
		if rf != nil {
			out["response_format"] = rf
		}
	}
	if req.Stream {
		out["stream"] = true
		// Without it a Chat stream carries no usage: the answer's usage
		// (and so the turn's charge) would be an estimate.
		out["stream_options"] = map[string]any{"include_usage": true}
	}
	body, err = json.Marshal(out)
	return body, custom, err
}

// appendChatItem adds one input item to the messages.
func appendChatItem(msgs []chatMessage, raw json.RawMessage) ([]chatMessage, error) {
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "%v", err)
	}
	switch it.kind() {
	case "message":
		return appendChatMessage(msgs, it)
	case "function_call", "custom_tool_call":
		if it.CallID == "" || it.Name == "" {
			return nil, bullpen.Errorf(bullpen.EINVALID, "a %s needs call_id and name", it.kind())
		}
		tc := chatToolCall{ID: it.CallID, Type: "function"}
		tc.Function.Name, tc.Function.Arguments = it.Name, it.Arguments
		if it.kind() == "custom_tool_call" {
			b, _ := json.Marshal(map[string]string{"input": it.Input})
			tc.Function.Arguments = string(b)
		}
		if tc.Function.Arguments == "" {
			tc.Function.Arguments = "{}"
		}
		// Calls that follow an assistant message (or each other) join it:
		// Chat carries them on the assistant's message.
		if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" {
			msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, tc)
			return msgs, nil
		}
		return append(msgs, chatMessage{Role: "assistant", Content: nil, ToolCalls: []chatToolCall{tc}}), nil
	case "function_call_output", "custom_tool_call_output":
		if it.CallID == "" {
			return nil, bullpen.Errorf(bullpen.EINVALID, "a %s needs call_id", it.kind())
		}
		text, _, err := contentText(it.Output, false)
		if err != nil {
			return nil, err
		}
		return append(msgs, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: text}), nil
	case "reasoning":
		return msgs, nil // Chat has no way to send reasoning back
	}
	return nil, bullpen.Errorf(bullpen.EINVALID, "items of type %q are not served by this provider, which speaks Chat Completions only", it.kind())
}

func appendChatMessage(msgs []chatMessage, it item) ([]chatMessage, error) {
	role := it.Role
	switch role {
	case "developer", "system":
		role = "system"
	case "user", "assistant":
	default:
		return nil, bullpen.Errorf(bullpen.EINVALID, "unknown message role %q", it.Role)
	}
	text, parts, err := contentText(it.Content, role == "user")
	if err != nil {
		return nil, err
	}
	m := chatMessage{Role: role, Content: text}
	if parts != nil {
		m.Content = parts
	}
	return append(msgs, m), nil
}

// contentText reads a message's (or a tool output's) content: a string,
// or an array of parts. Text parts are joined; images are kept as Chat
// image parts when allowed (user messages), and then parts is returned.
func contentText(raw json.RawMessage, images bool) (string, []any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	var ps []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Refusal  string `json:"refusal"`
		ImageURL string `json:"image_url"`
		Detail   string `json:"detail"`
	}
	if err := json.Unmarshal(raw, &ps); err != nil {
		return "", nil, bullpen.Errorf(bullpen.EINVALID, "content must be a string or an array of parts")
	}
	var text strings.Builder
	var parts []any
	hasImage := false
	for _, p := range ps {
		switch p.Type {
		case "input_text", "output_text", "text", "summary_text", "reasoning_text":
			text.WriteString(p.Text)
			parts = append(parts, map[string]any{"type": "text", "text": p.Text})
		case "refusal":
			text.WriteString(p.Refusal)
			parts = append(parts, map[string]any{"type": "text", "text": p.Refusal})
		case "input_image":
			if !images || p.ImageURL == "" {
				return "", nil, bullpen.Errorf(bullpen.EINVALID, "input_image is served only in user messages, with an image_url")
			}
			img := map[string]any{"url": p.ImageURL}
			if p.Detail != "" {
				img["detail"] = p.Detail
			}
			parts, hasImage = append(parts, map[string]any{"type": "image_url", "image_url": img}), true
		default:
			return "", nil, bullpen.Errorf(bullpen.EINVALID, "content parts of type %q are not served by this provider, which speaks Chat Completions only", p.Type)
		}
	}
	if hasImage {
		return "", parts, nil
	}
	return text.String(), nil, nil
}

// chatTool translates one Responses tool.
func chatTool(raw json.RawMessage) (tool any, custom bool, name string, err error) {
	var t struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
		Format      *struct {
			Type       string `json:"type"`
			Syntax     string `json:"syntax"`
			Definition string `json:"definition"`
		} `json:"format"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, false, "", bullpen.Errorf(bullpen.EINVALID, "not a tool object")
	}
	if t.Name == "" && (t.Type == "function" || t.Type == "custom") {
		return nil, false, "", bullpen.Errorf(bullpen.EINVALID, "a %s tool needs a name", t.Type)
	}
	fn := map[string]any{"name": t.Name}
	if t.Description != "" {
		fn["description"] = t.Description
	}
	switch t.Type {
	case "function":
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			fn["parameters"] = t.Parameters
		}
		if t.Strict != nil {
			fn["strict"] = *t.Strict
		}
	case "custom":
		fn["parameters"] = customSchema
		if t.Format != nil && t.Format.Type == "grammar" {
			fn["description"] = strings.TrimSpace(t.Description + "\n\nThe input must follow this " + t.Format.Syntax + " grammar:\n" + t.Format.Definition)
		}
	default:
		return nil, false, "", bullpen.Errorf(bullpen.EINVALID, "tools of type %q are not served by this provider, which speaks Chat Completions only", t.Type)
	}
	return map[string]any{"type": "function", "function": fn}, t.Type == "custom", t.Name, nil
}

// chatToolChoice translates tool_choice.
func chatToolChoice(raw json.RawMessage) (any, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return nil, bullpen.Errorf(bullpen.EINVALID, "tool_choice %q is not auto, none or required", s)
	}
	var o struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &o) != nil || (o.Type != "function" && o.Type != "custom") || o.Name == "" {
		return nil, bullpen.Errorf(bullpen.EINVALID, "tool_choice: only a function or custom tool by name is served by this provider, which speaks Chat Completions only")
	}
	return map[string]any{"type": "function", "function": map[string]string{"name": o.Name}}, nil
}

// chatResponseFormat translates text.format; nil for plain text.
func chatResponseFormat(raw json.RawMessage) (any, error) {
	var f struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
		Description string          `json:"description"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil, bullpen.Errorf(bullpen.EINVALID, "text.format must be an object")
	}
	switch f.Type {
	case "", "text":
		return nil, nil
	case "json_object":
		return map[string]string{"type": "json_object"}, nil
	case "json_schema":
		js := map[string]any{"name": f.Name, "schema": f.Schema}
		if f.Strict != nil {
			js["strict"] = *f.Strict
		}
		if f.Description != "" {
			js["description"] = f.Description
		}
		return map[string]any{"type": "json_schema", "json_schema": js}, nil
	}
	return nil, bullpen.Errorf(bullpen.EINVALID, "text.format.type %q is not text, json_object or json_schema", f.Type)
}
