package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/call"
	"github.com/bullpen-hq/bullpen/agents/llm/internal/sse"
)

// stream makes one request and assembles the message from its SSE events.
func (p *Provider) stream(ctx context.Context, capture *call.Capture, endpoint string, body []byte, onDelta func(string)) (llm.Response, bool, error) {
	res, err := call.Post(ctx, p.hc, capture, endpoint, p.header, body)
	if err != nil {
		return llm.Response{}, false, err
	}
	defer res.Body.Close()
	var m message
	r := sse.NewReader(res.Body)
	for !m.stopped {
		ev, err := r.Next()
		if err == io.EOF {
			return llm.Response{}, m.streamed, errors.New("stream ended before message_stop")
		}
		if err != nil {
			return llm.Response{}, m.streamed, err
		}
		if err := m.add(ev, onDelta); err != nil {
			return llm.Response{}, m.streamed, err
		}
	}
	// Read on to the end, as a client should: the recorded response is
	// then the whole body and the connection can be reused. The answer is
	// complete, so an error now changes nothing.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	return m.response(), m.streamed, nil
}

// message is a response assembled from the stream's events.
type message struct {
	model      string
	usage      usage
	blocks     []*contentBlock
	stopReason string
	streamed   bool
	stopped    bool
}

type contentBlock struct {
	typ, id, name string
	text          []byte
	input         []byte
}

// add applies one event. The event's type is read from its data, which
// always carries it; the SSE event name is only needed for errors sent
// by proxies that omit the data's type.
func (m *message) add(ev sse.Event, onDelta func(string)) error {
	if ev.Type == "ping" || len(ev.Data) == 0 {
		return nil
	}
	var e event
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("stream: bad %s event: %w", ev.Type, err)
	}
	if e.Type == "" {
		e.Type = ev.Type
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			m.model, m.usage = e.Message.Model, e.Message.Usage
		}
	case "content_block_start":
		return m.start(e)
	case "content_block_delta":
		return m.delta(e, onDelta)
	case "message_delta":
		m.update(e)
	case "message_stop":
		m.stopped = true
	case "error":
		return streamError(e.Error)
	}
	return nil // ping, content_block_stop, and types added later
}

func (m *message) start(e event) error {
	if e.Index != len(m.blocks) || e.ContentBlock == nil {
		return fmt.Errorf("stream: content block %d started after %d blocks", e.Index, len(m.blocks))
	}
	cb := e.ContentBlock
	b := &contentBlock{typ: cb.Type, id: cb.ID, name: cb.Name, text: []byte(cb.Text)}
	if len(cb.Input) > 0 && string(cb.Input) != "{}" {
		b.input = append(b.input, cb.Input...)
	}
	m.blocks = append(m.blocks, b)
	return nil
}

func (m *message) delta(e event, onDelta func(string)) error {
	if e.Index < 0 || e.Index >= len(m.blocks) || e.Delta == nil {
		return fmt.Errorf("stream: delta for content block %d of %d", e.Index, len(m.blocks))
	}
	b := m.blocks[e.Index]
	switch e.Delta.Type {
	case "text_delta":
		b.text = append(b.text, e.Delta.Text...)
		if e.Delta.Text != "" {
			m.streamed = true
			if onDelta != nil {
				onDelta(e.Delta.Text)
			}
		}
	case "input_json_delta":
		b.input = append(b.input, e.Delta.PartialJSON...)
	}
	return nil // thinking and signature deltas are not kept
}

// update applies message_delta: the stop reason, and usage counts that
// are cumulative totals, so a sent one replaces message_start's.
func (m *message) update(e event) {
	if e.Delta != nil {
		m.stopReason = e.Delta.StopReason
	}
	if u := e.Usage; u != nil {
		for _, f := range []struct{ dst, src **int }{
			{&m.usage.InputTokens, &u.InputTokens}, {&m.usage.OutputTokens, &u.OutputTokens},
			{&m.usage.CacheReadInputTokens, &u.CacheReadInputTokens},
			{&m.usage.CacheCreationInputTokens, &u.CacheCreationInputTokens},
		} {
			if *f.src != nil {
				*f.dst = *f.src
			}
		}
	}
}

func (m *message) response() llm.Response {
	in, read, write := count(m.usage.InputTokens), count(m.usage.CacheReadInputTokens), count(m.usage.CacheCreationInputTokens)
	resp := llm.Response{Model: m.model, Usage: llm.Usage{InputTokens: in + read + write,
		CachedInputTokens: read, CacheWriteTokens: write, OutputTokens: count(m.usage.OutputTokens)}}
	var text []byte
	for _, b := range m.blocks {
		switch b.typ {
		case "text":
			text = append(text, b.text...)
		case "tool_use":
			args := json.RawMessage(b.input)
			if len(args) == 0 || !json.Valid(args) {
				args = json.RawMessage("{}") // a cut-off call's partial JSON is no object
			}
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: b.id, Name: b.name, Arguments: args})
		}
	}
	resp.Text = string(text)
	switch m.stopReason {
	case "tool_use":
		resp.StopReason = llm.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		resp.StopReason = llm.StopMaxTokens
	default:
		resp.StopReason = llm.StopEnd
	}
	return resp
}

func count(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// streamError turns an error event into the status error its type stands
// for (the Messages API's error types map to HTTP statuses one to one), so
// codes and retries treat it as that status: overloaded_error as 529.
func streamError(e *apiError) *call.StatusError {
	if e == nil {
		e = &apiError{Type: "api_error"}
	}
	status, ok := map[string]int{
		"invalid_request_error": http.StatusBadRequest, "authentication_error": http.StatusUnauthorized,
		"billing_error": http.StatusPaymentRequired, "permission_error": http.StatusForbidden,
		"not_found_error": http.StatusNotFound, "request_too_large": http.StatusRequestEntityTooLarge,
		"rate_limit_error": http.StatusTooManyRequests, "timeout_error": http.StatusGatewayTimeout,
		"overloaded_error": 529,
	}[e.Type]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &call.StatusError{Status: status, Message: e.Message, Event: e.Type}
}
