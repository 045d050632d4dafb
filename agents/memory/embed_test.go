package memory_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
)

// fakeEmbeddings is a local OpenAI-compatible server: POST /v1/embeddings
// in OpenAI's shape. Its vectors count words by meaning (a tiny thesaurus),
// so a paraphrase that shares no word with an entry still lands near it.
type fakeEmbeddings struct {
	srv   *httptest.Server
	calls atomic.Int64
	fail  atomic.Bool          // answer 500
	delay atomic.Int64         // nanoseconds to wait before answering
	seen  atomic.Pointer[bool] // a request in the wrong shape
}

var concepts = map[string]int{
	"deploy": 0, "deploys": 0, "ship": 0, "release": 0, "releases": 0, "rollout": 0,
	"friday": 1, "fridays": 1, "weekend": 1, "week": 1,
	"smoke": 2, "tests": 2, "test": 2,
	"coffee": 3, "machine": 3, "espresso": 3,
	"floor": 4, "second": 4,
}

func fakeVector(text string) []float32 {
	v := make([]float32, 6)
	v[5] = 0.1
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		if i, ok := concepts[w]; ok {
			v[i]++
		}
	}
	return v
}

func newFakeEmbeddings(t *testing.T) *fakeEmbeddings {
	fe := &fakeEmbeddings{}
	fe.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fe.calls.Add(1)
		if d := fe.delay.Load(); d > 0 {
			select {
			case <-time.After(time.Duration(d)):
			case <-r.Context().Done():
				return
			}
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		bad := r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer sk-test" ||
			json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-embed" || len(req.Input) == 0
		if bad {
			fe.seen.Store(&bad)
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		if fe.fail.Load() {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string         `json:"object"`
			Data   []item         `json:"data"`
			Model  string         `json:"model"`
			Usage  map[string]int `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 5, "total_tokens": 5}}
		for i := len(req.Input) - 1; i >= 0; i-- { // out of order: the client sorts by index
			out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: fakeVector(req.Input[i])})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(fe.srv.Close)
	return fe
}

// withProvider sets up an OpenAI-compatible provider on fe, with
// embeddingsModel, as the engineer's provider (its role names it).
func (f *fixture) withProvider(fe *fakeEmbeddings, embeddingsModel string) {
	f.t.Helper()
	_, err := f.db.Transact(f.ctx, func(tx *store.Tx) error {
		if _, err := tx.CreateProvider(bullpen.Provider{Name: "local", Kind: bullpen.ProviderOpenAI, BaseURL: fe.srv.URL + "/v1",
			APIKey: "sk-test", Model: "chat", EmbeddingsModel: embeddingsModel, Source: bullpen.ProviderFromSettings}); err != nil {
			return err
		}
		_, err := tx.CreateAgent(bullpen.Agent{MemberID: f.eng.ID, Role: "engineer", Spec: `{"provider":"local"}`})
		return err
	})
	if err != nil {
		f.t.Fatalf("provider: %v", err)
	}
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func embedConfigLog(c memory.Config, log *logBuf) memory.Config {
	c.Log = slog.New(slog.NewTextHandler(log, nil))
	return c
}

func embedConfig(f *fixture, log *logBuf) memory.Config {
	return memory.Config{Embedder: &memory.ProviderEmbedder{DB: f.db}, EmbedTimeout: 300 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(log, nil))}
}

const paraphrase = "Can we ship this on the weekend?"

// Full text alone misses a paraphrase; the vectors from the agent's
// provider find it, in one embeddings call per recall, and leave the
// unrelated entry out.
func TestRecallFindsParaphraseByVector(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		fe := newFakeEmbeddings(t)
		f.withProvider(fe, "fake-embed")
		var log logBuf
		m := memory.New(f.db, embedConfig(f, &log))
		lesson, _, err := m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "Never deploy on Fridays; run the smoke tests first", Kind: bullpen.MemoryLesson})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "The coffee machine is on the second floor"}); err != nil {
			t.Fatal(err)
		}
		if fe.calls.Load() != 2 {
			t.Fatalf("%d embeddings calls for two writes, want 2", fe.calls.Load())
		}
		// The same memory without embeddings: full text finds nothing.
		plain, err := f.m.Recall(f.ctx, f.eng.ID, f.general.ID, paraphrase, 600)
		if err != nil || len(plain) != 0 {
			t.Fatalf("full-text recall of the paraphrase = %+v, %v; want nothing (the test needs a real paraphrase)", plain, err)
		}
		rs, err := m.Recall(f.ctx, f.eng.ID, f.general.ID, paraphrase, 600)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].EntryID != lesson.ID || rs[0].Why != "similar" || rs[0].Score < 0.5 {
			t.Fatalf("recall with vectors = %+v; want only the lesson %d, similar", rs, lesson.ID)
		}
		if fe.calls.Load() != 3 {
			t.Errorf("%d embeddings calls after one recall, want 3 (one per recall)", fe.calls.Load())
		}
		if fe.seen.Load() != nil {
			t.Errorf("the client sent a request in the wrong shape")
		}
		// Both signals: a full-text match that is also similar ranks first.
		both, err := m.Recall(f.ctx, f.eng.ID, f.general.ID, "deploy on the weekend", 600)
		if err != nil || len(both) == 0 || both[0].EntryID != lesson.ID || both[0].Why != "match+similar" || both[0].Score <= 1 {
			t.Fatalf("recall by both = %+v, %v; want the lesson first, match+similar, score over 1", both, err)
		}
		if log.String() != "" {
			t.Errorf("log lines without a failure: %s", log.String())
		}
	})
}

// An edit clears the old vector (cached or not) and embeds the new text;
// a vector stored late for text since edited is refused.
func TestEmbeddingFollowsText(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		fe := newFakeEmbeddings(t)
		f.withProvider(fe, "fake-embed")
		var log logBuf
		m := memory.New(f.db, embedConfig(f, &log))
		e, _, err := m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "Never deploy on Fridays"})
		if err != nil {
			t.Fatal(err)
		}
		if rs, err := m.Recall(f.ctx, f.eng.ID, f.general.ID, paraphrase, 600); err != nil || len(rs) != 1 {
			t.Fatalf("before the edit, the paraphrase recalls %+v, %v; want the entry", rs, err)
		}
		text := "The espresso machine is on the second floor"
		if _, err := m.Update(f.ctx, f.ada, f.eng.ID, e.ID, bullpen.MemoryUpdate{Text: &text}); err != nil {
			t.Fatal(err)
		}
		rs, err := m.Recall(f.ctx, f.eng.ID, f.general.ID, paraphrase, 600)
		if err != nil || len(rs) != 0 {
			t.Fatalf("after the edit, the old meaning recalls %+v, %v; want nothing", rs, err)
		}
		rs, err = m.Recall(f.ctx, f.eng.ID, f.general.ID, "where is the coffee", 600)
		if err != nil || len(rs) != 1 || rs[0].Why != "similar" {
			t.Fatalf("after the edit, the new meaning recalls %+v, %v; want the entry, similar", rs, err)
		}
		_, err = f.db.Transact(f.ctx, func(tx *store.Tx) error {
			ok, err := tx.SetMemoryEmbedding(e.ID, "Never deploy on Fridays", "fake-embed", []float32{1, 1, 0, 0, 0, 0.1})
			if err == nil && ok {
				t.Errorf("a vector of the old text was stored on the edited entry")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		vs, err := f.db.MemoryVectorKeys(f.ctx, f.eng.ID, -1, "other-model", 10)
		if err != nil || len(vs) != 0 {
			t.Errorf("vectors of another model = %v, %v; want none", vs, err)
		}
	})
}

// A failing or slow embeddings endpoint fails neither a write nor a
// recall: full text alone, and a log line.
func TestEmbeddingsFailureFallsBackToFullText(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		fe := newFakeEmbeddings(t)
		f.withProvider(fe, "fake-embed")
		var log logBuf
		m := memory.New(f.db, embedConfig(f, &log))
		for _, mode := range []string{"failing", "slow"} {
			fe.fail.Store(mode == "failing")
			if mode == "slow" {
				fe.delay.Store(int64(5 * time.Second))
			}
			start := time.Now()
			e, _, err := m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "Never deploy on Fridays, " + mode})
			if err != nil {
				t.Fatalf("%s: write failed: %v", mode, err)
			}
			if got, err := f.db.Memory(f.ctx, e.ID); err != nil || got.Text != e.Text {
				t.Fatalf("%s: entry not kept: %v", mode, err)
			}
			rs, err := m.Recall(f.ctx, f.eng.ID, f.general.ID, "deploy today", 600)
			if err != nil || len(rs) == 0 || rs[0].Why != "match" {
				t.Fatalf("%s: recall = %+v, %v; want the full-text match", mode, rs, err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("%s: a write and a recall took %v: the embeddings timeout did not hold", mode, d)
			}
		}
		if n := strings.Count(log.String(), "full text alone"); n != 4 {
			t.Errorf("%d log lines of falling back, want 4 (a write and a recall, twice):\n%s", n, log.String())
		}
	})
}

// A provider without an embeddings model is never asked for vectors.
func TestNoEmbeddingsModelNoCalls(t *testing.T) {
	each(t, memory.Config{}, func(t *testing.T, f *fixture) {
		fe := newFakeEmbeddings(t)
		f.withProvider(fe, "")
		var log logBuf
		m := memory.New(f.db, embedConfig(f, &log))
		if _, _, err := m.Write(f.ctx, f.ada, f.eng.ID, bullpen.MemoryInput{Text: "Never deploy on Fridays"}); err != nil {
			t.Fatal(err)
		}
		rs, err := m.Recall(f.ctx, f.eng.ID, f.general.ID, "deploy today", 600)
		if err != nil || len(rs) != 1 {
			t.Fatalf("recall = %+v, %v", rs, err)
		}
		if fe.calls.Load() != 0 || log.String() != "" {
			t.Errorf("%d embeddings calls and log %q without an embeddings model", fe.calls.Load(), log.String())
		}
	})
}
