package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// answerSink takes a provider's answer as it is decoded, in Chat
// Completions terms whatever the provider spoke: text, reasoning and
// tool-call deltas, the finish reason, the usage. The Responses builder
// and the Gemini answer are sinks; the Chat and Anthropic decoders feed
// them.
type answerSink interface {
	add(d chatDelta)
	setFinish(reason string) // a Chat finish_reason
	setUsage(u *chatWireUsage)
}

// answerDecoder reads a provider's successful answer, streamed or whole,
// into a sink.
type answerDecoder interface {
	// write takes the answer's next bytes as they arrive.
	write(p []byte) error
	// end reports whether the answer came whole, once the provider is
	// done; a whole non-streamed body is given to the sink then.
	end() bool
}

// chatDecoder decodes a Chat Completions answer: an SSE stream of
// chunks, or one JSON body.
type chatDecoder struct {
	sink  answerSink
	sse   bool
	line  []byte       // a partial SSE line
	whole bytes.Buffer // a non-streamed answer
	done  bool         // the stream's [DONE] was seen
}

func (d *chatDecoder) write(p []byte) error {
	if !d.sse {
		if d.whole.Len()+len(p) > maxUsageJSON {
			return errors.New("the provider's answer is too long")
		}
		d.whole.Write(p)
		return nil
	}
	return splitLines(&d.line, p, d.chunkLine)
}

// splitLines calls each with every whole line of p, keeping a partial
// line in partial until the rest arrives.
func splitLines(partial *[]byte, p []byte, each func(line []byte)) error {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(*partial)+len(p) > maxSSELine {
				return errors.New("the provider streamed an over-long line")
			}
			*partial = append(*partial, p...)
			return nil
		}
		each(append(*partial, p[:i]...))
		*partial, p = (*partial)[:0], p[i+1:]
	}
	return nil
}

// chunkLine reads one line of the provider's Chat stream.
func (d *chatDecoder) chunkLine(l []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		d.done = true
		return
	}
	var ch struct {
		Choices []struct {
			Delta        chatDelta `json:"delta"`
			FinishReason *string   `json:"finish_reason"`
		} `json:"choices"`
		Usage *chatWireUsage `json:"usage"`
	}
	if json.Unmarshal(data, &ch) != nil {
		return
	}
	for _, c := range ch.Choices {
		d.sink.add(c.Delta)
		if c.FinishReason != nil && *c.FinishReason != "" {
			d.sink.setFinish(*c.FinishReason)
		}
	}
	if ch.Usage != nil {
		d.sink.setUsage(ch.Usage)
	}
}

func (d *chatDecoder) end() bool {
	if d.sse {
		return d.done
	}
	return d.readWhole()
}

// readWhole takes a non-streamed Chat answer into the sink.
func (d *chatDecoder) readWhole() bool {
	var v struct {
		Choices []struct {
			Message      chatDelta `json:"message"`
			FinishReason string    `json:"finish_reason"`
		} `json:"choices"`
		Usage *chatWireUsage `json:"usage"`
	}
	if json.Unmarshal(d.whole.Bytes(), &v) != nil || len(v.Choices) == 0 {
		return false
	}
	d.sink.add(v.Choices[0].Message)
	d.sink.setFinish(v.Choices[0].FinishReason)
	d.sink.setUsage(v.Usage)
	return true
}

// isSSE reports whether an answer's header says it is an event stream.
func isSSE(h http.Header) bool {
	return strings.HasPrefix(strings.ToLower(h.Get("Content-Type")), "text/event-stream")
}
