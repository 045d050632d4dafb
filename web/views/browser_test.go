package views

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"github.com/bullpen-hq/bullpen/static"
)

// fakeServer speaks the parts of the Bullpen HTTP API and websocket that
// app.js uses, so that the script can be tested in a real browser without
// the web layer.
type fakeServer struct {
	*httptest.Server
	t      *testing.T
	sinces chan string // the since= of each websocket connection
	pages  chan string // the channel name of each dashboard page served

	mu       sync.Mutex
	conn     *websocket.Conn
	nextID   int64
	nextSeq  int64
	threadOf []int64          // thread_id of each POSTed message
	log      []map[string]any // every event made, for GET /api/v1/events
	evReqs   int              // GET /api/v1/events requests served
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{t: t, sinces: make(chan string, 10), pages: make(chan string, 10), nextID: 100, nextSeq: sampleDashboard().LastSeq}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static.FS)))
	mux.HandleFunc("GET /c/{name}", func(w http.ResponseWriter, r *http.Request) {
		p := sampleDashboard()
		p.Current.Name = r.PathValue("name")
		f.pages <- p.Current.Name
		if err := Dashboard(p).Render(r.Context(), w); err != nil {
			t.Errorf("render: %v", err)
		}
	})
	mux.HandleFunc("GET /api/v1/ws", f.serveWS)
	mux.HandleFunc("GET /api/v1/events", f.listEvents)
	mux.HandleFunc("POST /api/v1/channels/{id}/messages", f.postMessage)
	mux.HandleFunc("POST /api/v1/channels", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Name, Topic string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		writeJSON(w, 201, map[string]any{"id": 9, "name": in.Name, "kind": "public", "topic": in.Topic})
	})
	mux.HandleFunc("GET /api/v1/messages/10/thread", func(w http.ResponseWriter, r *http.Request) {
		root := msgJSON(10, 2, 0, "ada", "Ada Lovelace", "human", "<p>root</p>")
		root["reply_count"] = 2
		writeJSON(w, 200, map[string]any{"root": root, "replies": []any{
			msgJSON(20, 2, 10, "lead", "Lead", "agent", "<p>first reply</p>"),
			msgJSON(21, 2, 10, "eng", "Engineer", "agent", "<p>second reply</p>"),
		}})
	})
	mux.HandleFunc("GET /api/v1/channels/2/messages", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("before") != "c-10" || r.URL.Query().Get("limit") != "50" {
			t.Errorf("older messages query = %q", r.URL.RawQuery)
		}
		writeJSON(w, 200, map[string]any{"items": []any{
			msgJSON(5, 2, 0, "ada", "Ada Lovelace", "human", "<p>old one</p>"),
			msgJSON(6, 2, 0, "lead", "Lead", "agent", "<p>old two</p>"),
		}, "next_cursor": ""})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func msgJSON(id, channel, thread int64, handle, name, kind, html string) map[string]any {
	return map[string]any{
		"id": id, "channel_id": channel, "thread_id": thread,
		"author": map[string]any{"id": 3, "handle": handle, "display_name": name, "kind": kind},
		"body":   "body", "html": html, "mentions": []string{}, "reply_count": 0, "source": "web",
		"created_at": "2026-03-04T09:40:00Z", "edited_at": nil, "deleted": false,
	}
}

func (f *fakeServer) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		f.t.Errorf("upgrade: %v", err)
		return
	}
	f.mu.Lock()
	f.conn = c
	f.mu.Unlock()
	f.sinces <- r.URL.Query().Get("since")
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
	}
}

// send writes one frame of events to the current websocket connection.
func (f *fakeServer) send(events ...map[string]any) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		f.t.Fatal("send: no websocket connection")
	}
	if err := f.conn.WriteJSON(map[string]any{"events": events}); err != nil {
		f.t.Fatalf("send: %v", err)
	}
}

// dropConn closes the websocket from the server side.
func (f *fakeServer) dropConn() {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.conn.Close()
	f.conn = nil
}

// event makes an event with the next seq.
func (f *fakeServer) event(typ string, channel int64, payload any) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextSeq++
	ev := map[string]any{"seq": f.nextSeq, "type": typ, "channel_id": channel, "payload": payload, "at": "2026-03-04T09:41:00Z"}
	f.log = append(f.log, ev)
	return ev
}

// listEvents answers the timeline's after= requests from the events made,
// each with a line naming its type and seq (the lines themselves are
// package timeline's, tested there).
func (f *fakeServer) listEvents(w http.ResponseWriter, r *http.Request) {
	var after int64
	fmt.Sscan(r.URL.Query().Get("after"), &after)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evReqs++
	items := []any{}
	for _, ev := range f.log {
		if seq := ev["seq"].(int64); seq > after {
			it := map[string]any{"line": fmt.Sprintf("%s #%d", ev["type"], seq)}
			for k, v := range ev {
				it[k] = v
			}
			items = append(items, it)
		}
	}
	writeJSON(w, 200, map[string]any{"items": items, "next_before": 0})
}

// seq is the seq of the last event made.
func (f *fakeServer) seq() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nextSeq
}

func (f *fakeServer) postMessage(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("X-CSRF-Token"); got != "csrf-token-123" {
		writeJSON(w, 403, map[string]any{"error": map[string]any{"code": "forbidden", "message": "bad csrf token " + got}})
		return
	}
	var in struct {
		Body     string `json:"body"`
		ThreadID int64  `json:"thread_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": "invalid", "message": err.Error()}})
		return
	}
	if strings.Contains(in.Body, "fail") {
		writeJSON(w, 422, map[string]any{"error": map[string]any{"code": "invalid", "message": "body is too spicy"}})
		return
	}
	f.mu.Lock()
	f.nextID++
	id := f.nextID
	f.threadOf = append(f.threadOf, in.ThreadID)
	f.mu.Unlock()
	m := msgJSON(id, 2, in.ThreadID, "ada", "Ada Lovelace", "human", "<p>"+html.EscapeString(in.Body)+"</p>")
	// The event usually reaches the page around the POST response: the page
	// must show the message once either way.
	f.send(f.event("message.posted", 2, m))
	writeJSON(w, 201, m)
}

// TestDashboardBrowser drives app.js in headless Chromium against
// fakeServer: live events, de-duplication, the composer, threads, unread
// badges, older messages, reconnection with since=, tabs, new channels.
func TestDashboardBrowser(t *testing.T) {
	f := newFakeServer(t)
	ctx := browsertest.Browser(t, 2*time.Minute)

	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	wait := func(expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	sinceWas := func(want string) {
		t.Helper()
		select {
		case got := <-f.sinces:
			if got != want {
				t.Fatalf("websocket since = %q, want %q", got, want)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no websocket connection")
		}
	}
	// shot saves a screenshot to $BULLPEN_VIEWS_SCREENSHOTS/name.png, if set.
	shot := func(name string) {
		t.Helper()
		dir := os.Getenv("BULLPEN_VIEWS_SCREENSHOTS")
		if dir == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const list = `[data-testid="message-list"]`
	countMsg := func(id int) string {
		return fmt.Sprintf(`document.querySelectorAll('%s [data-testid="message"][data-id="%d"]').length`, list, id)
	}

	do("open dashboard", chromedp.Navigate(f.URL+"/c/general"))
	<-f.pages
	sinceWas("42")
	wait(`document.body.dataset.ws === "open"`)

	// A live message; its author name must be text, not markup.
	evil := `<img src=x onerror="window.pwned=1">`
	live := msgJSON(50, 2, 0, "mallory", evil, "agent", "<p>live <b>bold</b></p>")
	first := f.event("message.posted", 2, live)
	f.send(first)
	wait(countMsg(50) + ` === 1`)
	if got := eval(`document.querySelector('[data-id="50"] [data-testid="message-author"]').textContent`); got != evil {
		t.Errorf("live author = %q, want the literal text", got)
	}
	if got := eval(`String(window.pwned) + document.querySelectorAll('[data-id="50"] img').length`); got != "undefined0" {
		t.Errorf("author markup ran or rendered: %s", got)
	}
	if got := eval(`document.querySelector('[data-id="50"] [data-testid="message-body"] b').textContent`); got != "bold" {
		t.Errorf("message html not inserted: %q", got)
	}

	// The same event again, and the same message under a new seq: still one.
	f.send(first, f.event("message.posted", 2, live),
		f.event("agent.woke", 0, map[string]any{"agent": map[string]any{"handle": "lead", "display_name": "Lead"}, "reason": "mentioned"}))
	woke := f.seq()
	wait(fmt.Sprintf(`!!document.querySelector('[data-testid="timeline-entry"][data-seq="%d"]')`, woke))
	if got, want := eval(countMsg(50)+` + "/" + document.body.dataset.lastSeq`), fmt.Sprintf("1/%d", woke); got != want {
		t.Errorf("message 50 count/lastSeq = %s, want %s", got, want)
	}
	if got := eval(fmt.Sprintf(`document.querySelector('[data-testid="timeline-entry"][data-seq="%d"]').textContent`, woke)); !strings.Contains(got, fmt.Sprintf("agent.woke #%d", woke)) {
		t.Errorf("timeline entry for seq %d = %q, want the server's line", woke, got)
	}
	if got := eval(fmt.Sprintf(`document.querySelectorAll('[data-testid="timeline-entry"][data-seq="%v"]').length + ""`, first["seq"])); got != "1" {
		t.Errorf("timeline entries for the first seq = %s, want 1", got)
	}

	// Shift+Enter is left to the textarea (a new line); Enter sends.
	if got := eval(`String(document.querySelector('[data-testid="composer-input"]').dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", shiftKey: true, cancelable: true})))`); got != "true" {
		t.Errorf("Shift+Enter was prevented")
	}
	do("type a message", chromedp.SendKeys(`[data-testid="composer-input"]`, "hello there\n"))
	wait(`[...document.querySelectorAll('` + list + ` [data-testid="message-body"]')].filter(b => b.textContent === "hello there").length === 1`)
	wait(`document.querySelector('[data-testid="composer-input"]').value === ""`)
	wait(fmt.Sprintf(`!!document.querySelector('[data-testid="timeline-entry"][data-seq="%d"]')`, f.seq()))
	if got := eval(countMsg(101) + ` + ""`); got != "1" {
		t.Errorf("own message shown %s times, want 1", got)
	}

	// A refused message keeps its text and shows the server's message.
	do("type a refused message", chromedp.SendKeys(`[data-testid="composer-input"]`, "please fail\n"))
	wait(`!document.querySelector('[data-testid="composer-error"]').hidden`)
	if got := eval(`document.querySelector('[data-testid="composer-error"]').textContent + "|" + document.querySelector('[data-testid="composer-input"]').value`); got != "body is too spicy|please fail" {
		t.Errorf("error|text = %q", got)
	}
	do("clear composer", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="composer-input"]').value = ""`))

	// A reply elsewhere bumps the root's reply count.
	f.send(f.event("message.posted", 2, msgJSON(60, 2, 13, "lead", "Lead", "agent", "<p>reply</p>")))
	wait(`document.querySelector('` + list + ` [data-id="13"] [data-testid="message-replies"]').textContent === "2 replies"`)

	// The thread pane: root, replies, and a reply of our own.
	do("open thread", browsertest.Click(list+` [data-id="10"] [data-testid="message-replies"]`))
	wait(`!document.querySelector('[data-testid="thread-pane"]').hidden`)
	wait(`document.querySelectorAll('[data-testid="thread-replies"] [data-testid="thread-message"]').length === 2`)
	do("reply in thread", chromedp.SendKeys(`[data-testid="thread-input"]`, "thread hi\n"))
	wait(`document.querySelectorAll('[data-testid="thread-replies"] [data-testid="thread-message"]').length === 3`)
	wait(`document.querySelector('` + list + ` [data-id="10"] [data-testid="message-replies"]').textContent === "3 replies"`)
	shot("thread")
	f.mu.Lock()
	threads := fmt.Sprint(f.threadOf)
	f.mu.Unlock()
	if threads != "[0 10]" {
		t.Errorf("posted thread ids = %s, want [0 10]", threads)
	}
	if got := eval(countMsg(102) + ` + ""`); got != "0" {
		t.Errorf("a thread reply shows in the channel list")
	}
	do("close thread", browsertest.Click(`[data-testid="thread-close"]`))
	wait(`document.querySelector('[data-testid="thread-pane"]').hidden`)

	// A message in another channel bumps its unread badge (4 at load).
	other := f.event("message.posted", 3, msgJSON(70, 3, 0, "eng", "Engineer", "agent", "<p>x</p>"))
	f.send(other)
	wait(`document.querySelector('[data-channel-id="3"] [data-testid="channel-unread"]').textContent === "5"`)

	// Older messages go on top, and the button goes when there are no more.
	do("load older", browsertest.Click(`[data-testid="load-older"]`))
	wait(`document.querySelector('` + list + ` [data-testid="message"]').dataset.id === "5"`)
	wait(`document.querySelector('[data-testid="load-older"]').hidden`)

	// After a drop the page reconnects from its last seq; a replay is ignored.
	f.dropConn()
	sinceWas(fmt.Sprint(f.seq()))
	wait(`document.body.dataset.ws === "open"`)
	f.send(other, f.event("member.updated", 0, map[string]any{"id": 8, "handle": "pm", "display_name": "Product", "kind": "agent", "muted": false}))
	wait(`document.querySelector('[data-member-id="8"] [data-testid="member-name"]').textContent === "Product"`)
	if got := eval(`document.querySelector('[data-channel-id="3"] [data-testid="channel-unread"]').textContent`); got != "5" {
		t.Errorf("unread after a replayed event = %s, want 5", got)
	}

	// Tabs.
	shot("activity")
	do("open wiki tab", browsertest.Click(`[data-testid="panel-tab-wiki"]`))
	wait(`!document.querySelector('[data-panel="wiki"]').hidden && document.querySelector('[data-panel="activity"]').hidden`)

	// A new channel, then its page.
	do("new channel",
		browsertest.Click(`[data-testid="new-channel-toggle"]`),
		chromedp.SendKeys(`[data-testid="new-channel-name"]`, "launch"),
		browsertest.Click(`[data-testid="new-channel-submit"]`))
	select {
	case got := <-f.pages:
		if got != "launch" {
			t.Errorf("page after creating a channel = /c/%s, want /c/launch", got)
		}
	case <-time.After(10 * time.Second):
		t.Error("no navigation to the new channel")
	}
}
