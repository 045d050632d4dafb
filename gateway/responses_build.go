package gateway

import (
	"encoding/json"
	"sort"
)

// responseBuilder turns a Chat Completions answer (the deltas of a stream,
// or one whole message) into a Responses answer: its output items, the
// stream events a Responses client expects in their order, and the final
// response object with the usage, exact, as the provider reported it.
type responseBuilder struct {
	id, model string
	created   int64
	req       *responsesRequest
	custom    map[string]bool // names of custom tools
	emit      func(ev map[string]any)
	seq       int

	output []map[string]any // every item opened so far, by output index
	text   *textItem        // the reasoning or message item being written
	tools  map[int]*toolItem
	finish string // the Chat finish_reason
	usage  *chatWireUsage
}

type textItem struct {
	index int
	kind  string // "reasoning" or "message"
	id    string
	text  []byte
}

type toolItem struct {
	index      int // output index, -1 until the item is added
	id, callID string
	name       string
	args       []byte
	sent       int // bytes of args already sent as deltas
	custom     bool
}

// chatWireUsage is Chat Completions' usage object.
type chatWireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	PromptDetails    *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// chatDelta is the part of a Chat message or stream delta the builder reads.
type chatDelta struct {
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        []chatToolDelta `json:"tool_calls"`
}

// chatToolDelta is one tool call of a Chat stream delta (or message).
type chatToolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func newResponseBuilder(req *responsesRequest, model string, custom map[string]bool, created int64) *responseBuilder {
	return &responseBuilder{id: newID("resp"), model: model, created: created, req: req, custom: custom, tools: map[int]*toolItem{}}
}

func (b *responseBuilder) send(typ string, v map[string]any) {
	if b.emit == nil {
		return
	}
	v["type"], v["sequence_number"] = typ, b.seq
	b.seq++
	b.emit(v)
}

// start sends response.created and response.in_progress.
func (b *responseBuilder) start() {
	b.send("response.created", map[string]any{"response": b.object("in_progress", false)})
	b.send("response.in_progress", map[string]any{"response": b.object("in_progress", false)})
}

// add takes one delta (or a whole message, as one delta).
func (b *responseBuilder) add(d chatDelta) {
	if d.ReasoningContent != nil && *d.ReasoningContent != "" {
		b.writeText("reasoning", *d.ReasoningContent)
	} else if d.Reasoning != nil && *d.Reasoning != "" {
		b.writeText("reasoning", *d.Reasoning)
	}
	if d.Content != nil && *d.Content != "" {
		b.writeText("message", *d.Content)
	}
	if d.Refusal != nil && *d.Refusal != "" {
		b.writeText("message", *d.Refusal)
	}
	for pos, tc := range d.ToolCalls {
		idx := pos
		if tc.Index != nil {
			idx = *tc.Index
		}
		b.toolDelta(idx, tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
}

// writeText appends to the open item of kind, opening it (and closing the
// other) first.
func (b *responseBuilder) writeText(kind, delta string) {
	if b.text == nil || b.text.kind != kind {
		b.closeText()
		prefix := "msg"
		if kind == "reasoning" {
			prefix = "rs"
		}
		t := &textItem{index: len(b.output), kind: kind, id: newID(prefix)}
		b.text = t
		b.output = append(b.output, nil)
		b.send("response.output_item.added", map[string]any{"output_index": t.index, "item": t.item("in_progress")})
		b.send("response.content_part.added", map[string]any{"item_id": t.id, "output_index": t.index, "content_index": 0,
			"part": t.part(false)})
	}
	t := b.text
	t.text = append(t.text, delta...)
	ev := map[string]any{"item_id": t.id, "output_index": t.index, "content_index": 0, "delta": delta}
	if kind == "reasoning" {
		b.send("response.reasoning_text.delta", ev)
		return
	}
	ev["logprobs"] = []any{}
	b.send("response.output_text.delta", ev)
}

func (t *textItem) part(whole bool) map[string]any {
	text := ""
	if whole {
		text = string(t.text)
	}
	if t.kind == "reasoning" {
		return map[string]any{"type": "reasoning_text", "text": text}
	}
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

func (t *textItem) item(status string) map[string]any {
	whole := status == "completed"
	if t.kind == "reasoning" {
		content := []any{}
		if whole {
			content = append(content, t.part(true))
		}
		return map[string]any{"type": "reasoning", "id": t.id, "summary": []any{}, "content": content}
	}
	content := []any{}
	if whole {
		content = append(content, t.part(true))
	}
	return map[string]any{"type": "message", "id": t.id, "status": status, "role": "assistant", "content": content}
}

func (b *responseBuilder) closeText() {
	t := b.text
	if t == nil {
		return
	}
	b.text = nil
	done := map[string]any{"item_id": t.id, "output_index": t.index, "content_index": 0, "text": string(t.text)}
	if t.kind == "reasoning" {
		b.send("response.reasoning_text.done", done)
	} else {
		done["logprobs"] = []any{}
		b.send("response.output_text.done", done)
	}
	b.send("response.content_part.done", map[string]any{"item_id": t.id, "output_index": t.index, "content_index": 0, "part": t.part(true)})
	it := t.item("completed")
	b.output[t.index] = it
	b.send("response.output_item.done", map[string]any{"output_index": t.index, "item": it})
}

// toolDelta adds to the tool call at Chat index idx. The item is added
// once its name is known; a function's arguments stream as they come, a
// custom tool's input (inside the {"input": …} the model wrote) at its end.
func (b *responseBuilder) toolDelta(idx int, callID, name, args string) {
	tc := b.tools[idx]
	if tc == nil {
		tc = &toolItem{index: -1}
		b.tools[idx] = tc
	}
	if callID != "" {
		tc.callID = callID
	}
	if name != "" {
		tc.name += name
	}
	tc.args = append(tc.args, args...)
	if tc.index < 0 && tc.name != "" {
		b.closeText()
		tc.custom = b.custom[tc.name]
		tc.id = newID("fc")
		if tc.custom {
			tc.id = newID("ctc")
		}
		if tc.callID == "" {
			tc.callID = newID("call")
		}
		tc.index = len(b.output)
		b.output = append(b.output, nil)
		b.send("response.output_item.added", map[string]any{"output_index": tc.index, "item": tc.item("in_progress")})
	}
	if tc.index >= 0 && !tc.custom && tc.sent < len(tc.args) {
		b.send("response.function_call_arguments.delta", map[string]any{"item_id": tc.id, "output_index": tc.index,
			"delta": string(tc.args[tc.sent:])})
		tc.sent = len(tc.args)
	}
}

// input is a custom tool call's input: the "input" string of the
// arguments the model wrote, or the arguments as they are.
func (tc *toolItem) input() string {
	var v struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(tc.args, &v) == nil && v.Input != nil {
		return *v.Input
	}
	return string(tc.args)
}

func (tc *toolItem) item(status string) map[string]any {
	if tc.custom {
		in := ""
		if status == "completed" {
			in = tc.input()
		}
		return map[string]any{"type": "custom_tool_call", "id": tc.id, "call_id": tc.callID, "name": tc.name, "input": in, "status": status}
	}
	args := ""
	if status == "completed" {
		args = string(tc.args)
	}
	return map[string]any{"type": "function_call", "id": tc.id, "call_id": tc.callID, "name": tc.name, "arguments": args, "status": status}
}

// closeAll ends every open item, tool calls in the order they were added.
func (b *responseBuilder) closeAll() {
	b.closeText()
	var tools []*toolItem
	for _, tc := range b.tools {
		if tc.index >= 0 {
			tools = append(tools, tc)
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].index < tools[j].index })
	for _, tc := range tools {
		if tc.custom {
			in := tc.input()
			b.send("response.custom_tool_call_input.delta", map[string]any{"item_id": tc.id, "output_index": tc.index, "delta": in})
			b.send("response.custom_tool_call_input.done", map[string]any{"item_id": tc.id, "output_index": tc.index, "input": in})
		} else {
			b.send("response.function_call_arguments.done", map[string]any{"item_id": tc.id, "output_index": tc.index,
				"name": tc.name, "arguments": string(tc.args)})
		}
		it := tc.item("completed")
		b.output[tc.index] = it
		b.send("response.output_item.done", map[string]any{"output_index": tc.index, "item": it})
	}
	b.tools = map[int]*toolItem{}
}

// status is the response's final status and, when incomplete, why.
func (b *responseBuilder) status() (string, any) {
	switch b.finish {
	case "length":
		return "incomplete", map[string]any{"reason": "max_output_tokens"}
	case "content_filter":
		return "incomplete", map[string]any{"reason": "content_filter"}
	}
	return "completed", nil
}

// finishEvent closes every item and sends response.completed (or
// .incomplete); it returns the final response object.
func (b *responseBuilder) finishEvent() map[string]any {
	b.closeAll()
	status, _ := b.status()
	o := b.object(status, true)
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	b.send(typ, map[string]any{"response": o})
	return o
}

// outputItems are the finished output items.
func (b *responseBuilder) outputItems() []any {
	out := make([]any, 0, len(b.output))
	for _, it := range b.output {
		if it != nil {
			out = append(out, it)
		}
	}
	return out
}

// object is the response object; final ones carry output and usage.
func (b *responseBuilder) object(status string, final bool) map[string]any {
	r := b.req
	o := map[string]any{"id": b.id, "object": "response", "created_at": b.created, "status": status, "model": b.model,
		"output": []any{}, "usage": nil, "error": nil, "incomplete_details": nil, "instructions": nil,
		"tools": []any{}, "tool_choice": "auto", "parallel_tool_calls": true, "temperature": nil, "top_p": nil,
		"max_output_tokens": nil, "previous_response_id": nil, "store": true, "metadata": map[string]any{},
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "reasoning": map[string]any{"effort": nil, "summary": nil},
		"truncation": "disabled"}
	for _, k := range []string{"instructions", "tools", "tool_choice", "parallel_tool_calls", "temperature", "top_p",
		"max_output_tokens", "previous_response_id", "store", "metadata", "text", "reasoning", "user"} {
		if v, ok := r.raw[k]; ok && string(v) != "null" {
			o[k] = v
		}
	}
	if !final {
		return o
	}
	_, why := b.status()
	o["incomplete_details"] = why
	o["output"] = b.outputItems()
	if u := b.usage; u != nil {
		cached, reasoning := 0, 0
		if u.PromptDetails != nil {
			cached = u.PromptDetails.CachedTokens
		}
		if u.CompletionDetails != nil {
			reasoning = u.CompletionDetails.ReasoningTokens
		}
		o["usage"] = map[string]any{"input_tokens": u.PromptTokens, "input_tokens_details": map[string]any{"cached_tokens": cached},
			"output_tokens": u.CompletionTokens, "output_tokens_details": map[string]any{"reasoning_tokens": reasoning},
			"total_tokens": u.PromptTokens + u.CompletionTokens}
	}
	return o
}

func (b *responseBuilder) setFinish(reason string)   { b.finish = reason }
func (b *responseBuilder) setUsage(u *chatWireUsage) { b.usage = u }
