package web_test

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/web"
)

// fakeE2B serves handlers in place of package e2b's.
type fakeE2B struct{ api, sandbox http.Handler }

func (f fakeE2B) API() http.Handler     { return f.api }
func (f fakeE2B) Sandbox() http.Handler { return f.sandbox }

// The E2B surface's answers stream through Fiber: what the handler
// flushes reaches the client while the handler still runs (Fiber's own
// adaptor would hold it to the end), the handler sees its path under the
// mount, a large request body streams in whole, and a client that goes
// away ends the handler's context at its next write.
func TestE2BStreams(t *testing.T) {
	release := make(chan struct{})
	gone := make(chan struct{})
	sandboxSide := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stream":
			w.Header().Set("X-Test", "yes")
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, "first\n")
			w.(http.Flusher).Flush()
			<-release
			io.WriteString(w, "second\n")
		case "/body":
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			io.WriteString(w, strconv.FormatInt(n, 10))
		case "/ticks":
			// Writes until a write finds the client gone, as a stream's
			// keepalives do.
			for r.Context().Err() == nil {
				io.WriteString(w, ".")
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
			close(gone)
		}
	})
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) })
	db, off, token := openOffice(t, store.SQLite)
	ts := serve(t, db, off, token, web.Config{}, web.Services{Office: off, E2B: fakeE2B{api: api, sandbox: sandboxSide}})

	type first struct {
		resp *http.Response
		br   *bufio.Reader
		line string
		err  error
	}
	done := make(chan first, 1)
	go func() {
		resp, err := http.Get(ts.URL + "/e2b/sandbox/stream")
		if err != nil {
			done <- first{err: err}
			return
		}
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		done <- first{resp, br, line, err}
	}()
	var f first
	select {
	case f = <-done:
		if f.err != nil || f.line != "first\n" || f.resp.StatusCode != http.StatusAccepted || f.resp.Header.Get("X-Test") != "yes" {
			t.Fatalf("first chunk %q (%v), answer %+v", f.line, f.err, f.resp)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the flushed chunk did not arrive while the handler ran")
	}
	resp, br := f.resp, f.br
	var err error
	close(release)
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	if string(rest) != "second\n" {
		t.Fatalf("rest %q", rest)
	}

	body := strings.Repeat("x", 5<<20) // over the API's 1 MiB body limit
	resp, err = http.Post(ts.URL+"/e2b/sandbox/body", "multipart/form-data; boundary=z", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != strconv.Itoa(len(body)) {
		t.Fatalf("the handler read %s bytes of %d", b, len(body))
	}

	resp, err = http.Get(ts.URL + "/e2b/v2/sandboxes?x=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "/v2/sandboxes" {
		t.Fatalf("the API saw path %q", b)
	}

	resp, err = http.Get(ts.URL + "/e2b/sandbox/ticks")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end when the client went away")
	}
}
