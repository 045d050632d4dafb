package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/bullpen-hq/bullpen"
)

// chatTranslator stands between forward and the client of a Responses
// request served by a Chat Completions provider: forward relays the
// provider's Chat answer into it, and it writes the Responses answer. An
// error answer (status ≥ 400) passes as it is: both APIs share the error
// shape. A successful one becomes Responses stream events as its chunks
// arrive (or one response object when the client did not stream); the
// final event is written by finish, after forward has settled the call's
// tokens.
type chatTranslator struct {
	w       http.ResponseWriter // the client
	hdr     http.Header
	b       *responseBuilder
	stream  bool // the client asked for a stream
	status  int
	pass    bool // an error answer: passed through
	started bool
	dec     *chatDecoder // reads the provider's answer into b
	werr    error        // writing to the client failed
}

func newChatTranslator(w http.ResponseWriter, b *responseBuilder, stream bool) *chatTranslator {
	t := &chatTranslator{w: w, hdr: http.Header{}, b: b, stream: stream, dec: &chatDecoder{sink: b}}
	b.emit = t.writeEvent
	return t
}

func (t *chatTranslator) Header() http.Header { return t.hdr }

func (t *chatTranslator) WriteHeader(status int) {
	if t.status != 0 {
		return
	}
	t.status = status
	if status >= 400 {
		t.pass = true
		for k, vs := range t.hdr {
			t.w.Header()[k] = vs
		}
		t.w.WriteHeader(status)
		return
	}
	t.dec.sse = isSSE(t.hdr)
	for k, vs := range t.hdr {
		if k != "Content-Type" && k != "Content-Length" {
			t.w.Header()[k] = vs
		}
	}
	if t.stream {
		t.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		t.w.Header().Set("Cache-Control", "no-cache")
		t.w.WriteHeader(status)
		t.started = true
		t.b.start()
	}
}

func (t *chatTranslator) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.WriteHeader(http.StatusOK)
	}
	if t.pass {
		return t.w.Write(p)
	}
	if err := t.dec.write(p); err != nil {
		return 0, err
	}
	if t.werr != nil {
		return 0, t.werr
	}
	return len(p), nil
}

// Flush passes a flush on to the client (forward flushes every chunk).
func (t *chatTranslator) Flush() {
	if t.pass || t.started {
		_ = http.NewResponseController(t.w).Flush()
	}
}

// writeEvent writes one Responses stream event to a streaming client.
func (t *chatTranslator) writeEvent(ev map[string]any) {
	if !t.stream || t.werr != nil {
		return
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.werr = err
		return
	}
	if _, err := fmt.Fprintf(t.w, "event: %s\ndata: %s\n\n", ev["type"], b); err != nil {
		t.werr = errors.New("the client went away")
	}
}

// readWhole takes a non-streamed Chat answer into the builder.
func (t *chatTranslator) readWhole() bool { return t.dec.readWhole() }

// finish ends the client's answer once forward has returned: the final
// event (or the whole response object) when the provider's answer came
// whole, first handed to keep (which stores it for previous_response_id);
// else, to a streaming client, an error event. Nothing is written when the
// answer was an error passed through, or nothing was relayed.
func (t *chatTranslator) finish(ctx context.Context, keep func(ctx context.Context, output []any)) {
	if t.pass || t.status == 0 {
		return
	}
	whole := t.dec.end() // a non-streamed answer: a streaming client gets its events now
	if !whole {
		msg := "the model provider's answer was cut short or malformed"
		if t.stream {
			t.writeEvent(map[string]any{"type": "error", "sequence_number": t.b.seq, "code": "server_error", "message": msg, "param": nil})
			t.Flush()
			return
		}
		writeError(t.w, KindOpenAI, bullpen.Errorf(bullpen.EUNAVAILABLE, "%s", msg), true)
		return
	}
	t.b.closeAll()
	keep(ctx, t.b.outputItems())
	o := t.b.finishEvent()
	if t.stream {
		t.Flush()
		return
	}
	t.w.Header().Set("Content-Type", "application/json")
	t.w.WriteHeader(t.status)
	_ = json.NewEncoder(t.w).Encode(o)
}
