package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkResponsesStream measures a streamed Responses call of 2,000
// text deltas through the gateway: passed through from a Responses
// provider ("native"), and translated from a Chat provider's 2,000 chunks
// ("via-chat"). The figure is the time per whole answer.
//
//	go test -run '^$' -bench ResponsesStream -benchtime 200x ./gateway/
func BenchmarkResponsesStream(b *testing.B) {
	const n = 2000
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word %d \"},\"finish_reason\":null}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		io.WriteString(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":900,\"total_tokens\":2100}}\n\ndata: [DONE]\n\n")
	}))
	defer chat.Close()
	native := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"word %d \"}\n\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1200,\"output_tokens\":900}}}\n\n")
	}))
	defer native.Close()
	for _, tc := range []struct {
		name string
		up   Upstream
	}{{"native", Upstream{Kind: KindOpenAI, BaseURL: native.URL, APIKey: realKey, API: APIResponses}},
		{"via-chat", Upstream{Kind: KindOpenAI, BaseURL: chat.URL, APIKey: realKey, API: APIChat}}} {
		gw := newRig(b, tc.up, func(c *Config) { c.Transport, c.Recorder = nil, discardRecorder{} })
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				r, _ := http.NewRequest(http.MethodPost, gw.srv.URL+"/openai/v1/responses", strings.NewReader(`{"model":"m","stream":true,"input":"hi"}`))
				r.Header.Set("Authorization", "Bearer "+turnToken)
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), "response.completed") {
					b.Fatalf("no response.completed: %.300s", body)
				}
			}
		})
	}
}
