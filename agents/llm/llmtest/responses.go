package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm"
)

// FakeResponses is an OpenAI Responses API server: POST /v1/responses (also
// without /v1), streaming (SSE response.* events) or not, with function
// calls and usage (input_tokens_details.cached_tokens from automatic prefix
// caching, as the real service reports it). Codex speaks this protocol.
type FakeResponses struct{ fake }

// NewFakeResponses starts a fake on 127.0.0.1; Close it when done. A nil
// handler answers "ok".
func NewFakeResponses(h Handler) *FakeResponses {
	f := &FakeResponses{}
	f.start(h, f.serve)
	return f
}

// BaseURL is the URL to configure a client with (it ends in /v1).
func (f *FakeResponses) BaseURL() string { return f.URL + "/v1" }

func (f *FakeResponses) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if r.Method != http.MethodPost || path != "/responses" {
		openAIError(w, http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path, "")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	c, segs, err := decodeResponses(raw)
	if err != nil {
		openAIError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "")
		return
	}
	c.InputTokens = segTokens(segs)
	c.Time, c.Method, c.Path, c.Header = time.Now(), r.Method, r.URL.Path, r.Header.Clone()
	c, rep := f.rec.handle(c)
	if !wait(r, rep.Delay) {
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		openAIError(w, rep.Status, rep.Message, rep.RetryAfter)
		return
	}
	model := rep.Model
	if model == "" {
		model = c.Model
	}
	resp := map[string]any{"id": fmt.Sprintf("resp_fake%d", c.Seq), "object": "response",
		"created_at": time.Now().Unix(), "model": model, "status": "completed",
		"output": responseItems(c, rep), "usage": f.usage(c, segs, rep)}
	if !c.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	streamResponse(w, r, rep, resp)
}

// responseItems are the output items of a reply: a message with the text,
// then one function_call item per tool call. A call named as a namespaced
// tool of the request (mcp__bullpen__post_message) is sent with its
// namespace and own name, as the API does.
func responseItems(c CapturedRequest, rep Reply) []map[string]any {
	seq := c.Seq
	var items []map[string]any
	if rep.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake%d", seq),
			"status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for i, tc := range rep.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_fake%d_%d", seq, i)
		}
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake%d_%d", seq, i),
			"status": "completed", "call_id": tc.ID, "name": tc.Name, "arguments": args}
		for _, t := range c.Tools {
			if t.Namespace != "" && t.Name == tc.Name {
				item["namespace"], item["name"] = t.Namespace, t.Function
			}
		}
		items = append(items, item)
	}
	return items
}

// usage counts the prompt with the offline tokenizer; repeated prefixes
// are reported as cached, as OpenAI's automatic caching does.
func (f *FakeResponses) usage(c CapturedRequest, segs []segment, rep Reply) map[string]any {
	read, _ := f.rec.cacheUsage(c.Model, segs, false)
	total := 0
	for _, s := range segs {
		total += s.tokens
	}
	u := llm.Usage{InputTokens: total, CachedInputTokens: read, OutputTokens: outputTokens(rep)}
	if rep.Usage != nil {
		u = *rep.Usage
	}
	return map[string]any{
		"input_tokens":          u.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CachedInputTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.InputTokens + u.OutputTokens,
	}
}

// streamResponse sends the reply as the Responses API's SSE events.
func streamResponse(w http.ResponseWriter, r *http.Request, rep Reply, resp map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	seq, first := 0, true
	send := func(event string, data map[string]any) bool {
		if !first && !wait(r, rep.ChunkDelay) {
			return false
		}
		first = false
		data["type"], data["sequence_number"] = event, seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		w.(http.Flusher).Flush()
		return true
	}
	head := map[string]any{}
	for k, v := range resp {
		head[k] = v
	}
	head["status"], head["output"], head["usage"] = "in_progress", []any{}, nil
	if !send("response.created", map[string]any{"response": head}) ||
		!send("response.in_progress", map[string]any{"response": head}) {
		return
	}
	for i, item := range resp["output"].([]map[string]any) {
		if !streamItem(send, i, item, rep) {
			return
		}
	}
	send("response.completed", map[string]any{"response": resp})
}

// streamItem sends one output item: added, its deltas, done.
func streamItem(send func(string, map[string]any) bool, i int, item map[string]any, rep Reply) bool {
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	id := item["id"]
	if item["type"] == "message" {
		added["content"] = []any{}
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		if !send("response.output_item.added", map[string]any{"output_index": i, "item": added}) ||
			!send("response.content_part.added", map[string]any{"output_index": i, "item_id": id, "content_index": 0, "part": part}) {
			return false
		}
		for _, piece := range chunks(rep.Text, rep.ChunkSize) {
			if !send("response.output_text.delta", map[string]any{"output_index": i, "item_id": id, "content_index": 0, "delta": piece}) {
				return false
			}
			if rep.CutOff {
				panic(http.ErrAbortHandler)
			}
		}
		done := map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}
		return send("response.output_text.done", map[string]any{"output_index": i, "item_id": id, "content_index": 0, "text": rep.Text}) &&
			send("response.content_part.done", map[string]any{"output_index": i, "item_id": id, "content_index": 0, "part": done}) &&
			send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	added["arguments"] = ""
	if !send("response.output_item.added", map[string]any{"output_index": i, "item": added}) {
		return false
	}
	args := item["arguments"].(string)
	for _, frag := range byteChunks(args, 7) {
		if !send("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": id, "delta": frag}) {
			return false
		}
	}
	return send("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": id, "arguments": args}) &&
		send("response.output_item.done", map[string]any{"output_index": i, "item": item})
}
