package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A Gemini request for a Chat Completions provider: the system
// instruction becomes the system message, contents the messages (function
// results tool messages, function calls the assistant's tool_calls),
// function declarations function tools, toolConfig tool_choice, and
// generationConfig the output limit, temperature, top_p, stop, penalties,
// seed and response_format. topK and thinkingConfig have no Chat
// counterpart and are dropped.

// geminiChatBody translates req; the output limit goes in outputField.
func (req *geminiRequest) geminiChatBody(model, outputField string, stream bool) ([]byte, error) {
	msgs, err := req.conversation()
	if err != nil {
		return nil, err
	}
	sys, err := req.systemText()
	if err != nil {
		return nil, err
	}
	var cm []chatMessage
	if sys != "" {
		cm = append(cm, chatMessage{Role: "system", Content: sys})
	}
	for _, m := range msgs {
		cm = appendChatConv(cm, m)
	}
	out := map[string]any{"model": model, "messages": cm}
	mode, allowed, err := req.toolMode()
	if err != nil {
		return nil, err
	}
	if funcs := req.offered(mode, allowed); len(funcs) > 0 {
		tools := make([]any, 0, len(funcs))
		for _, f := range funcs {
			fn := map[string]any{"name": f.Name, "parameters": funcSchema(f)}
			if f.Description != "" {
				fn["description"] = f.Description
			}
			tools = append(tools, map[string]any{"type": "function", "function": fn})
		}
		out["tools"] = tools
		switch {
		case mode == "NONE":
			out["tool_choice"] = "none"
		case mode == "ANY" && len(funcs) == 1:
			out["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": funcs[0].Name}}
		case mode == "ANY":
			out["tool_choice"] = "required"
		}
	}
	req.chatConfig(out, outputField)
	if stream {
		out["stream"] = true
		out["stream_options"] = map[string]any{"include_usage": true}
	}
	return json.Marshal(out)
}

// appendChatConv adds one conversation message: a user's function
// results as tool messages before its text.
func appendChatConv(cm []chatMessage, m convMessage) []chatMessage {
	if m.role == "assistant" {
		a := chatMessage{Role: "assistant"}
		if t := m.text(); t != "" {
			a.Content = t
		}
		for _, c := range m.calls {
			tc := chatToolCall{ID: c.id, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = c.name, string(c.args)
			a.ToolCalls = append(a.ToolCalls, tc)
		}
		return append(cm, a)
	}
	for _, r := range m.results {
		cm = append(cm, chatMessage{Role: "tool", ToolCallID: r.id, Content: r.content})
	}
	if len(m.parts) == 0 {
		return cm
	}
	if !m.hasImage() {
		return append(cm, chatMessage{Role: "user", Content: m.text()})
	}
	parts := make([]any, 0, len(m.parts))
	for _, p := range m.parts {
		if p.mediaType != "" {
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]string{"url": "data:" + p.mediaType + ";base64," + p.data}})
		} else {
			parts = append(parts, map[string]any{"type": "text", "text": p.text})
		}
	}
	return append(cm, chatMessage{Role: "user", Content: parts})
}

// chatConfig carries generationConfig over.
func (req *geminiRequest) chatConfig(out map[string]any, outputField string) {
	gc := req.GenerationConfig
	if gc == nil {
		return
	}
	if gc.MaxOutputTokens != nil {
		out[outputField] = *gc.MaxOutputTokens
	}
	setIf(out, "temperature", gc.Temperature)
	setIf(out, "top_p", gc.TopP)
	setIf(out, "presence_penalty", gc.PresencePenalty)
	setIf(out, "frequency_penalty", gc.FrequencyPenalty)
	if gc.Seed != nil {
		out["seed"] = *gc.Seed
	}
	if len(gc.StopSequences) > 0 {
		out["stop"] = gc.StopSequences
	}
	if gc.ResponseMimeType == "application/json" {
		if s := gc.schema(); s != nil {
			out["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "response", "schema": s}}
		} else {
			out["response_format"] = map[string]string{"type": "json_object"}
		}
	}
}

func setIf(out map[string]any, key string, v *float64) {
	if v != nil {
		out[key] = *v
	}
}

// schema is the JSON answer's schema, as JSON Schema; nil for none.
func (gc *geminiGenConfig) schema() json.RawMessage {
	switch {
	case present(gc.ResponseJSONSchema):
		return gc.ResponseJSONSchema
	case present(gc.ResponseSchema):
		return openAPISchema(gc.ResponseSchema)
	}
	return nil
}

// offered are the functions the provider is offered: all, or with mode
// ANY and allowedFunctionNames only those.
func (req *geminiRequest) offered(mode string, allowed []string) []geminiFunction {
	if mode != "ANY" || len(allowed) == 0 {
		return req.funcs
	}
	var out []geminiFunction
	for _, f := range req.funcs {
		for _, a := range allowed {
			if f.Name == a {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// funcSchema is a function's parameters as JSON Schema: its
// parametersJsonSchema as sent, or its parameters (the API's OpenAPI
// subset) made JSON Schema; an object with no properties when it has
// none.
func funcSchema(f geminiFunction) json.RawMessage {
	switch {
	case present(f.ParametersJSONSchema):
		return f.ParametersJSONSchema
	case present(f.Parameters):
		return openAPISchema(f.Parameters)
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// openAPISchema makes a Gemini Schema JSON Schema: its types (which the
// API also takes in upper case, OBJECT, STRING …) in lower case,
// nullable as a type that admits null, and propertyOrdering, which JSON
// Schema does not have, left out.
func openAPISchema(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	b, err := json.Marshal(jsonSchemaOf(v))
	if err != nil {
		return raw
	}
	return b
}

func jsonSchemaOf(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(s))
	for k, val := range s {
		switch k {
		case "propertyOrdering", "property_ordering", "nullable":
		case "type":
			if t, ok := val.(string); ok {
				val = strings.ToLower(t)
				if s["nullable"] == true {
					val = []any{val, "null"}
				}
			}
			out[k] = val
		case "properties", "$defs", "definitions":
			props, _ := val.(map[string]any)
			conv := make(map[string]any, len(props))
			for name, p := range props {
				conv[name] = jsonSchemaOf(p)
			}
			out[k] = conv
		case "items", "additionalProperties", "not":
			out[k] = jsonSchemaOf(val)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			list, _ := val.([]any)
			conv := make([]any, len(list))
			for i, p := range list {
				conv[i] = jsonSchemaOf(p)
			}
			out[k] = conv
		default:
			out[k] = val
		}
	}
	return out
}
