package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
)

// anthropicDecoder decodes an Anthropic Messages answer (an SSE stream of
// message_start … message_stop, or one JSON message) into a sink, in Chat
// terms: text blocks become content, thinking blocks reasoning, tool_use
// blocks tool calls (the block's index is the call's index), stop_reason
// the finish reason and the usage Chat's usage, with cache reads counted
// in the prompt as Chat counts them.
type anthropicDecoder struct {
	sink  answerSink
	sse   bool
	line  []byte
	whole bytes.Buffer
	usage wireUsage // merged from message_start and message_delta
	done  bool      // message_stop was seen
}

// anthropicEvent holds the fields of the stream's events the decoder reads.
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *anthropicBlock `json:"content_block"`
	Delta        *struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		Thinking    string  `json:"thinking"`
		PartialJSON string  `json:"partial_json"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
}

// anthropicBlock is one content block of an answer.
type anthropicBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

func (d *anthropicDecoder) write(p []byte) error {
	if !d.sse {
		if d.whole.Len()+len(p) > maxUsageJSON {
			return errors.New("the provider's answer is too long")
		}
		d.whole.Write(p)
		return nil
	}
	return splitLines(&d.line, p, d.eventLine)
}

func (d *anthropicDecoder) eventLine(l []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data:"))
	if !ok {
		return
	}
	var ev anthropicEvent
	if json.Unmarshal(bytes.TrimSpace(data), &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil && ev.Message.Usage != nil {
			d.usage.merge(*ev.Message.Usage)
		}
	case "content_block_start":
		if ev.ContentBlock != nil {
			d.block(ev.Index, *ev.ContentBlock, false)
		}
	case "content_block_delta":
		if ev.Delta != nil {
			d.delta(ev.Index, ev.Delta.Type, ev.Delta.Text+ev.Delta.Thinking+ev.Delta.PartialJSON)
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != nil {
			d.sink.setFinish(chatFinishOf(*ev.Delta.StopReason))
		}
		if ev.Usage != nil {
			d.usage.merge(*ev.Usage)
		}
	case "message_stop":
		d.done = true
		d.sink.setUsage(chatUsageOf(d.usage))
	}
}

// block opens content block i; whole says it is complete (a non-streamed
// answer), so a tool call's input comes with it.
func (d *anthropicDecoder) block(i int, b anthropicBlock, whole bool) {
	switch b.Type {
	case "text":
		d.delta(i, "text_delta", b.Text)
	case "thinking":
		d.delta(i, "thinking_delta", b.Thinking)
	case "tool_use":
		var dl chatDelta
		dl.ToolCalls = append(dl.ToolCalls, toolDelta(i))
		dl.ToolCalls[0].ID, dl.ToolCalls[0].Function.Name = b.ID, b.Name
		if whole {
			dl.ToolCalls[0].Function.Arguments = string(b.Input)
		}
		d.sink.add(dl)
	}
}

// delta adds one content_block_delta of block i.
func (d *anthropicDecoder) delta(i int, typ, s string) {
	if s == "" {
		return
	}
	var dl chatDelta
	switch typ {
	case "text_delta":
		dl.Content = &s
	case "thinking_delta":
		dl.ReasoningContent = &s
	case "input_json_delta":
		dl.ToolCalls = append(dl.ToolCalls, toolDelta(i))
		dl.ToolCalls[0].Function.Arguments = s
	default:
		return
	}
	d.sink.add(dl)
}

// toolDelta is an empty tool-call delta at index i.
func toolDelta(i int) chatToolDelta { return chatToolDelta{Index: &i} }

func (d *anthropicDecoder) end() bool {
	if d.sse {
		return d.done
	}
	var v struct {
		Type       string           `json:"type"`
		Content    []anthropicBlock `json:"content"`
		StopReason string           `json:"stop_reason"`
		Usage      *wireUsage       `json:"usage"`
	}
	if json.Unmarshal(d.whole.Bytes(), &v) != nil || v.Type != "message" || v.Usage == nil {
		return false
	}
	for i, b := range v.Content {
		d.block(i, b, true)
	}
	d.sink.setFinish(chatFinishOf(v.StopReason))
	d.sink.setUsage(chatUsageOf(*v.Usage))
	return true
}

// chatFinishOf is an Anthropic stop_reason as a Chat finish_reason.
func chatFinishOf(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return "stop"
}

// chatUsageOf is Anthropic's usage as Chat's: the prompt counts cache
// reads and writes, and the reads are its cached tokens.
func chatUsageOf(w wireUsage) *chatWireUsage {
	u := w.usage(apiMessages)
	c := &chatWireUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	if u.CachedInputTokens > 0 {
		c.PromptDetails = &struct {
			CachedTokens int `json:"cached_tokens"`
		}{u.CachedInputTokens}
	}
	return c
}
