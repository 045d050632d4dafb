package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/agents/llm/openai"
)

// Embed posts OpenAI's /embeddings shape with the key, puts the vectors
// in the inputs' order whatever the answer's, and makes one attempt only.
func TestEmbed(t *testing.T) {
	var calls atomic.Int64
	var status atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer k" ||
			json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "emb" || len(req.Input) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if s := status.Load(); s != 0 {
			http.Error(w, "no", int(s))
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","model":"emb","data":[` +
			`{"object":"embedding","index":1,"embedding":[0.5,-1]},` +
			`{"object":"embedding","index":0,"embedding":[1,2]}]}`))
	}))
	defer srv.Close()
	p := openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "k", MaxRetries: -1, Timeout: 5 * time.Second})
	vs, err := p.Embed(context.Background(), "emb", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0][0] != 1 || vs[0][1] != 2 || vs[1][0] != 0.5 || vs[1][1] != -1 {
		t.Fatalf("Embed = %v, want [[1 2] [0.5 -1]]", vs)
	}
	status.Store(http.StatusServiceUnavailable)
	if _, err := p.Embed(context.Background(), "emb", []string{"a", "b"}); err == nil {
		t.Fatal("Embed on a 503 succeeded")
	}
	if calls.Load() != 2 {
		t.Errorf("%d calls, want 2 (no retry)", calls.Load())
	}
	if _, err := p.Embed(context.Background(), "", []string{"a"}); err == nil {
		t.Error("Embed without a model succeeded")
	}
}
