package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/gorilla/websocket"
)

// A person logs in, creates a channel, opens the live feed and posts; the
// message arrives over the websocket.
func TestEndToEnd(t *testing.T) {
	ts := newServer(t, web.Config{})
	b := ts.login(ts.Token)

	var ch bullpen.Channel
	if st := b.do("POST", "/api/v1/channels", map[string]string{"name": "launch", "topic": "Ship it"}, &ch); st != http.StatusCreated {
		t.Fatalf("create channel: status %d", st)
	}
	// The dashboard's own websocket: session cookie and same-origin Origin.
	hdr := http.Header{"Origin": {ts.URL}}
	u := strings.Replace(ts.URL, "http", "ws", 1) + "/api/v1/ws"
	d := websocket.Dialer{Jar: b.client.Jar}
	conn, _, err := d.Dial(u, hdr)
	if err != nil {
		t.Fatalf("dial websocket with session: %v", err)
	}
	defer conn.Close()

	var posted bullpen.Message
	if st := b.do("POST", fmt.Sprintf("/api/v1/channels/%d/messages", ch.ID), map[string]any{"body": "hello **team** @lead"}, &posted); st != http.StatusCreated {
		t.Fatalf("post: status %d", st)
	}
	if posted.Source != bullpen.SourceWeb || posted.Author == nil || posted.Author.Handle != "admin" {
		t.Errorf("posted = %+v; want source web by @admin", posted)
	}
	evs := readEvents(t, conn, bullpen.EventMessagePosted, 1)
	var got bullpen.Message
	if err := json.Unmarshal(evs[0].Payload, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != posted.ID || got.ChannelID != ch.ID || !strings.Contains(got.HTML, "<strong>team</strong>") {
		t.Errorf("event message = %+v, want the posted message rendered", got)
	}

	// Another site's page cannot open the feed with the cookie.
	_, resp, err := d.Dial(u, http.Header{"Origin": {"http://evil.invalid"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin websocket: err %v, response %v; want 403", err, resp)
	}
}

// A client disconnects, 1,000 messages are posted, and on reconnecting
// with since it receives all of them in order, none missing or doubled.
func TestReplayAfterReconnect(t *testing.T) {
	ts := newServer(t, web.Config{})
	conn := ts.dial(ts.Token, "?since=0")
	first := readEvents(t, conn, bullpen.EventChannelJoined, 1)
	conn.Close()
	last := first[0].Seq

	const n = 1000
	for i := 0; i < n; i++ {
		if st := ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]string{"body": fmt.Sprintf("m%d", i)}, nil); st != http.StatusCreated {
			t.Fatalf("post %d: status %d", i, st)
		}
	}
	conn = ts.dial(ts.Token, fmt.Sprintf("?since=%d", last))
	defer conn.Close()
	evs := readEvents(t, conn, bullpen.EventMessagePosted, n)
	for i, ev := range evs {
		var m bullpen.Message
		json.Unmarshal(ev.Payload, &m)
		if want := fmt.Sprintf("m%d", i); m.Body != want {
			t.Fatalf("event %d carries %q, want %q", i, m.Body, want)
		}
		if i > 0 && ev.Seq != evs[i-1].Seq+1 {
			t.Fatalf("event %d seq %d follows %d: gap or duplicate", i, ev.Seq, evs[i-1].Seq)
		}
	}
}

// The author is the credential's member, whatever the body says.
func TestAuthorComesFromCredential(t *testing.T) {
	ts := newServer(t, web.Config{})
	var ada bullpen.Member
	ts.do("POST", "/api/v1/members", ts.Token, map[string]string{"handle": "ada", "display_name": "Ada"}, &ada)
	var tok struct {
		Token string `json:"token"`
	}
	if st := ts.do("POST", "/api/v1/tokens", ts.Token, map[string]any{"name": "ada's", "member_id": ada.ID}, &tok); st != http.StatusCreated {
		t.Fatalf("create token for ada: %d", st)
	}
	var e apiError
	st := ts.do("POST", "/api/v1/channels/1/messages", tok.Token, map[string]any{"body": "hi", "author_id": 1}, &e)
	if st != http.StatusBadRequest || e.Error.Code != bullpen.EINVALID {
		t.Errorf("post with author_id: %d %+v; want 400 invalid", st, e)
	}
	var m bullpen.Message
	ts.do("POST", "/api/v1/channels/1/messages", tok.Token, map[string]any{"body": "hi"}, &m)
	if m.AuthorID != ada.ID {
		t.Errorf("author = %d, want ada (%d)", m.AuthorID, ada.ID)
	}
}

// The websocket pings on its heartbeat; a plain GET gets a clear error.
func TestWebsocketHeartbeatAndUpgradeRequired(t *testing.T) {
	ts := newServer(t, web.Config{HeartbeatInterval: 50 * time.Millisecond})
	conn := ts.dial(ts.Token, "")
	defer conn.Close()
	pings := make(chan struct{}, 10)
	conn.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	go func() {
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	for i := 0; i < 4; i++ { // four beats outlive the 2-beat read deadline only with pongs
		select {
		case <-pings:
		case <-time.After(5 * time.Second):
			t.Fatalf("got %d pings in 5 s with a 50 ms heartbeat, want 4", i)
		}
	}
	var e apiError
	if st := ts.do("GET", "/api/v1/ws", ts.Token, nil, &e); st != http.StatusBadRequest || e.Error.Code != bullpen.EINVALID {
		t.Errorf("GET /api/v1/ws without upgrade = %d %+v, want 400 invalid", st, e)
	}
	if st := ts.do("GET", "/api/v1/ws?since=-4", ts.Token, nil, &e); st != http.StatusBadRequest {
		t.Errorf("negative since = %d, want 400", st)
	}
}
