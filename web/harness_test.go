package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/web/openapi/openapitest"
	"github.com/gorilla/websocket"
)

// runValidated runs the tests with every HTTP exchange checked against
// the OpenAPI document (see openapitest.Main).
func runValidated(m *testing.M) int { return openapitest.Main(m) }

// testServer is a real server on a loopback port with a fresh database.
type testServer struct {
	t     *testing.T
	URL   string
	DB    *store.DB
	Off   *office.Office
	Srv   *web.Server
	Token string // the admin's bootstrap token
}

func newServer(t *testing.T, cfg web.Config) *testServer {
	t.Helper()
	db, off, token := openOffice(t, store.SQLite)
	return serve(t, db, off, token, cfg, web.Services{Office: off})
}

// openOffice opens a fresh database of the dialect with an office on it
// and returns the admin's bootstrap token.
func openOffice(t *testing.T, dialect string) (*store.DB, *office.Office, string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Config(t, dialect))
	if err != nil {
		t.Fatal(err)
	}
	off, err := office.New(ctx, db, office.Config{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := off.Bootstrap(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return db, off, token
}

// serve starts a server on a loopback port. At cleanup it shuts the server
// down, runs stop (the services' own teardown, in order), then closes db.
func serve(t *testing.T, db *store.DB, off *office.Office, token string, cfg web.Config, svc web.Services, stop ...func()) *testServer {
	t.Helper()
	srv := web.New(cfg, svc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
		for _, f := range stop {
			f()
		}
		db.Close()
	})
	return &testServer{t: t, URL: "http://" + ln.Addr().String(), DB: db, Off: off, Srv: srv, Token: token}
}

// do sends a request with a Bearer token ("" for none) and decodes a JSON
// response into out when out is not nil. It returns the status.
func (ts *testServer) do(method, path, token string, body any, out any) int {
	ts.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, ts.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			ts.t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// apiError is the API's error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// browser is an HTTP client with a cookie jar that logs in like a person.
type browser struct {
	ts     *testServer
	client *http.Client
	csrf   string
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)
var loginCSRF = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// login fetches the form, posts the token and reads the dashboard's CSRF
// token from its meta tag.
func (ts *testServer) login(token string) *browser {
	ts.t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{ts: ts, client: &http.Client{Jar: jar}}
	resp, err := b.client.Get(ts.URL + "/login")
	if err != nil {
		ts.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := loginCSRF.FindSubmatch(page)
	if m == nil {
		ts.t.Fatalf("login page has no _csrf field:\n%s", page)
	}
	resp, err = b.client.PostForm(ts.URL+"/login", url.Values{"token": {token}, "_csrf": {string(m[1])}})
	if err != nil {
		ts.t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/c/general" {
		ts.t.Fatalf("login ended at %s with %d", resp.Request.URL, resp.StatusCode)
	}
	if m = csrfMeta.FindSubmatch(page); m == nil {
		ts.t.Fatalf("dashboard has no csrf-token meta")
	}
	b.csrf = string(m[1])
	return b
}

// do sends a JSON request with the session cookie and the CSRF header.
func (b *browser) do(method, path string, body any, out any) int {
	b.ts.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, b.ts.URL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", b.csrf)
	resp, err := b.client.Do(req)
	if err != nil {
		b.ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// dial opens the event websocket with a Bearer token.
func (ts *testServer) dial(token, query string) *websocket.Conn {
	ts.t.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}}
	c, resp, err := websocket.DefaultDialer.Dial(strings.Replace(ts.URL, "http", "ws", 1)+"/api/v1/ws"+query, h)
	if err != nil {
		ts.t.Fatalf("dial websocket: %v (response %v)", err, resp)
	}
	return c
}

type frame struct {
	Events []bullpen.Event `json:"events"`
}

// readEvents reads frames until n events of type typ arrived.
func readEvents(t *testing.T, c *websocket.Conn, typ string, n int) []bullpen.Event {
	t.Helper()
	var out []bullpen.Event
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for len(out) < n {
		var f frame
		if err := c.ReadJSON(&f); err != nil {
			t.Fatalf("read websocket after %d of %d events: %v", len(out), n, err)
		}
		for _, ev := range f.Events {
			if ev.Type == typ {
				out = append(out, ev)
			}
		}
	}
	return out
}
