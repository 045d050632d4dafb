package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/chromedp/chromedp"
)

// embeddingsServer is an OpenAI-compatible server: POST /v1/embeddings
// in OpenAI's shape, whose vectors count words by meaning (a tiny
// thesaurus, so a paraphrase that shares no word with an entry lands near
// it), and every other request served by a chat fake behind it.
type embeddingsServer struct {
	*httptest.Server
	key  string
	chat *llmtest.FakeOpenAI

	mu     sync.Mutex
	models []string // the model each embeddings request named
	bad    []string // requests in a shape the real API refuses
}

var embedConcepts = map[string]int{
	"deploy": 0, "deploys": 0, "ship": 0, "release": 0, "releases": 0,
	"friday": 1, "fridays": 1, "weekend": 1,
	"smoke": 2, "tests": 2,
}

func embedVector(text string) []float64 {
	v := make([]float64, 4)
	v[3] = 0.1
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if i, ok := embedConcepts[w]; ok {
			v[i]++
		}
	}
	n := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2] + v[3]*v[3])
	for i := range v {
		v[i] /= n
	}
	return v
}

func newEmbeddingsServer(t *testing.T, key string) *embeddingsServer {
	t.Helper()
	es := &embeddingsServer{key: key, chat: llmtest.NewFakeOpenAI(llmtest.Text("On it."))}
	chatURL, _ := url.Parse(es.chat.URL)
	proxy := httputil.NewSingleHostReverseProxy(chatURL)
	es.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			proxy.ServeHTTP(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		err := json.NewDecoder(r.Body).Decode(&req)
		es.mu.Lock()
		defer es.mu.Unlock()
		if err != nil || r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer "+key || req.Model == "" || len(req.Input) == 0 {
			es.bad = append(es.bad, fmt.Sprintf("%s %s model=%q inputs=%d err=%v", r.Method, r.URL.Path, req.Model, len(req.Input), err))
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		es.models = append(es.models, req.Model)
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		out := struct {
			Object string         `json:"object"`
			Data   []item         `json:"data"`
			Model  string         `json:"model"`
			Usage  map[string]int `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}}
		for i, in := range req.Input {
			out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: embedVector(in)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(func() { es.Close(); es.chat.Close() })
	return es
}

// embedded returns the models of the embeddings requests so far, and
// fails the test on any request in the wrong shape.
func (es *embeddingsServer) embedded(t *testing.T) []string {
	t.Helper()
	es.mu.Lock()
	defer es.mu.Unlock()
	for _, b := range es.bad {
		t.Errorf("an embeddings request the real API would refuse: %s", b)
	}
	es.bad = nil
	return append([]string(nil), es.models...)
}

// askTurn posts body as the admin and returns the detail of the agent's
// turn that answers it.
func askTurn(t *testing.T, m *Main, token string, agentID int64, body string) view.TurnDetail {
	t.Helper()
	var before struct{ Items []bullpen.Turn }
	apiCall(t, m, token, "GET", fmt.Sprintf("/api/v1/agents/%d/turns", agentID), nil, &before)
	if st := apiCall(t, m, token, "POST", "/api/v1/channels/1/messages", map[string]any{"body": body}, nil); st != 201 {
		t.Fatalf("post %q = %d", body, st)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var turns struct{ Items []bullpen.Turn }
		apiCall(t, m, token, "GET", fmt.Sprintf("/api/v1/agents/%d/turns", agentID), nil, &turns)
		if len(turns.Items) > len(before.Items) && turns.Items[0].State == "done" {
			var d view.TurnDetail
			apiCall(t, m, token, "GET", fmt.Sprintf("/api/v1/turns/%d", turns.Items[0].ID), nil, &d)
			return d
		}
	}
	t.Fatalf("no finished turn for %q", body)
	return view.TurnDetail{}
}

// In real Chromium against the real server: the provider form in
// Settings has an embeddings model field. A bad value (a name with a
// space) is refused inline, under the field, and changes nothing; a good
// one is saved through the same API and round-trips (the row and the
// form show it again), and from then on the agents on that provider
// recall by meaning: a new entry gets its vector from the provider's
// /embeddings endpoint, and a paraphrase that shares no word with it
// recalls it ("similar"), which the same question did not do before.
// At 1400×900 and 390×844 (screenshots at 1024×768 too).
func TestBrowserEmbeddingsModelInSettings(t *testing.T) {
	const key = "sk-embed-0000111122223333"
	fake := newEmbeddingsServer(t, key)
	m, token := startQuiet(t, "serve", nil)
	var p bullpen.Provider
	if st := apiCall(t, m, token, "POST", "/api/v1/settings/providers", map[string]any{"name": "local", "kind": "openai",
		"base_url": fake.URL + "/v1", "api_key": key}, &p); st != 201 || p.EmbeddingsModel != "" {
		t.Fatalf("create provider = %d %+v", st, p)
	}
	var eng view.Hired
	if st := apiCall(t, m, token, "POST", "/api/v1/agents", map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng); st != 201 {
		t.Fatalf("hire = %d", st)
	}
	memBase := fmt.Sprintf("/api/v1/agents/%d/memory", eng.Agent.ID)
	apiCall(t, m, token, "POST", memBase, map[string]any{"text": "Never deploy on Fridays; run the smoke tests first", "kind": "lesson"}, nil)
	const question = "@eng can we ship it this weekend?" // no word in common with the lessons
	if d := askTurn(t, m, token, eng.Agent.ID, question); len(d.Memory) != 0 {
		t.Fatalf("without embeddings the paraphrase recalled %+v", d.Memory)
	}
	if got := fake.embedded(t); len(got) != 0 {
		t.Fatalf("embeddings asked for before any embeddings model was set: %v", got)
	}
	provider := func() bullpen.Provider {
		var got bullpen.Provider
		apiCall(t, m, token, "GET", fmt.Sprintf("/api/v1/settings/providers/%d", p.ID), nil, &got)
		return got
	}

	for _, size := range [][2]int64{{1400, 900}, {390, 844}} {
		tab := browsertest.Browser(t, 120*time.Second)
		problems := browsertest.FailOnErrors(t, tab)
		run, waitFor := browserSteps(t, tab)
		run("viewport", chromedp.EmulateViewport(size[0], size[1]))
		login(run, m, token)
		run("settings", chromedp.Navigate(m.URL()+"settings"), chromedp.WaitVisible(sel("provider-local")))
		waitFor("the page's scripts", `!!document.querySelector('`+sel("provider-edit-local")+`')`)
		run("edit", browsertest.Click(sel("provider-edit-local")))
		before := provider()
		waitFor("the form holds the provider's embeddings model",
			`document.querySelector('`+sel("provider-embeddings-model")+`').value === `+jsString(before.EmbeddingsModel))
		if size[0] < 600 {
			run("an Anthropic provider has no embeddings", chromedp.SetValue(sel("provider-kind"), "anthropic"),
				chromedp.Evaluate[chromedp.Void](`document.querySelector('`+sel("provider-kind")+`').dispatchEvent(new Event("change"))`))
			waitFor("the field is off", `document.querySelector('`+sel("provider-embeddings-model")+`').disabled`)
			run("back to OpenAI-compatible", chromedp.SetValue(sel("provider-kind"), "openai"),
				chromedp.Evaluate[chromedp.Void](`document.querySelector('`+sel("provider-kind")+`').dispatchEvent(new Event("change"))`))
			waitFor("the field is on", `!document.querySelector('`+sel("provider-embeddings-model")+`').disabled`)
		}

		// A bad value: refused under the field, the form keeps it, the
		// provider stays as it was.
		run("a bad value", chromedp.SetValue(sel("provider-embeddings-model"), "text embedding 3"), browsertest.Click(sel("provider-save")))
		field := `document.querySelector('` + sel("provider-error-embeddings_model") + `')`
		waitFor("refused inline", `!`+field+`.hidden && `+field+`.textContent.includes("not a model name") && `+
			`document.querySelector('`+sel("provider-embeddings-model")+`').getAttribute("aria-invalid") === "true" && `+
			`document.activeElement === document.querySelector('`+sel("provider-embeddings-model")+`')`)
		if v, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('`+sel("provider-embeddings-model")+`').value`)); v != "text embedding 3" {
			t.Errorf("after the refusal the field holds %q, want what was typed", v)
		}
		if shown, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`!document.querySelector('`+sel("settings-error")+`').hidden || !document.querySelector('`+sel("provider-form-error")+`').hidden`)); shown {
			t.Error("the field's error also shows away from the field")
		}
		if after := provider(); after.Version != before.Version || after.EmbeddingsModel != before.EmbeddingsModel {
			t.Errorf("a refused value changed the provider: %+v → %+v", before, after)
		}
		refusedOnly(t, problems, m.URL()+fmt.Sprintf("api/v1/settings/providers/%d", p.ID))
		if size[0] < 600 {
			run("scroll to the field", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+sel("provider-embeddings-model")+`').scrollIntoView({block: "center"})`))
		}
		screenshot(t, tab, fmt.Sprintf("settings-embeddings-refused-%dx%d.png", size[0], size[1]))
		if size[0] < 600 {
			continue // the wide pass saved it
		}

		// A good value: saved, shown in the row, and back in the form.
		run("a good value", chromedp.SetValue(sel("provider-embeddings-model"), "fake-embed"), browsertest.Click(sel("provider-save")))
		waitFor("saved and shown", `document.querySelector('`+sel("provider-embeddings-local")+`') !== null && `+
			`document.querySelector('`+sel("provider-embeddings-local")+`').textContent.includes("fake-embed")`)
		if got := provider(); got.EmbeddingsModel != "fake-embed" || got.Version == before.Version {
			t.Fatalf("after Save the provider = %+v", got)
		}
		screenshot(t, tab, "settings-embeddings-1400x900.png")
		run("1024×768", chromedp.EmulateViewport(1024, 768))
		screenshot(t, tab, "settings-embeddings-1024x768.png")
	}

	// Vectors are on: a new entry is embedded with the saved model, and
	// the paraphrase now recalls it by meaning.
	var friday struct {
		ID int64 `json:"id"`
	}
	apiCall(t, m, token, "POST", memBase, map[string]any{"text": "Releases never go out on a Friday", "kind": "lesson"}, &friday)
	if got := fake.embedded(t); len(got) != 1 || got[0] != "fake-embed" {
		t.Fatalf("embeddings requests after the save = %v, want one for fake-embed", got)
	}
	d := askTurn(t, m, token, eng.Agent.ID, question)
	if len(d.Memory) != 1 || d.Memory[0].EntryID != friday.ID || d.Memory[0].Why != "similar" {
		t.Errorf("with embeddings the paraphrase recalled %+v, want entry %d as similar", d.Memory, friday.ID)
	}
	if got := fake.embedded(t); len(got) != 2 {
		t.Errorf("embeddings requests after the turn = %v, want the trigger's too", got)
	}
}

// refusedOnly checks that the tab's only problems are 4xx answers from
// path (the refusals the test asked for).
func refusedOnly(t *testing.T, p *browsertest.Problems, path string) {
	t.Helper()
	want := regexp.MustCompile(`^(HTTP 4\d\d for ` + regexp.QuoteMeta(path) + `|log error \(network\): Failed to load resource: the server responded with a status of 4\d\d \([A-Za-z ]+\) ` + regexp.QuoteMeta(path) + `)$`)
	got := p.Take()
	if len(got) == 0 {
		t.Errorf("expected the API to refuse %s; the page saw no refusal", path)
	}
	for _, g := range got {
		if !want.MatchString(g) {
			t.Errorf("browser: %s", g)
		}
	}
}
