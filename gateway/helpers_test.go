package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
)

// Secrets of the tests: the real provider credentials, which must never
// reach a client, and the turn token, which must never reach a provider.
const (
	realKey   = "sk-real-provider-key-0123456789"
	realOAuth = "sk-ant-oat01-real-subscription-token"
	turnToken = "bp_turn_token_abcdef"
	agentTok  = "bp_agent_token_abcdef" // an agent's own token: no turn
)

var engineer = bullpen.Member{ID: 7, Handle: "engineer", Kind: bullpen.KindAgent}

// fakeAuth knows the turn token (turn 42) and an agent token (turn 0).
type fakeAuth struct{}

func (fakeAuth) AuthenticateTurn(_ context.Context, secret string) (bullpen.Member, int64, error) {
	switch secret {
	case turnToken:
		return engineer, 42, nil
	case agentTok:
		return engineer, 0, nil
	}
	return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "bad token")
}

type fixedUpstream struct{ up Upstream }

func (f fixedUpstream) Upstream(context.Context, bullpen.Member) (Upstream, error) { return f.up, nil }

// fakeTurns keeps one turn's usage and a settable budget stop; it grants
// every reservation in full unless grant is set.
type fakeTurns struct {
	mu       sync.Mutex
	usage    llm.Usage
	adds     int
	stop     Budget
	stopped  []Budget
	grant    int // output tokens granted at most (0: what is asked)
	reserved []Reservation
	settled  []bool // complete, per settled call
}

func (t *fakeTurns) Reserve(_ context.Context, turnID int64, input, maxOutput int) (Budget, Reservation, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if turnID != 42 {
		return Budget{}, Reservation{}, bullpen.Errorf(bullpen.EFORBIDDEN, "turn %d is not running", turnID)
	}
	b := t.stop
	b.AgentID = 3
	if b.Limit != "" {
		return b, Reservation{}, nil
	}
	r := Reservation{ID: int64(len(t.reserved) + 1), Input: input, Output: maxOutput}
	if t.grant > 0 {
		r.Output = min(r.Output, t.grant)
	}
	t.reserved = append(t.reserved, r)
	return b, r, nil
}

func (t *fakeTurns) Settle(_ context.Context, _ int64, r Reservation, u llm.Usage, complete bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !complete {
		u = llm.Usage{InputTokens: r.Input, OutputTokens: r.Output}
	}
	t.settled = append(t.settled, complete)
	if u != (llm.Usage{}) {
		t.usage, t.adds = t.usage.Add(u), t.adds+1
	}
	return nil
}

func (t *fakeTurns) BudgetStopped(_ context.Context, _ int64, b Budget) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = append(t.stopped, b)
	return nil
}

// usageSoon is the turn's usage once it equals want, or what it is after
// 2 s: the gateway records usage after it has passed the stream's last
// bytes on, so a client can finish reading first.
func (t *fakeTurns) usageSoon(want llm.Usage) llm.Usage {
	deadline := time.Now().Add(2 * time.Second)
	for {
		u, _, _ := t.snapshot()
		if u == want || time.Now().After(deadline) {
			return u
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (t *fakeTurns) snapshot() (llm.Usage, int, []Budget) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usage, t.adds, append([]Budget(nil), t.stopped...)
}

// memRecorder keeps the recorded model calls in memory.
type memRecorder struct {
	mu    sync.Mutex
	calls []bullpen.ModelCall
}

func (m *memRecorder) RecordModelCall(_ context.Context, c bullpen.ModelCall) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, c)
	return nil
}

func (m *memRecorder) all() []bullpen.ModelCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]bullpen.ModelCall(nil), m.calls...)
}

// tapTransport keeps every upstream request's header and the exact bytes
// of every upstream answer, as they came off the wire.
type tapTransport struct {
	mu      sync.Mutex
	headers []http.Header
	urls    []string
	bodies  []*bytes.Buffer
}

func (t *tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	buf := &bytes.Buffer{}
	t.mu.Lock()
	t.headers = append(t.headers, r.Header.Clone())
	t.urls = append(t.urls, r.URL.String())
	t.bodies = append(t.bodies, buf)
	t.mu.Unlock()
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, lockedWriter{&t.mu, buf}), resp.Body}
	return resp, nil
}

func (t *tapTransport) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.bodies)
}

func (t *tapTransport) body(i int) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.bodies[i].Bytes()...)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// rig is a gateway in front of one upstream, with its fakes.
type rig struct {
	srv   *httptest.Server
	turns *fakeTurns
	rec   *memRecorder
	tap   *tapTransport
}

func newRig(t testing.TB, up Upstream, mod func(*Config)) *rig {
	t.Helper()
	r := &rig{turns: &fakeTurns{}, rec: &memRecorder{}, tap: &tapTransport{}}
	cfg := Config{Auth: fakeAuth{}, Upstreams: fixedUpstream{up}, Turns: r.turns, Recorder: r.rec, Transport: r.tap,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&cfg)
	}
	r.srv = httptest.NewServer(New(cfg))
	t.Cleanup(r.srv.Close)
	return r
}

// post sends body to the gateway path with the given credential header
// ("x-api-key" or "bearer") and returns the status and the exact body.
func (r *rig) post(t *testing.T, path, cred, token, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	switch cred {
	case "x-api-key":
		req.Header.Set("X-Api-Key", token)
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// endedAuth resolves the turn token to turn 43, which fakeTurns says has ended.
type endedAuth struct{}

func (endedAuth) AuthenticateTurn(context.Context, string) (bullpen.Member, int64, error) {
	return engineer, 43, nil
}
