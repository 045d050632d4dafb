package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/bullpen-hq/bullpen"
)

// geminiWriter stands between forward and a Gemini client: forward relays
// the provider's answer into it, a decoder of the provider's kind reads
// it into a geminiAnswer, and the client gets Gemini's answer: SSE frames
// of GenerateContentResponse (alt=sse, as the Google SDK asks), a JSON
// array of them (a stream without alt=sse), or one response. An error
// answer (status ≥ 400, the provider's or the gateway's own) is held and
// answered by finish in Gemini's error shape, with its status and
// message.
type geminiWriter struct {
	w       http.ResponseWriter
	hdr     http.Header
	a       *geminiAnswer
	kind    string // the provider's kind
	stream  bool   // :streamGenerateContent
	sse     bool   // alt=sse
	status  int
	errBody capped // an error answer
	dec     answerDecoder
	started bool // a stream's header was written
	chunks  int
	werr    error
}

func newGeminiWriter(w http.ResponseWriter, a *geminiAnswer, kind string, stream, sse bool) *geminiWriter {
	t := &geminiWriter{w: w, hdr: http.Header{}, a: a, kind: kind, stream: stream, sse: sse, errBody: capped{max: 64 << 10}}
	if stream {
		a.emit = t.writeChunk
	}
	return t
}

func (t *geminiWriter) Header() http.Header { return t.hdr }

func (t *geminiWriter) WriteHeader(status int) {
	if t.status != 0 {
		return
	}
	t.status = status
	if status >= 400 {
		return
	}
	if t.kind == KindAnthropic {
		t.dec = &anthropicDecoder{sink: t.a, sse: isSSE(t.hdr)}
	} else {
		t.dec = &chatDecoder{sink: t.a, sse: isSSE(t.hdr)}
	}
	for k, vs := range t.hdr {
		if k != "Content-Type" && k != "Content-Length" {
			t.w.Header()[k] = vs
		}
	}
	if !t.stream {
		return
	}
	if t.sse {
		t.w.Header().Set("Content-Type", "text/event-stream")
	} else {
		t.w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	}
	t.w.Header().Set("Cache-Control", "no-cache")
	t.w.WriteHeader(status)
	t.started = true
}

func (t *geminiWriter) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.WriteHeader(http.StatusOK)
	}
	if t.status >= 400 {
		return t.errBody.Write(p)
	}
	if err := t.dec.write(p); err != nil {
		return 0, err
	}
	if t.werr != nil {
		return 0, t.werr
	}
	return len(p), nil
}

// Flush passes forward's flush of each chunk on to a streaming client.
func (t *geminiWriter) Flush() {
	if t.started {
		_ = http.NewResponseController(t.w).Flush()
	}
}

// writeChunk writes one response chunk to a streaming client.
func (t *geminiWriter) writeChunk(v map[string]any) {
	if t.werr != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.werr = err
		return
	}
	var frame []byte
	switch {
	case t.sse:
		frame = append(append([]byte("data: "), b...), "\r\n\r\n"...)
	case t.chunks == 0:
		frame = append([]byte("["), b...)
	default:
		frame = append([]byte(",\r\n"), b...)
	}
	t.chunks++
	if _, err := t.w.Write(frame); err != nil {
		t.werr = errors.New("the client went away")
	}
}

// finish ends the client's answer once forward has returned (the call is
// settled and recorded by then): the final chunk, or the whole response,
// when the provider's answer came whole; an error otherwise.
func (t *geminiWriter) finish() {
	switch {
	case t.status == 0:
		return // nothing was relayed: the client went away
	case t.status >= 400:
		t.answerError()
		return
	}
	if !t.dec.end() {
		e := bullpen.Errorf(bullpen.EUNAVAILABLE, "the model provider's answer was cut short or malformed")
		if !t.started {
			writeError(t.w, KindGemini, e, true)
			return
		}
		_, body := errorBody(KindGemini, e)
		if !t.sse {
			body = append(append([]byte(",\r\n"), body...), ']')
		}
		t.Flush() // alone in its read, the SDK sees it as the stream's error
		_, _ = t.w.Write(body)
		t.Flush()
		return
	}
	final := t.a.final()
	if t.stream {
		t.writeChunk(final)
		if !t.sse {
			_, _ = t.w.Write([]byte("]"))
		}
		t.Flush()
		return
	}
	t.w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	t.w.WriteHeader(t.status)
	_ = json.NewEncoder(t.w).Encode(final)
}

// answerError answers the held error in Gemini's shape, with its status
// and the message it carried ({"error":{"message":…}} in all three APIs).
func (t *geminiWriter) answerError() {
	var v struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := string(bytes.TrimSpace(t.errBody.buf))
	if json.Unmarshal(t.errBody.buf, &v) == nil && v.Error.Message != "" {
		msg = v.Error.Message
	}
	if msg == "" {
		msg = http.StatusText(t.status)
	}
	if ra := t.hdr.Get("Retry-After"); ra != "" {
		t.w.Header().Set("Retry-After", ra)
	}
	writeGeminiError(t.w, t.status, msg)
}
