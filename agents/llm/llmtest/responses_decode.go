package llmtest

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// responsesBody is the part of a Responses API request the fake reads.
type responsesBody struct {
	Model           string          `json:"model"`
	Instructions    string          `json:"instructions"`
	Input           json.RawMessage `json:"input"`
	Tools           []responsesTool `json:"tools"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	Temperature     *float64        `json:"temperature"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Tools       []responsesTool `json:"tools"` // type "namespace"
}

// responsesItem is one input item: a message, a function call the model
// made earlier, or a function call's output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// decodeResponses decodes a Responses API request into the captured view
// and its cacheable segments (tools, instructions, then input items).
func decodeResponses(raw []byte) (CapturedRequest, []segment, error) {
	var b responsesBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return CapturedRequest{}, nil, err
	}
	if b.Model == "" {
		return CapturedRequest{}, nil, errors.New("model is required")
	}
	c := CapturedRequest{Raw: raw, Model: b.Model, Stream: b.Stream, MaxTokens: b.MaxOutputTokens,
		Temperature: b.Temperature, System: b.Instructions}
	_ = json.Unmarshal(raw, &c.Body)
	var segs []segment
	c.Tools, segs = responsesTools(b.Tools)
	if b.Instructions != "" {
		segs = append(segs, segment{key: b.Instructions, tokens: llm.Count(b.Instructions)})
	}
	items, err := responsesInput(b.Input)
	if err != nil {
		return CapturedRequest{}, nil, err
	}
	var system []string
	if b.Instructions != "" {
		system = append(system, b.Instructions)
	}
	for _, it := range items {
		m, text := responsesMessage(it)
		segs = append(segs, segment{key: it.Type + it.Role + text, tokens: llm.Count(text) + 3})
		if it.Type == "message" && (it.Role == "system" || it.Role == "developer") {
			system = append(system, text)
			continue
		}
		c.Messages = append(c.Messages, m)
	}
	c.System = strings.Join(system, "\n\n")
	return c, segs, nil
}

// responsesTools captures the tools, a namespace's functions one by one,
// and returns one cacheable segment per tool.
func responsesTools(ts []responsesTool) ([]CapturedTool, []segment) {
	var out []CapturedTool
	var segs []segment
	for _, t := range ts {
		key := t.Type + t.Name + t.Description + string(t.Parameters)
		if t.Type == "namespace" {
			for _, f := range t.Tools {
				out = append(out, CapturedTool{Name: t.Name + "__" + f.Name, Description: f.Description,
					Parameters: f.Parameters, Namespace: t.Name, Function: f.Name})
				key += f.Name + f.Description + string(f.Parameters)
			}
		} else {
			out = append(out, CapturedTool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
		segs = append(segs, segment{key: key, tokens: llm.Count(key)})
	}
	return out, segs
}

func responsesInput(raw json.RawMessage) ([]responsesItem, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []responsesItem{{Type: "message", Role: "user", Content: raw}}, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New("input must be a string or an array of items")
	}
	for i := range items {
		if items[i].Type == "" && items[i].Role != "" {
			items[i].Type = "message"
		}
	}
	return items, nil
}

// responsesMessage maps an input item to a captured message.
func responsesMessage(it responsesItem) (CapturedMessage, string) {
	switch it.Type {
	case "function_call":
		name := it.Name
		if it.Namespace != "" {
			name = it.Namespace + "__" + it.Name
		}
		return CapturedMessage{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: it.CallID, Name: name,
			Arguments: json.RawMessage(it.Arguments)}}}, it.Name + it.Arguments
	case "function_call_output", "custom_tool_call_output":
		out := contentText(it.Output)
		return CapturedMessage{Role: "tool", ToolCallID: it.CallID, Content: out}, out
	default:
		text := contentText(it.Content)
		return CapturedMessage{Role: it.Role, Content: text}, text
	}
}
