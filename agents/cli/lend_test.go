package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestLend: a standing secret is taken as the lent turn token on its own
// agent's socket only while the lend is held: the handler sees the turn's
// token, never the secret; before, after, beside another credential and
// on another agent's socket it is refused; a second lend is refused.
func TestLend(t *testing.T) {
	var mu sync.Mutex
	var seen string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Get("Authorization")
		mu.Unlock()
		io.WriteString(w, "served")
	})
	socks, _, c := testSockets(t, h, Config{})
	pathB, err := socks.Socket(context.Background(), agentB)
	if err != nil {
		t.Fatal(err)
	}
	cB := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", pathB)
	}}}
	secret := strings.Repeat("s", 64)
	call := func(c *http.Client, headers ...[2]string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://bridge/anthropic/v1/messages", strings.NewReader("{}"))
		for _, kv := range headers {
			req.Header.Set(kv[0], kv[1])
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	key := [2]string{"X-Api-Key", secret}
	if got := call(c, key); got != http.StatusUnauthorized {
		t.Fatalf("secret before a lend: %d, want 401", got)
	}
	if _, err := socks.Lend(agentA.ID, "short", "tok-a"); err == nil {
		t.Fatal("a lend with a short secret was accepted")
	}
	release, err := socks.Lend(agentA.ID, secret, "tok-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := socks.Lend(agentA.ID, strings.Repeat("t", 64), "tok-a"); err == nil {
		t.Fatal("a second lend while the first is held was accepted")
	}
	if got := call(c, key); got != http.StatusOK {
		t.Fatalf("secret while lent: %d, want 200", got)
	}
	mu.Lock()
	if seen != "Bearer tok-a" {
		t.Fatalf("the handler saw %q, want the turn's token", seen)
	}
	mu.Unlock()
	if got := call(c, [2]string{"Authorization", "Bearer " + secret}); got != http.StatusOK {
		t.Fatalf("secret as Bearer while lent: %d, want 200", got)
	}
	if got := call(c, key, [2]string{"Authorization", "Bearer tok-b"}); got != http.StatusForbidden {
		t.Fatalf("secret beside another credential: %d, want 403", got)
	}
	if got := call(cB, key); got != http.StatusUnauthorized {
		t.Fatalf("agent a's secret on agent b's socket: %d, want 401", got)
	}
	release()
	release() // twice changes nothing
	if got := call(c, key); got != http.StatusUnauthorized {
		t.Fatalf("secret after the lend: %d, want 401", got)
	}
	if _, err := socks.Lend(agentA.ID, secret, "tok-a"); err != nil {
		t.Fatalf("a lend after release: %v", err)
	}
}
