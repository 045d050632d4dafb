package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// params maps an llm.Request to Messages API parameters with two cache
// breakpoints: the last tool and the system block. The API caches the
// prefix in the order tools → system → messages, so together they cover the
// whole stable prefix, and a request without tools still caches the system.
func (p *Provider) params(req llm.Request) (sdk.MessageNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		return sdk.MessageNewParams{}, invalid("no model configured")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.cfg.MaxTokens
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{
			Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam(),
		}}
	}
	for i, t := range req.Tools {
		schema, err := inputSchema(t.Parameters)
		if err != nil {
			return params, invalid("tool %q: parameters: %v", t.Name, err)
		}
		tool := sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = sdk.String(t.Description)
		}
		if i == len(req.Tools)-1 {
			tool.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	msgs, err := messages(req.Messages)
	if err != nil {
		return params, err
	}
	params.Messages = msgs
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	return params, nil
}

// messages maps the conversation. Tool results become tool_result blocks in
// a user turn, and consecutive turns of one role are merged, as the API
// wants results to several calls in the one user turn that follows them.
func messages(in []llm.Message) ([]sdk.MessageParam, error) {
	var out []sdk.MessageParam
	add := func(role sdk.MessageParamRole, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	for i, m := range in {
		switch m.Role {
		case llm.RoleUser:
			if m.Content != "" { // the API rejects empty text blocks
				add(sdk.MessageParamRoleUser, sdk.NewTextBlock(m.Content))
			}
		case llm.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, args, tc.Name))
			}
			add(sdk.MessageParamRoleAssistant, blocks...)
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return nil, invalid("message %d: tool result without ToolCallID", i)
			}
			r := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Content != "" {
				r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
			}
			if m.IsError {
				r.IsError = sdk.Bool(true)
			}
			add(sdk.MessageParamRoleUser, sdk.ContentBlockParamUnion{OfToolResult: &r})
		default:
			return nil, invalid("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// inputSchema keeps the schema's values as raw JSON so the bytes sent are
// the bytes given.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return s, fmt.Errorf("not a JSON object")
	}
	for k, v := range top {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, fmt.Errorf("required: %v", err)
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

func invalid(format string, args ...any) error {
	return bullpen.Errorf(bullpen.EINVALID, "anthropic: "+format, args...)
}
