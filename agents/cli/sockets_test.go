package cli

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// fakeAuth resolves the tokens of a map: tok-a and tok-b are turn 7's and
// 8's tokens of agents 1 and 2, perm-a is agent 1's ordinary token.
type fakeAuth map[string]struct {
	m    bullpen.Member
	turn int64
}

func (f fakeAuth) AuthenticateTurn(_ context.Context, s string) (bullpen.Member, int64, error) {
	if t, ok := f[s]; ok {
		return t.m, t.turn, nil
	}
	return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "invalid token")
}

var (
	agentA = bullpen.Member{ID: 1, Handle: "a", Kind: bullpen.KindAgent}
	agentB = bullpen.Member{ID: 2, Handle: "b", Kind: bullpen.KindAgent}
	owners = fakeAuth{"tok-a": {agentA, 7}, "tok-b": {agentB, 8}, "perm-a": {agentA, 0}}
)

// testSockets serves h on agent a's socket and returns a client of it.
func testSockets(t *testing.T, h http.Handler, cfg Config) (*Sockets, string, *http.Client) {
	t.Helper()
	if !canWriteRun() {
		t.Skip("needs a writable /run")
	}
	cfg.Dir, cfg.Handler, cfg.Auth = DirFor(t.TempDir()), h, owners
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	socks, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(socks.Close)
	path, err := socks.Socket(context.Background(), agentA)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	return socks, path, c
}

// TestAgentSockets: an agent's socket serves only /mcp and the gateway's
// paths, to its own agent's turn token and no other credential, and the
// handler sees that token as the request's one credential.
func TestAgentSockets(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	var seenQuery string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen, seenQuery = r.Header.Clone(), r.URL.RawQuery
		mu.Unlock()
		io.WriteString(w, "served")
	})
	socks, path, c := testSockets(t, h, Config{})
	if again, _ := socks.Socket(context.Background(), agentA); again != path {
		t.Fatalf("second Socket: %q, want %q", again, path)
	}
	type hdr = [2]string
	cases := []struct {
		name, path string
		headers    []hdr
		want       int
	}{
		{"mcp bearer", "/mcp", []hdr{{"Authorization", "Bearer tok-a"}}, 200},
		{"anthropic x-api-key", "/anthropic/v1/messages", []hdr{{"X-Api-Key", "tok-a"}}, 200},
		{"openai bearer", "/openai/v1/responses", []hdr{{"Authorization", "Bearer tok-a"}}, 200},
		{"gemini goog key", "/gemini/v1beta/models/m:generateContent", []hdr{{"X-Goog-Api-Key", "tok-a"}}, 200},
		{"gemini key in the query", "/gemini/v1beta/models/m:generateContent?key=tok-a&alt=sse", nil, 200},
		{"same token twice", "/anthropic/v1/messages", []hdr{{"X-Api-Key", "tok-a"}, {"Authorization", "bearer tok-a"}}, 200},
		{"query as well", "/openai/v1/models?key=tok-a&x=1", []hdr{{"Authorization", "Bearer tok-a"}}, 200},
		{"another agent's token", "/mcp", []hdr{{"Authorization", "Bearer tok-b"}}, 403},
		{"another agent's key", "/anthropic/v1/messages", []hdr{{"X-Api-Key", "tok-b"}}, 403},
		{"junk key, other's bearer", "/mcp", []hdr{{"X-Api-Key", "junk"}, {"Authorization", "Bearer tok-b"}}, 403},
		{"own key, other's bearer", "/mcp", []hdr{{"X-Api-Key", "tok-a"}, {"Authorization", "Bearer tok-b"}}, 403},
		{"junk key, own bearer", "/mcp", []hdr{{"X-Api-Key", "junk"}, {"Authorization", "Bearer tok-a"}}, 403},
		{"other's goog key", "/mcp", []hdr{{"Authorization", "Bearer tok-a"}, {"X-Goog-Api-Key", "tok-b"}}, 403},
		{"other's api-key", "/openai/v1/responses", []hdr{{"Authorization", "Bearer tok-a"}, {"Api-Key", "tok-b"}}, 403},
		{"cookie", "/mcp", []hdr{{"Authorization", "Bearer tok-a"}, {"Cookie", "bullpen_session=tok-b"}}, 403},
		{"proxy credential", "/mcp", []hdr{{"Authorization", "Bearer tok-a"}, {"Proxy-Authorization", "Bearer tok-b"}}, 403},
		{"query token", "/mcp?token=tok-b", []hdr{{"Authorization", "Bearer tok-a"}}, 403},
		{"query key only", "/openai/v1/models?key=tok-b", nil, 403},
		{"own ordinary token", "/mcp", []hdr{{"Authorization", "Bearer perm-a"}}, 403},
		{"basic auth", "/mcp", []hdr{{"Authorization", "Basic dG9rLWE6"}}, 401},
		{"unknown token", "/mcp", []hdr{{"Authorization", "Bearer bp_nope"}}, 401},
		{"no credential", "/mcp", nil, 401},
		{"REST path", "/api/v1/me", []hdr{{"Authorization", "Bearer tok-a"}}, 404},
		{"root", "/", nil, 404},
	}
	for _, tc := range cases {
		mu.Lock()
		seen = nil
		mu.Unlock()
		req, _ := http.NewRequest("POST", "http://sandbox"+tc.path, strings.NewReader("{}"))
		for _, h := range tc.headers {
			req.Header.Add(h[0], h[1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %s = %d %s, want %d", tc.name, tc.path, resp.StatusCode, body, tc.want)
		}
		mu.Lock()
		reached, hdrs, q := seen != nil, seen, seenQuery
		mu.Unlock()
		if reached != (tc.want == 200) {
			t.Errorf("%s: handler reached = %v", tc.name, reached)
		}
		if reached {
			if got := hdrs.Get("Authorization"); got != "Bearer tok-a" || hdrs.Get("X-Api-Key")+hdrs.Get("X-Goog-Api-Key") != "" || strings.Contains(q, "key") {
				t.Errorf("%s: handler saw Authorization %q, X-Api-Key %q, query %q; want the one Bearer token", tc.name, got, hdrs.Get("X-Api-Key"), q)
			}
		}
	}
}

func canWriteRun() bool {
	f, err := net.Listen("unix", "/run/.bullpen-probe.sock")
	if err != nil {
		return false
	}
	f.Close()
	return true
}
