package gateway

import (
	"bytes"
	"context"
	"encoding/json"
)

// nativeCapture reads a Responses provider's answer as forward relays it
// (the call's tee) and hands its id and output items to keep: from the
// response.completed (or .incomplete) event of a stream, as soon as it
// arrives and before the client gets it, so that a client may continue
// the response at once; from a whole JSON answer at its end.
type nativeCapture struct {
	ctx  context.Context
	keep func(ctx context.Context, id string, output []any)
	mode byte // 0 unknown, '{' JSON, 'e' event stream
	buf  bytes.Buffer
	line []byte
	skip bool
	kept bool
}

func (n *nativeCapture) Write(p []byte) (int, error) {
	if n.mode == 0 {
		if t := bytes.TrimSpace(p); len(t) > 0 {
			n.mode = 'e'
			if t[0] == '{' {
				n.mode = '{'
			}
		}
	}
	if n.mode == '{' {
		if n.buf.Len()+len(p) <= maxUsageJSON {
			n.buf.Write(p)
		}
		return len(p), nil
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(n.line)+len(rest) > maxUsageJSON {
				n.line, n.skip = n.line[:0], true
			} else if !n.skip {
				n.line = append(n.line, rest...)
			}
			break
		}
		if !n.skip {
			n.event(append(n.line, rest[:i]...))
		}
		n.line, n.skip, rest = n.line[:0], false, rest[i+1:]
	}
	return len(p), nil
}

// event reads one line of the stream for the final response event.
func (n *nativeCapture) event(l []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r"), []byte("data:"))
	if !ok || n.kept || !(bytes.Contains(data, []byte(`"response.completed"`)) || bytes.Contains(data, []byte(`"response.incomplete"`))) {
		return
	}
	var ev struct {
		Type     string        `json:"type"`
		Response *wireResponse `json:"response"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &ev) != nil || ev.Response == nil ||
		(ev.Type != "response.completed" && ev.Type != "response.incomplete") {
		return
	}
	n.kept = true
	n.keep(n.ctx, ev.Response.ID, ev.Response.Output)
}

// wireResponse is the part of a response object the gateway keeps.
type wireResponse struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Output []any  `json:"output"`
}

// end takes a whole JSON answer once it has been relayed.
func (n *nativeCapture) end(ctx context.Context) {
	if n.mode != '{' || n.kept {
		return
	}
	var r wireResponse
	if json.Unmarshal(n.buf.Bytes(), &r) != nil || (r.Status != "completed" && r.Status != "incomplete") {
		return
	}
	n.kept = true
	n.keep(ctx, r.ID, r.Output)
}
