package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/bullpen-hq/bullpen/static"
	"github.com/bullpen-hq/bullpen/web"
)

// fetch GETs path with the headers given (an explicit Accept-Encoding
// turns off the client's own decompression) and returns the response and
// its body as sent.
func fetch(t *testing.T, c *http.Client, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func decode(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "gzip":
		gz, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		r = gz
	default:
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s body: %v", enc, err)
	}
	return out
}

// TestStaticCompressedAndCached: static files go out brotli- or
// gzip-compressed as negotiated (q=0 refuses a coding; no header gets the
// plain bytes), always with Vary: Accept-Encoding, and decode to the
// embedded file; a fingerprinted URL (?v=<content hash>, as pages link
// them) is cached for a year as immutable, any other is revalidated, and
// a matching ETag gets 304.
func TestStaticCompressedAndCached(t *testing.T) {
	ts := newServer(t, web.Config{})
	// app.js, not the larger xterm.js: brotli's best level is slow under
	// the race detector, and the path is the same.
	raw, err := static.FS.ReadFile("app.js")
	if err != nil {
		t.Fatal(err)
	}
	url := ts.URL + static.URL("app.js")
	for _, c := range []struct{ accept, want string }{
		{"gzip, deflate, br", "br"},
		{"gzip, deflate", "gzip"},
		{"br;q=0, gzip;q=0.5", "gzip"},
		{"*", "br"},
		{"identity", ""},
		{"br;q=0, gzip;q=0", ""},
	} {
		resp, body := fetch(t, http.DefaultClient, url, map[string]string{"Accept-Encoding": c.accept})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", c.accept, resp.StatusCode)
		}
		if got := resp.Header.Get("Content-Encoding"); got != c.want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", c.accept, got, c.want)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: Vary %q, want Accept-Encoding", c.accept, resp.Header.Get("Vary"))
		}
		if c.want != "" && len(body) > len(raw)/3 {
			t.Errorf("%s body is %d bytes of %d", c.want, len(body), len(raw))
		}
		if !bytes.Equal(decode(t, c.want, body), raw) {
			t.Errorf("Accept-Encoding %q: the body does not decode to the file", c.accept)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("fingerprinted URL: Cache-Control %q, want a year, immutable", cc)
		}
	}
	resp, _ := fetch(t, http.DefaultClient, ts.URL+"/static/app.js", map[string]string{"Accept-Encoding": "gzip"})
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" || resp.Header.Get("ETag") == "" {
		t.Errorf("unversioned URL: Cache-Control %q, ETag %q; want no-cache with an ETag", cc, resp.Header.Get("ETag"))
	}
	stale := ts.URL + "/static/app.js?v=000000000000"
	if resp, _ := fetch(t, http.DefaultClient, stale, nil); resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("a stale fingerprint is cached as immutable: %q", resp.Header.Get("Cache-Control"))
	}
	again, body := fetch(t, http.DefaultClient, ts.URL+"/static/app.js",
		map[string]string{"Accept-Encoding": "gzip", "If-None-Match": resp.Header.Get("ETag")})
	if again.StatusCode != 304 || len(body) != 0 {
		t.Errorf("revalidation with the ETag: %d with %d bytes, want 304 and none", again.StatusCode, len(body))
	}
	if resp, _ := fetch(t, http.DefaultClient, ts.URL+"/static/nope.js", nil); resp.StatusCode != 404 {
		t.Errorf("unknown static file: %d, want 404", resp.StatusCode)
	}
}

// TestPagesCompressed: the dashboard's HTML is compressed as negotiated,
// with Vary: Accept-Encoding, and decodes to the page sent plain; the
// page loads the terminal library only on demand (terminal.js names it).
func TestPagesCompressed(t *testing.T) {
	ts := newServer(t, web.Config{})
	b := ts.login(ts.Token)
	plainResp, plain := fetch(t, b.client, ts.URL+"/c/general", nil)
	if plainResp.StatusCode != 200 || plainResp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("plain page: %d, Content-Encoding %q", plainResp.StatusCode, plainResp.Header.Get("Content-Encoding"))
	}
	if !strings.Contains(plainResp.Header.Get("Vary"), "Accept-Encoding") {
		t.Errorf("plain page: Vary %q, want Accept-Encoding", plainResp.Header.Get("Vary"))
	}
	// The CSRF token is the page's only part that may differ per request.
	csrf := regexp.MustCompile(`content="[^"]*"`)
	for _, enc := range []string{"br", "gzip"} {
		resp, body := fetch(t, b.client, ts.URL+"/c/general", map[string]string{"Accept-Encoding": enc})
		if resp.Header.Get("Content-Encoding") != enc || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s page: Content-Encoding %q, Vary %q", enc, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
		}
		if len(body) > len(plain)/3 {
			t.Errorf("%s page is %d bytes of %d", enc, len(body), len(plain))
		}
		if got := decode(t, enc, body); !bytes.Equal(csrf.ReplaceAll(got, nil), csrf.ReplaceAll(plain, nil)) {
			t.Errorf("%s page does not decode to the plain page", enc)
		}
	}
	if bytes.Contains(plain, []byte(`<script src="/static/vendor/xterm.js`)) || !bytes.Contains(plain, []byte(`data-xterm-js="/static/vendor/xterm.js?v=`)) {
		t.Error("the page loads xterm.js itself, or does not give terminal.js its fingerprinted URL")
	}
}
