package openai

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

// stream makes one request and assembles the answer from its SSE chunks.
func (p *Provider) stream(ctx context.Context, capture *call.Capture, endpoint string, body []byte, onDelta func(string)) (llm.Response, bool, error) {
	res, err := call.Post(ctx, p.hc, capture, endpoint, p.header, body)
	if err != nil {
		return llm.Response{}, false, err
	}
	defer res.Body.Close()
	var a assembly
	r := sse.NewReader(res.Body)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return llm.Response{}, a.streamed, err
		}
		done, err := a.add(ev.Data, onDelta)
		if err != nil {
			return llm.Response{}, a.streamed, err
		}
		if done {
			// Read on to the end, as a client should: the recorded
			// response is the whole body, the connection is reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
			break
		}
	}
	return a.response()
}

// assembly builds a response from the stream's chunks.
type assembly struct {
	resp     llm.Response
	text     []byte
	streamed bool
	calls    toolCalls
	finish   string
}

// add takes one event's data; done is true at the [DONE] sentinel.
func (a *assembly) add(data []byte, onDelta func(string)) (done bool, err error) {
	if string(data) == "[DONE]" {
		return true, nil
	}
	var chunk chatChunk
	if err := json.Unmarshal(data, &chunk); err != nil {
		return false, fmt.Errorf("stream: bad chunk: %w", err)
	}
	if chunk.Error != nil {
		return false, streamError(chunk.Error)
	}
	if chunk.Model != "" {
		a.resp.Model = chunk.Model
	}
	if chunk.Usage != nil {
		a.resp.Usage = usage(chunk.Usage)
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // n is never set, but be safe
		}
		if d := ch.Delta.Content; d != "" {
			a.text = append(a.text, d...)
			a.streamed = true
			if onDelta != nil {
				onDelta(d)
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			a.calls.add(tc.Index, tc.ID, tc.Function.Name, string(tc.Function.Arguments))
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return false, nil
}

func (a *assembly) response() (llm.Response, bool, error) {
	if a.finish == "" {
		// The stream ended without a finish_reason: cut off, not complete.
		return llm.Response{}, a.streamed, errors.New("stream ended before the answer was complete")
	}
	resp := a.resp
	resp.Text = string(a.text)
	resp.ToolCalls = a.calls.list()
	resp.StopReason = stopReason(a.finish, len(resp.ToolCalls) > 0)
	return resp, a.streamed, nil
}

// streamError turns an error object sent inside a 200 stream into the
// status error it stands for, so codes and retries treat it as one.
func streamError(e *chatError) *call.StatusError {
	var code int
	var name string
	if json.Unmarshal(e.Code, &code) == nil && code >= 400 && code <= 599 {
		return &call.StatusError{Status: code, Message: e.Message, Event: orError(e.Type)} // vLLM, LiteLLM
	}
	_ = json.Unmarshal(e.Code, &name) // OpenAI: "rate_limit_exceeded" …
	status := http.StatusInternalServerError
	for _, s := range []string{e.Type, name} {
		switch s {
		case "invalid_request_error", "context_length_exceeded":
			status = http.StatusBadRequest
		case "authentication_error", "invalid_api_key":
			status = http.StatusUnauthorized
		case "rate_limit_error", "rate_limit_exceeded", "insufficient_quota":
			status = http.StatusTooManyRequests
		}
	}
	return &call.StatusError{Status: status, Message: e.Message, Event: orError(e.Type)}
}

func orError(typ string) string {
	if typ == "" {
		return "error"
	}
	return typ
}

func usage(u *chatUsage) llm.Usage {
	return llm.Usage{
		InputTokens:       u.PromptTokens,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens:  u.PromptTokensDetails.CacheWriteTokens,
		OutputTokens:      u.CompletionTokens,
	}
}

func stopReason(finish string, hasCalls bool) string {
	switch {
	case finish == "tool_calls" || finish == "function_call" || hasCalls && finish == "stop":
		return llm.StopToolUse
	case finish == "length":
		return llm.StopMaxTokens
	}
	return llm.StopEnd
}

// toolCalls assembles streamed tool-call fragments. Fragments of one call
// share an index; the first carries id and name, the rest pieces of the
// arguments. A new id at a used index (some servers always send index 0)
// starts a new call.
type toolCalls struct {
	calls []*partialCall
	byIdx map[int]*partialCall
}

type partialCall struct {
	id, name string
	args     []byte
}

func (t *toolCalls) add(index int, id, name, args string) {
	if t.byIdx == nil {
		t.byIdx = map[int]*partialCall{}
	}
	c := t.byIdx[index]
	if c == nil || id != "" && c.id != "" && id != c.id {
		c = &partialCall{}
		t.calls = append(t.calls, c)
		t.byIdx[index] = c
	}
	if id != "" {
		c.id = id
	}
	c.name += name
	c.args = append(c.args, args...)
}

func (t *toolCalls) list() []llm.ToolCall {
	if len(t.calls) == 0 {
		return nil
	}
	out := make([]llm.ToolCall, 0, len(t.calls))
	for i, c := range t.calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		args := c.args
		if len(args) == 0 {
			args = []byte("{}")
		}
		out = append(out, llm.ToolCall{ID: id, Name: c.name, Arguments: args})
	}
	return out
}
