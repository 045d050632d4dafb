package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/view"
)

// The secrets of the redaction test: a provider key, the user information
// of the provider's base URL, and the metrics token (a configured secret
// no provider knows).
const (
	leakKey      = "sk-leak-9d8c7b6a5f4e3d2c1b0aKEY"
	leakUser     = "alice-leak"
	leakPass     = "s3cret-basepass"
	leakMetrics  = "metrics-token-5e6f7a8b9c"
	leakUserinfo = leakUser + ":" + leakPass
)

// echoProvider is an OpenAI-compatible provider that quotes every secret
// it can: in the built-in turn's answer and a header, in the gateway's
// 200 stream (split across chunks) and header, and in its errors.
type echoProvider struct {
	fake     *llmtest.FakeOpenAI
	proxy    *httputil.ReverseProxy
	srv      *httptest.Server
	once     sync.Once
	inTurn   chan struct{} // the built-in turn's first call arrived
	release  chan struct{} // let it answer
	everyone string        // all the secrets, in one line
}

func newEchoProvider(t *testing.T) *echoProvider {
	p := &echoProvider{inTurn: make(chan struct{}), release: make(chan struct{}),
		everyone: fmt.Sprintf("key %s base https://%s@h/v1 metrics %s", leakKey, leakUserinfo, leakMetrics)}
	p.fake = llmtest.NewFakeOpenAI(llmtest.Text("All done. I was told: " + p.everyone))
	t.Cleanup(p.fake.Close)
	u, _ := url.Parse(p.fake.URL)
	p.proxy = httputil.NewSingleHostReverseProxy(u)
	p.proxy.ModifyResponse = func(r *http.Response) error { r.Header.Set("X-Echo", p.everyone); return nil }
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	t.Cleanup(p.letGo) // runs first: a failed test does not leave the turn's call held
	return p
}

// letGo lets the held built-in call answer (once).
func (p *echoProvider) letGo() {
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

func (p *echoProvider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	w.Header().Set("X-Echo", p.everyone)
	switch {
	case bytes.Contains(body, []byte("Reply with OK.")): // Settings → Test
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (%s)","type":"invalid_request_error","code":"invalid_api_key"}}`, leakKey, p.everyone)
	case bytes.Contains(body, []byte("gateway-fail")):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":{"message":"upstream broke: %s","type":"server_error"}}`, p.everyone)
	case bytes.Contains(body, []byte("gateway-ok")):
		w.Header().Set("Content-Type", "text/event-stream")
		full := fmt.Sprintf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\ndata: [DONE]\n\n", p.everyone)
		for _, cut := range []string{leakKey[:10], leakUser[:4], leakMetrics[:7]} { // each secret split across two chunks
			i := strings.Index(full, cut) + len(cut)
			io.WriteString(w, full[:i])
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
			full = full[i:]
		}
		io.WriteString(w, full)
	default: // the built-in turn: its first call held until the gateway calls are done
		first := false
		p.once.Do(func() { first = true; close(p.inTurn) })
		if first {
			<-p.release
		}
		p.proxy.ServeHTTP(w, r)
	}
}

// TestNoSecretInAnyView configures a provider with a key and a base URL
// with user information, runs a built-in turn and gateway calls whose
// upstream echoes every secret (200 body and header, streamed; errors),
// opens the turn inspector, Settings → Test, the events API, the messages,
// the dashboard's timeline, and reads the log: no secret shows anywhere.
func TestNoSecretInAnyView(t *testing.T) {
	prov := newEchoProvider(t)
	t.Setenv("BULLPEN_METRICS_TOKEN", leakMetrics)
	for _, k := range []string{"BULLPEN_PROVIDER", "BULLPEN_OPENAI_API_KEY", "BULLPEN_ANTHROPIC_API_KEY", "BULLPEN_OPENAI_BASE_URL"} {
		t.Setenv(k, "")
	}
	var out strings.Builder
	var logs lockedBuffer
	m := NewMain(&out, &logs)
	if err := m.ParseFlags("serve", []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--sandboxes=off"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	api := apiClient{t: t, base: m.URL() + "api/v1", token: tokenRE.FindString(out.String())}
	views := map[string]string{}
	get := func(name, path string) {
		t.Helper()
		req, _ := http.NewRequest("GET", strings.TrimSuffix(m.URL(), "/")+path, nil)
		req.Header.Set("Authorization", "Bearer "+api.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		views[name] = string(b)
	}

	base := strings.Replace(prov.srv.URL, "http://", "http://"+leakUserinfo+"@", 1) + "/v1"
	var p bullpen.Provider
	api.do("POST", "/settings/providers", map[string]any{"name": "hung", "kind": "openai", "base_url": base,
		"api_key": leakKey, "model": "gpt-4o-mini", "is_default": true}, http.StatusCreated, &p)
	var test bullpen.ProviderTest
	api.do("POST", fmt.Sprintf("/settings/providers/%d/test", p.ID), nil, http.StatusOK, &test)
	raw, _ := json.Marshal(test)
	views["settings test"] = string(raw)

	role, err := m.Agents.Catalog().Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	role.Provider, role.Model = "hung", "gpt-4o-mini"
	var h view.Hired
	api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, &h)
	ch, err := m.Office.ChannelByName(context.Background(), bullpen.Member{ID: 1, IsAdmin: true}, bullpen.GeneralChannel)
	if err != nil {
		t.Fatal(err)
	}
	api.do("POST", fmt.Sprintf("/channels/%d/messages", ch.ID), map[string]any{"body": "@" + h.Agent.Handle + " hello"}, http.StatusCreated, nil)

	select {
	case <-prov.inTurn:
	case <-time.After(30 * time.Second):
		t.Fatal("the built-in turn never called the provider")
	}
	turnID := runningTurn(t, m)
	tok, err := m.Office.MintTurnToken(context.Background(), h.Agent.ID, turnID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(m.gatewayHandler())
	defer gw.Close()
	for _, word := range []string{"gateway-ok", "gateway-fail"} {
		req, _ := http.NewRequest("POST", gw.URL+"/openai/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"`+word+`"}]}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var hdr strings.Builder
		resp.Header.Write(&hdr)
		views["gateway "+word] = fmt.Sprintf("%d\n%s\n%s", resp.StatusCode, hdr.String(), b)
		if word == "gateway-ok" && (resp.StatusCode != 200 || !strings.Contains(string(b), "[DONE]")) {
			t.Fatalf("gateway answer not passed on: %s", views["gateway "+word])
		}
	}
	prov.letGo()
	waitTurnEnded(t, m, turnID)

	get("turn inspector", fmt.Sprintf("/api/v1/turns/%d", turnID))
	get("turn page", fmt.Sprintf("/turns/%d", turnID))
	get("events", "/api/v1/events?since=0&limit=1000")
	get("messages", fmt.Sprintf("/api/v1/channels/%d/messages", ch.ID))
	get("dashboard timeline", "/")
	if !strings.Contains(views["turn inspector"], `"via":"gateway"`) || !strings.Contains(views["events"], "All done") {
		t.Fatalf("the run did not record the gateway calls and the agent's answer:\n%.3000s\n%.3000s", views["turn inspector"], views["events"])
	}
	views["log"] = logs.String()
	for where, text := range views {
		for _, s := range []string{leakKey, leakUserinfo, leakPass, leakMetrics} {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("the %s shows %q: …%s…", where, s, text[max(0, i-80):min(len(text), i+80)])
			}
		}
	}
}

// runningTurn is the ID of the one turn that has started.
func runningTurn(t *testing.T, m *Main) int64 {
	t.Helper()
	evs, err := m.DB.EventsAfter(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == bullpen.EventTurnStarted {
			var te bullpen.TurnEvent
			if err := json.Unmarshal(ev.Payload, &te); err != nil {
				t.Fatal(err)
			}
			return te.TurnID
		}
	}
	t.Fatal("no turn started")
	return 0
}

// waitTurnEnded waits for the turn's end event.
func waitTurnEnded(t *testing.T, m *Main, turnID int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		evs, _ := m.DB.EventsAfter(context.Background(), 0, 100000)
		for _, ev := range evs {
			if ev.Type == bullpen.EventTurnFinished || ev.Type == bullpen.EventTurnFailed {
				var te bullpen.TurnEvent
				if json.Unmarshal(ev.Payload, &te) == nil && te.TurnID == turnID {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("turn %d did not end", turnID)
}

// lockedBuffer is a log sink safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
