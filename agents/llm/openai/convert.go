package openai

import (
	"encoding/json"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// body maps an llm.Request to a Chat Completions request body. The system
// prompt is the first message and tools keep their order, so the prefix a
// server can cache is byte-stable.
func (p *Provider) body(req llm.Request) (model string, body []byte, err error) {
	model = req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		return "", nil, errInvalid(p, "no model configured")
	}
	cr := chatRequest{Model: model, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true},
		Temperature: req.Temperature, Messages: make([]chatMessage, 0, len(req.Messages)+1)}
	if req.System != "" {
		cr.Messages = append(cr.Messages, chatMessage{Role: "system", Content: &req.System})
	}
	for i, m := range req.Messages {
		msg, err := message(m)
		if err != nil {
			return "", nil, errInvalid(p, "message %d: %v", i, err)
		}
		cr.Messages = append(cr.Messages, msg)
	}
	for _, t := range req.Tools {
		schema, err := schemaObject(t.Parameters)
		if err != nil {
			return "", nil, errInvalid(p, "tool %q: parameters: %v", t.Name, err)
		}
		cr.Tools = append(cr.Tools, chatTool{Type: "function",
			Function: chatDefinition{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	p.maxTokens(&cr, req.MaxTokens)
	body, err = json.Marshal(cr)
	if err != nil {
		return "", nil, errInvalid(p, "encode request: %v", err)
	}
	return model, body, nil
}

// maxTokens sets the output cap under the name the server reads.
func (p *Provider) maxTokens(cr *chatRequest, n int) {
	if n <= 0 {
		return
	}
	useMCT := p.cfg.BaseURL == ""
	if p.cfg.MaxCompletionTokens != nil {
		useMCT = *p.cfg.MaxCompletionTokens
	}
	if useMCT {
		cr.MaxCompletionTokens = &n
	} else {
		cr.MaxTokens = &n
	}
}

func message(m llm.Message) (chatMessage, error) {
	switch m.Role {
	case llm.RoleUser:
		return chatMessage{Role: "user", Content: &m.Content}, nil
	case llm.RoleAssistant:
		a := chatMessage{Role: "assistant"}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content = &m.Content
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, chatToolCall{ID: tc.ID, Type: "function",
				Function: chatFunction{Name: tc.Name, Arguments: string(arguments(tc.Arguments))}})
		}
		return a, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return chatMessage{}, errorString("tool result without ToolCallID")
		}
		content := m.Content
		if m.IsError {
			// Chat Completions has no error flag on tool results.
			content = "Error: " + content
		}
		return chatMessage{Role: "tool", Content: &content, ToolCallID: m.ToolCallID}, nil
	}
	return chatMessage{}, errorString("unknown role " + string(m.Role))
}

// arguments is the call's arguments as sent: "{}" when empty. Chat
// Completions carries them as a string, so a model's malformed JSON goes
// back to it as it came.
func arguments(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// schemaObject splits a JSON Schema into its top-level keys. Nested values
// stay raw JSON, so their bytes (and key order) are sent as given; top-level
// keys are sorted by encoding/json, which is just as stable.
func schemaObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if len(raw) == 0 {
		return map[string]json.RawMessage{"type": json.RawMessage(`"object"`), "properties": json.RawMessage("{}")}, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, errorString("not a JSON object")
	}
	return top, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }
