package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Usage the fake Responses upstream reports for every answer.
const (
	respInput  = 900
	respCached = 500
	respOutput = 21
)

// newFakeResponses is a minimal OpenAI Responses API upstream: POST
// /v1/responses answers with a whole response object, or with the SSE
// events the API streams (created, text deltas, completed with usage).
func newFakeResponses(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"Unknown request URL: %s","type":"invalid_request_error","param":null,"code":null}}`, r.URL.Path)
			return
		}
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		resp := responseObject(req.Model, "completed", true)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(typ string, v map[string]any) {
			v["type"] = typ
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
			w.(http.Flusher).Flush()
		}
		send("response.created", map[string]any{"sequence_number": 0, "response": responseObject(req.Model, "in_progress", false)})
		item := map[string]any{"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []any{}}
		send("response.output_item.added", map[string]any{"sequence_number": 1, "output_index": 0, "item": item})
		for i, piece := range []string{"Hel", "lo ", "from ", "Responses"} {
			send("response.output_text.delta", map[string]any{"sequence_number": i + 2, "item_id": "msg_1",
				"output_index": 0, "content_index": 0, "delta": piece})
		}
		done := resp["output"].([]any)[0]
		send("response.output_item.done", map[string]any{"sequence_number": 6, "output_index": 0, "item": done})
		send("response.completed", map[string]any{"sequence_number": 7, "response": resp})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func responseObject(model, status string, done bool) map[string]any {
	o := map[string]any{"id": "resp_fake1", "object": "response", "created_at": 1, "status": status, "model": model,
		"output": []any{}, "usage": nil}
	if done {
		o["output"] = []any{map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": "Hello from Responses", "annotations": []any{}}}}}
		o["usage"] = map[string]any{"input_tokens": respInput, "input_tokens_details": map[string]any{"cached_tokens": respCached},
			"output_tokens": respOutput, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": respInput + respOutput}
	}
	return o
}

func llmUsage(in, cached, out int) llm.Usage {
	return llm.Usage{InputTokens: in, CachedInputTokens: cached, OutputTokens: out}
}
