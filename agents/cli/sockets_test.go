package cli

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// TestAgentSockets: an agent's socket serves only /mcp and the gateway's
// paths, and refuses a token of another agent before the handler sees it.
func TestAgentSockets(t *testing.T) {
	if !canWriteRun() {
		t.Skip("needs a writable /run")
	}
	reached := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++; io.WriteString(w, "served") })
	owners := map[string]bullpen.Member{"tok-a": {ID: 1, Handle: "a"}, "tok-b": {ID: 2, Handle: "b"}}
	socks, err := New(Config{Dir: DirFor(t.TempDir()), Handler: h, Auth: fakeAuth(owners), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer socks.Close()
	path, err := socks.Socket(context.Background(), bullpen.Member{ID: 1, Handle: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := socks.Socket(context.Background(), bullpen.Member{ID: 1, Handle: "a"}); again != path {
		t.Fatalf("second Socket: %q, want %q", again, path)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	get := func(p, header, token string) int {
		req, _ := http.NewRequest("POST", "http://sandbox"+p, strings.NewReader("{}"))
		if token != "" {
			req.Header.Set(header, token)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	cases := []struct {
		path, header, token string
		want                int
	}{
		{"/mcp", "Authorization", "Bearer tok-a", 200},
		{"/anthropic/v1/messages", "X-Api-Key", "tok-a", 200},
		{"/openai/v1/responses", "Authorization", "Bearer tok-a", 200},
		{"/mcp", "Authorization", "Bearer tok-b", 403},
		{"/anthropic/v1/messages", "X-Api-Key", "tok-b", 403},
		{"/api/v1/me", "Authorization", "Bearer tok-a", 404},
		{"/", "", "", 404},
	}
	for _, tc := range cases {
		before := reached
		if got := tc.want; get(tc.path, tc.header, tc.token) != got {
			t.Errorf("%s with %q: want %d", tc.path, tc.token, got)
		}
		if served := reached > before; served != (tc.want == 200) {
			t.Errorf("%s with %q: handler reached = %v", tc.path, tc.token, served)
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

// fakeAuth resolves the tokens of a map, each a turn token of turn 7.
type fakeAuth map[string]bullpen.Member

func (f fakeAuth) AuthenticateTurn(_ context.Context, s string) (bullpen.Member, int64, error) {
	if m, ok := f[s]; ok {
		return m, 7, nil
	}
	return bullpen.Member{}, 0, bullpen.Errorf(bullpen.EUNAUTHORIZED, "invalid token")
}
