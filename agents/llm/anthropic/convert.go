package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// body maps an llm.Request to a Messages API request body with two cache
// breakpoints: the last tool and the system block. The API caches the
// prefix in the order tools → system → messages, so together they cover the
// whole stable prefix, and a request without tools still caches the system.
func (p *Provider) body(req llm.Request) (model string, body []byte, err error) {
	model = req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		return "", nil, invalid("no model configured")
	}
	mr := messagesRequest{Model: model, MaxTokens: p.maxTokens(req.MaxTokens),
		Temperature: req.Temperature, Stream: true}
	if req.System != "" {
		mr.System = []block{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	for i, t := range req.Tools {
		schema, err := inputSchema(t.Parameters)
		if err != nil {
			return "", nil, invalid("tool %q: parameters: %v", t.Name, err)
		}
		tool := toolDef{Name: t.Name, Description: t.Description, InputSchema: schema}
		if i == len(req.Tools)-1 {
			tool.CacheControl = ephemeral
		}
		mr.Tools = append(mr.Tools, tool)
	}
	if mr.Messages, err = messages(req.Messages); err != nil {
		return "", nil, err
	}
	if body, err = json.Marshal(mr); err != nil {
		return "", nil, invalid("encode request: %v", err)
	}
	return model, body, nil
}

func (p *Provider) maxTokens(n int) int {
	if n <= 0 {
		n = p.cfg.MaxTokens
	}
	if n <= 0 {
		n = DefaultMaxTokens
	}
	return n
}

// messages maps the conversation. Tool results become tool_result blocks in
// a user turn, and consecutive turns of one role are merged, as the API
// wants results to several calls in the one user turn that follows them.
func messages(in []llm.Message) ([]turn, error) {
	out := []turn{}
	add := func(role string, blocks ...block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, turn{Role: role, Content: blocks})
	}
	for i, m := range in {
		switch m.Role {
		case llm.RoleUser:
			if m.Content != "" { // the API rejects empty text blocks
				add("user", block{Type: "text", Text: m.Content})
			}
		case llm.RoleAssistant:
			blocks, err := assistant(m)
			if err != nil {
				return nil, invalid("message %d: %v", i, err)
			}
			add("assistant", blocks...)
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return nil, invalid("message %d: tool result without ToolCallID", i)
			}
			r := block{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
			if m.Content != "" {
				r.Content = []block{{Type: "text", Text: m.Content}}
			}
			add("user", r)
		default:
			return nil, invalid("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

func assistant(m llm.Message) ([]block, error) {
	var blocks []block
	if m.Content != "" {
		blocks = append(blocks, block{Type: "text", Text: m.Content})
	}
	for _, tc := range m.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if !json.Valid(args) {
			return nil, fmt.Errorf("tool call %q: arguments are not JSON", tc.ID)
		}
		blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: args})
	}
	return blocks, nil
}

// inputSchema splits the schema into its top-level keys, values kept as
// raw JSON so the bytes sent are the bytes given; "type" is always
// "object", as the API requires.
func inputSchema(raw json.RawMessage) (map[string]json.RawMessage, error) {
	s := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil || s == nil {
			return nil, fmt.Errorf("not a JSON object")
		}
	}
	s["type"] = json.RawMessage(`"object"`)
	if _, ok := s["properties"]; !ok && len(raw) == 0 {
		s["properties"] = json.RawMessage("{}")
	}
	return s, nil
}

func invalid(format string, args ...any) error {
	return bullpen.Errorf(bullpen.EINVALID, "anthropic: "+format, args...)
}
