package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// startMain runs the whole program on a loopback port with dataDir.
func startMain(t *testing.T, dataDir string) (*Main, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags("serve", []string{"--data", dataDir, "--addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return m, &out
}

var tokenRE = regexp.MustCompile(`bp_[a-z0-9]+`)

// On shutdown the websocket gets a going-away close frame and the database
// closes; a restart on the same data directory sees every message.
func TestShutdownAndRestart(t *testing.T) {
	dir := t.TempDir()
	m, out := startMain(t, dir)
	token := tokenRE.FindString(out.String())
	if token == "" || !strings.Contains(out.String(), m.URL()) {
		t.Fatalf("first start printed no URL or token:\n%s", out)
	}
	ws := strings.Replace(m.URL(), "http", "ws", 1) + "api/v1/ws?since=0"
	conn, _, err := websocket.DefaultDialer.Dial(ws, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 50
	for i := 0; i < n; i++ {
		body := fmt.Sprintf(`{"body":"before restart %d"}`, i)
		req, _ := http.NewRequest("POST", m.URL()+"api/v1/channels/1/messages", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("post %d: %v %v", i, err, resp)
		}
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err = conn.ReadMessage(); err != nil {
			break
		}
	}
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("websocket ended with %v, want a going-away close frame", err)
	}

	m2, out2 := startMain(t, dir)
	defer m2.Close(context.Background())
	if tokenRE.MatchString(out2.String()) {
		t.Errorf("restart printed a new admin token:\n%s", out2)
	}
	n2, err := m2.DB.CountMessages(context.Background(), 0)
	if err != nil || n2 != n {
		t.Errorf("after restart: %d messages (%v), want %d", n2, err, n)
	}
}

func TestRunRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"serve", "extra"}, {"--no-such-flag"}} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}
