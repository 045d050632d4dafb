package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/static"
	"github.com/bullpen-hq/bullpen/web"
)

// Many static files asked for in turn over one kept-alive connection each
// come back as themselves, with their own type: the file cache must not
// keep a name that aliases a request buffer the server reuses (it did, and
// a page got sandboxes.js served as text/css).
func TestStaticFilesKeepTheirNames(t *testing.T) {
	ts := newServer(t, web.Config{})
	names := []string{"app.css", "app.js", "wiki.css", "wiki.js", "sandboxes.css", "sandboxes.js",
		"agents.css", "agents.js", "timeline.css", "timeline.js", "layout.js", "phone.js", "bp.js", "chatlive.js"}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, DisableCompression: true}}
	for round := 0; round < 3; round++ {
		for _, n := range names {
			res, err := client.Get(ts.URL + static.URL(n))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			want := "text/css"
			if strings.HasSuffix(n, ".js") {
				want = "javascript"
			}
			if typ := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.Contains(typ, want) {
				t.Fatalf("round %d: GET %s: %d %s (%d bytes), want 200 %s", round, n, res.StatusCode, typ, len(body), want)
			}
		}
	}
}
