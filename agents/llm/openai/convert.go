package openai

import (
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// params maps an llm.Request to Chat Completions parameters. The system
// prompt is the first message and tools keep their order, so the prefix a
// server can cache is byte-stable.
func (p *Provider) params(req llm.Request) (sdk.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		return sdk.ChatCompletionNewParams{}, errInvalid(p, "no model configured")
	}
	params := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, err := message(m)
		if err != nil {
			return params, errInvalid(p, "message %d: %v", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		schema, err := schemaObject(t.Parameters)
		if err != nil {
			return params, errInvalid(p, "tool %q: parameters: %v", t.Name, err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	if req.MaxTokens > 0 {
		useMCT := p.cfg.BaseURL == ""
		if p.cfg.MaxCompletionTokens != nil {
			useMCT = *p.cfg.MaxCompletionTokens
		}
		if useMCT {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	return params, nil
}

func message(m llm.Message) (sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleUser:
		return sdk.UserMessage(m.Content), nil
	case llm.RoleAssistant:
		a := sdk.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: tc.Name, Arguments: string(arguments(tc.Arguments)),
					},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return sdk.ChatCompletionMessageParamUnion{}, errorString("tool result without ToolCallID")
		}
		content := m.Content
		if m.IsError {
			// Chat Completions has no error flag on tool results.
			content = "Error: " + content
		}
		return sdk.ToolMessage(content, m.ToolCallID), nil
	}
	return sdk.ChatCompletionMessageParamUnion{}, errorString("unknown role " + string(m.Role))
}

func arguments(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// schemaObject turns a JSON Schema into the SDK's map. Nested values stay
// raw JSON, so their bytes (and key order) are sent as given; top-level keys
// are sorted by encoding/json, which is just as stable.
func schemaObject(raw json.RawMessage) (shared.FunctionParameters, error) {
	if len(raw) == 0 {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, errorString("not a JSON object")
	}
	out := make(shared.FunctionParameters, len(top))
	for k, v := range top {
		out[k] = v
	}
	return out, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }
