package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestTurnTokenOnlyOnSocket: a running turn's token, taken from its
// sandbox, is refused (403) by the REST API, the event websocket and the
// main listener's /mcp: it cannot mint a permanent token or make a
// sandbox. On its agent's socket /mcp it works, and an outside agent's
// own permanent token keeps working on the main listener's /mcp.
func TestTurnTokenOnlyOnSocket(t *testing.T) {
	o := newSocketOffice(t)
	a, permA := o.hireBuiltin("alpha")
	tok := o.turnToken(a)
	base := o.m.URL()
	send := func(method, path, token, body string) int {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "api/v1/tokens", `{"name":"outlives the turn"}`},
		{"POST", "api/v1/sandboxes", `{}`},
		{"GET", "api/v1/events", ``},
		{"POST", "mcp", mcpInit},
	} {
		if st := send(c.method, c.path, tok, c.body); st != http.StatusForbidden {
			t.Errorf("%s /%s with a turn token = %d, want 403", c.method, c.path, st)
		}
	}
	ws, resp, err := websocket.DefaultDialer.Dial(strings.Replace(base, "http", "ws", 1)+"api/v1/ws",
		http.Header{"Authorization": {"Bearer " + tok}})
	if err == nil {
		ws.Close()
		t.Errorf("the event websocket opened for a turn token")
	} else if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("websocket with a turn token: %v, want 403", err)
	}
	if st := send("POST", "mcp", permA, mcpInit); st != http.StatusOK {
		t.Errorf("an agent's own permanent token on the main /mcp = %d, want 200", st)
	}
	if st := o.socketMCPStatus(a, tok); st != http.StatusOK {
		t.Errorf("the turn token on its agent's socket /mcp = %d, want 200", st)
	}
}
