package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/gorilla/websocket"
)

// TestFeedKeepsEphemeralEvents: live events without a sequence number
// (sandbox output, agents' deltas) reach the caller, and do not move the
// point the feed resumes from.
func TestFeedKeepsEphemeralEvents(t *testing.T) {
	sinces := make(chan string, 1)
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sinces <- r.URL.Query().Get("since"):
		default: // a reconnect: the test has failed already
			http.Error(w, "one connection only", http.StatusGone)
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.WriteJSON(map[string]any{"events": []bullpen.Event{
			{Seq: 5, Type: "a"}, {Type: "sandbox.output"}, {Seq: 6, Type: "b"}, {Type: "agent.delta"},
		}})
		// An old stored event again (a resend after a reconnect) is dropped.
		_ = conn.WriteJSON(map[string]any{"events": []bullpen.Event{{Seq: 6, Type: "b"}, {Seq: 7, Type: "c"}}})
		_, _, _ = conn.ReadMessage() // until the client closes
	}))
	defer srv.Close()
	c, err := New(srv.URL, "t")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := c.Subscribe(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := []struct {
		typ  string
		last int64
	}{{"a", 5}, {"sandbox.output", 5}, {"b", 6}, {"agent.delta", 6}, {"c", 7}}
	for i, w := range want {
		ev, err := f.Next(ctx)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.Type != w.typ || f.Last() != w.last {
			t.Fatalf("event %d: %q, last %d; want %q, last %d", i, ev.Type, f.Last(), w.typ, w.last)
		}
	}
	if got := <-sinces; got != "4" {
		t.Fatalf("first dial since %q, want 4", got)
	}
}
