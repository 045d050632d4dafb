package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// BenchmarkPassThrough measures what the gateway adds to one model call:
// the same Anthropic-shaped answer fetched straight from the upstream and
// through the gateway (auth, budget check, tee, usage, record). "small" is
// a one-event answer (per-request overhead), "stream" 2,000 flushed SSE
// events (~330 KB, relay throughput).
//
//	go test -run '^$' -bench PassThrough -benchtime 2000x ./gateway/
func BenchmarkPassThrough(b *testing.B) {
	for _, events := range []int{1, 2000} {
		body := sseBody(events)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range body {
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			}
		}))
		name := "small"
		if events > 1 {
			name = "stream"
		}
		gw := newRig(b, Upstream{Kind: KindAnthropic, BaseURL: up.URL, APIKey: realKey}, func(c *Config) { c.Transport, c.Recorder = nil, discardRecorder{} })
		size := int64(len(strings.Join(body, "")))
		b.Run(name+"/direct", func(b *testing.B) { benchFetch(b, up.URL+"/v1/messages", size) })
		b.Run(name+"/gateway", func(b *testing.B) { benchFetch(b, gw.srv.URL+"/anthropic/v1/messages", size) })
		up.Close()
	}
}

func benchFetch(b *testing.B, url string, size int64) {
	b.SetBytes(size)
	req := `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for b.Loop() {
		r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(req))
		r.Header.Set("X-Api-Key", turnToken)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != size {
			b.Fatalf("got %d bytes, want %d", n, size)
		}
	}
}

// sseBody is an Anthropic stream of n text deltas between message_start
// and message_stop.
func sseBody(n int) []string {
	out := []string{"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1200,\"output_tokens\":1}}}\n\n"}
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", i))
	}
	return append(out, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":900}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
}

// discardRecorder builds each record, as the real one would, and drops it.
type discardRecorder struct{}

func (discardRecorder) RecordModelCall(context.Context, bullpen.ModelCall) error { return nil }
