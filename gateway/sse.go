package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// maxSSELine bounds a partial line kept between two reads; a longer line
// is skipped (no usage event is that long).
const maxSSELine = 4 << 20

// sseUsage reads usage from a server-sent event stream, line by line:
//
//	Anthropic  message_start.message.usage, then message_delta.usage
//	Chat       the chunk carrying usage (with stream_options.include_usage)
//	Responses  response.completed (or .incomplete, .failed) .response.usage
type sseUsage struct {
	api     string
	reqBody []byte
	partial []byte
	skip    bool // the current line grew over maxSSELine
	wire    wireUsage
	saw     bool            // a usage object was seen
	done    bool            // the stream's final usage (or end) was seen
	text    strings.Builder // Chat: streamed text, for the estimate
	events  int
}

// sseEvent holds the parts of a data line the three APIs put usage in.
type sseEvent struct {
	Type    string     `json:"type"`
	Usage   *wireUsage `json:"usage"`
	Message *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	Response *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"response"`
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
}

func (s *sseUsage) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(s.partial)+len(p) > maxSSELine {
				s.partial, s.skip = s.partial[:0], true
			} else if !s.skip {
				s.partial = append(s.partial, p...)
			}
			break
		}
		if !s.skip {
			s.line(append(s.partial, p[:i]...))
		}
		s.partial, s.skip, p = s.partial[:0], false, p[i+1:]
	}
	return n, nil
}

// line reads one complete line of the stream.
func (s *sseUsage) line(l []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if s.api == apiChat && string(data) == "[DONE]" {
		s.done = true
		return
	}
	if s.api != apiChat && !bytes.Contains(data, []byte(`"usage"`)) {
		return // most events are text deltas: not worth decoding
	}
	var ev sseEvent
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &ev) != nil {
		return
	}
	var u *wireUsage
	switch {
	case s.api == apiMessages && ev.Type == "message_start" && ev.Message != nil:
		u = ev.Message.Usage
	case s.api == apiMessages && ev.Type == "message_delta", s.api == apiChat:
		u = ev.Usage
	case s.api == apiResponses && ev.Response != nil && strings.HasPrefix(ev.Type, "response."):
		u = ev.Response.Usage
	}
	if u != nil {
		s.saw = true
		s.wire.merge(*u)
		// The usage that ends a stream: Anthropic's message_delta, the
		// Chat chunk of include_usage (sent after the last choice), the
		// Responses API's final response event.
		s.done = s.done || s.api == apiChat || ev.Type == "message_delta" || ev.Type == "response.completed" ||
			ev.Type == "response.incomplete" || ev.Type == "response.failed"
	}
	if s.api == apiChat {
		s.events++
		for _, c := range ev.Choices {
			s.text.WriteString(c.Delta.Content)
			for _, tc := range c.Delta.ToolCalls {
				s.text.WriteString(tc.Function.Arguments)
			}
		}
	}
}

// Usage returns the stream's usage. A Chat stream the client asked for
// without stream_options.include_usage reports none, and the gateway does
// not change the client's request to get it; it estimates the call with
// the offline tokenizer instead (the request body in, the streamed text
// out), so the turn's budgets still hold.
func (s *sseUsage) Usage() llm.Usage {
	if s.saw {
		return s.wire.usage(s.api)
	}
	if s.api == apiChat && s.events > 0 {
		return llm.Usage{InputTokens: llm.Count(string(s.reqBody)), OutputTokens: llm.Count(s.text.String())}
	}
	return llm.Usage{}
}

// Complete reports whether the stream's final usage arrived (for a Chat
// stream without usage, its [DONE]): a stream cut before it is charged
// its whole reservation.
func (s *sseUsage) Complete() bool { return s.done }
