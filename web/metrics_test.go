package web_test

import (
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/web"
)

// TestWebsocketClientsCounted checks the figure the metrics read: an open
// event websocket counts, and stops counting once it closes.
func TestWebsocketClientsCounted(t *testing.T) {
	ts := newServer(t, web.Config{})
	wait := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for ts.Srv.WebsocketClients() != want {
			if time.Now().After(deadline) {
				t.Fatalf("WebsocketClients() = %d, want %d", ts.Srv.WebsocketClients(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait(0)
	a, b := ts.dial(ts.Token, ""), ts.dial(ts.Token, "?since=0")
	wait(2)
	a.Close()
	wait(1)
	b.Close()
	wait(0)
}
