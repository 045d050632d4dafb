package web_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// newWikiServer is newServer with the wiki service, on a dialect.
func newWikiServer(t *testing.T, dialect string) *testServer {
	t.Helper()
	db, off, token := openOffice(t, dialect)
	return serve(t, db, off, token, web.Config{}, web.Services{Office: off, Wiki: wiki.New(db, wiki.Config{})})
}

// conflictBody is the 409 of a stale save.
type conflictBody struct {
	apiError
	Current bullpen.WikiPage `json:"current"`
}

func TestWikiAPI(t *testing.T) {
	for _, dialect := range storetest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ts := newWikiServer(t, dialect)
			tok := ts.Token
			var p bullpen.WikiPage
			if st := ts.do("POST", "/api/v1/wiki/pages", tok, map[string]any{"title": "Runbook", "body": "See [[Pager Duty]] and **bold**.", "tags": []string{"ops"}, "summary": "first"}, &p); st != http.StatusCreated {
				t.Fatalf("create: status %d", st)
			}
			if p.Slug != "runbook" || p.Revision != 1 || p.CreatedByHandle != "admin" {
				t.Fatalf("created = %+v", p)
			}
			var e apiError
			if st := ts.do("POST", "/api/v1/wiki/pages", tok, map[string]any{"title": "Runbook", "body": "again"}, &e); st != http.StatusConflict {
				t.Errorf("create twice: status %d, want 409", st)
			}
			var got bullpen.WikiPage
			if st := ts.do("GET", "/api/v1/wiki/pages/runbook", tok, nil, &got); st != http.StatusOK ||
				!strings.Contains(got.HTML, "<strong>bold</strong>") || !strings.Contains(got.HTML, `class="wiki-link wiki-missing"`) {
				t.Fatalf("get: %d %+v", st, got)
			}
			// Two edits from revision 1: the second is a conflict carrying the current page.
			if st := ts.do("PUT", "/api/v1/wiki/pages/runbook", tok, map[string]any{"title": "Runbook", "body": "v2", "base_revision": 1}, &p); st != http.StatusOK || p.Revision != 2 {
				t.Fatalf("save: %d %+v", st, p)
			}
			var cb conflictBody
			if st := ts.do("PUT", "/api/v1/wiki/pages/runbook", tok, map[string]any{"title": "Runbook", "body": "mine", "base_revision": 1}, &cb); st != http.StatusConflict {
				t.Fatalf("stale save: status %d", st)
			}
			if cb.Error.Code != bullpen.ECONFLICT || cb.Current.Body != "v2" || cb.Current.Revision != 2 || !strings.Contains(cb.Error.Message, "current revision is 2") {
				t.Errorf("conflict body = %+v", cb)
			}
			if fmtTags(p.Tags) != "ops" {
				t.Errorf("tags after a save without tags = %v, want kept", p.Tags)
			}
			for _, tt := range []struct {
				method, path string
				body         any
				status       int
			}{
				{"PUT", "/api/v1/wiki/pages/runbook", map[string]any{"title": "R", "body": "x"}, http.StatusBadRequest},
				{"PUT", "/api/v1/wiki/pages/runbook", map[string]any{"title": "R", "body": "x", "base_revision": 2, "author_id": 9}, http.StatusBadRequest},
				{"PUT", "/api/v1/wiki/pages/runbook", `{"title":`, http.StatusBadRequest},
				{"GET", "/api/v1/wiki/pages/nope", nil, http.StatusNotFound},
				{"GET", "/api/v1/wiki/pages/runbook/revisions/9", nil, http.StatusNotFound},
				{"GET", "/api/v1/wiki/pages/runbook/revisions/x", nil, http.StatusBadRequest},
				{"GET", "/api/v1/wiki/pages?sort=random", nil, http.StatusBadRequest},
				{"GET", "/api/v1/wiki/search?q=x&limit=999", nil, http.StatusBadRequest},
				{"POST", "/api/v1/wiki/pages/runbook/restore", map[string]any{"revision": 0}, http.StatusBadRequest},
				{"POST", "/api/v1/wiki/import", "not an archive", http.StatusBadRequest},
				{"GET", "/api/v1/wiki/export?format=rar", nil, http.StatusBadRequest},
			} {
				var e apiError
				if st := ts.do(tt.method, tt.path, tok, tt.body, &e); st != tt.status || e.Error.Code == "" {
					t.Errorf("%s %s: %d %+v, want %d with an error body", tt.method, tt.path, st, e, tt.status)
				}
			}

			var revs struct{ Items []bullpen.WikiRevision }
			if st := ts.do("GET", "/api/v1/wiki/pages/runbook/revisions", tok, nil, &revs); st != http.StatusOK || len(revs.Items) != 2 {
				t.Fatalf("revisions: %d %+v", st, revs)
			}
			var rev bullpen.WikiRevision
			if st := ts.do("GET", "/api/v1/wiki/pages/runbook/revisions/1", tok, nil, &rev); st != http.StatusOK || rev.Summary != "first" {
				t.Errorf("revision 1: %d %+v", st, rev)
			}
			var d bullpen.WikiDiff
			if st := ts.do("GET", "/api/v1/wiki/pages/runbook/diff?from=1&to=2", tok, nil, &d); st != http.StatusOK || d.Added != 1 || d.Removed != 1 {
				t.Errorf("diff: %d %+v", st, d)
			}
			if st := ts.do("POST", "/api/v1/wiki/pages/runbook/restore", tok, map[string]any{"revision": 1}, &p); st != http.StatusOK || p.Revision != 3 || !strings.HasPrefix(p.Body, "See") {
				t.Errorf("restore: %d %+v", st, p)
			}
			if st := ts.do("POST", "/api/v1/wiki/pages/runbook/restore", tok, map[string]any{"revision": 2, "base_revision": 2}, &cb); st != http.StatusConflict || cb.Current.Revision != 3 {
				t.Errorf("stale restore: %d %+v", st, cb)
			}
			ts.do("POST", "/api/v1/wiki/pages", tok, map[string]any{"title": "Home", "body": "[[Runbook]]"}, nil)
			var refs struct{ Items []bullpen.WikiPageRef }
			if st := ts.do("GET", "/api/v1/wiki/pages/runbook/backlinks", tok, nil, &refs); st != http.StatusOK || len(refs.Items) != 1 || refs.Items[0].Slug != "home" {
				t.Errorf("backlinks: %d %+v", st, refs)
			}
			var wanted struct{ Items []bullpen.WikiWanted }
			if st := ts.do("GET", "/api/v1/wiki/wanted", tok, nil, &wanted); st != http.StatusOK || len(wanted.Items) != 1 || wanted.Items[0].Target != "pager-duty" {
				t.Errorf("wanted: %d %+v", st, wanted)
			}
			var hits struct{ Items []bullpen.WikiSearchHit }
			if st := ts.do("GET", "/api/v1/wiki/search?q=pager&tag=ops", tok, nil, &hits); st != http.StatusOK || len(hits.Items) != 1 || !strings.Contains(hits.Items[0].SnippetHTML, "<mark>") {
				t.Errorf("search: %d %+v", st, hits)
			}
			if st := ts.do("GET", "/api/v1/wiki/search?q=%22%29%28*%27%3A&prefix=1", tok, nil, &hits); st != http.StatusOK {
				t.Errorf("hostile search: %d", st)
			}
			var tags struct{ Items []bullpen.WikiTagCount }
			if st := ts.do("GET", "/api/v1/wiki/tags", tok, nil, &tags); st != http.StatusOK || len(tags.Items) != 1 {
				t.Errorf("tags: %d %+v", st, tags)
			}
			var prev struct{ HTML string }
			if st := ts.do("POST", "/api/v1/wiki/preview", tok, map[string]string{"body": "<script>alert(1)</script>\n\n[x](javascript:alert(1)) [[Runbook]] <img src=x onerror=alert(1)>"}, &prev); st != http.StatusOK ||
				strings.Contains(prev.HTML, "<script") || strings.Contains(prev.HTML, "javascript:") || strings.Contains(prev.HTML, "onerror") || !strings.Contains(prev.HTML, `href="/wiki/runbook" class="wiki-link"`) {
				t.Errorf("preview: %d %q", st, prev.HTML)
			}
			var list struct{ Items []bullpen.WikiPage }
			if st := ts.do("DELETE", "/api/v1/wiki/pages/home", tok, nil, &p); st != http.StatusOK || !p.Deleted {
				t.Errorf("delete: %d %+v", st, p)
			}
			if st := ts.do("GET", "/api/v1/wiki/pages/home", tok, nil, nil); st != http.StatusNotFound {
				t.Errorf("get deleted: %d", st)
			}
			if st := ts.do("GET", "/api/v1/wiki/pages?deleted=1", tok, nil, &list); st != http.StatusOK || len(list.Items) != 1 {
				t.Errorf("list deleted: %d %+v", st, list)
			}
			var undeleted bullpen.WikiPage
			if st := ts.do("POST", "/api/v1/wiki/pages/home/undelete", tok, nil, &undeleted); st != http.StatusOK || undeleted.Deleted {
				t.Errorf("undelete: %d %+v", st, undeleted)
			}
			if st := ts.do("GET", "/api/v1/wiki/pages?sort=updated&limit=1", tok, nil, &list); st != http.StatusOK || len(list.Items) != 1 || list.Items[0].Slug != "home" {
				t.Errorf("list by update: %d %+v", st, list)
			}

			// Export, then import into a fresh server.
			for _, format := range []string{"tar", "zip"} {
				arch, ctype := ts.raw("GET", "/api/v1/wiki/export?format="+format, tok, nil, http.StatusOK)
				if !strings.Contains(ctype, format) {
					t.Errorf("export %s content type %q", format, ctype)
				}
				other := newWikiServer(t, store.SQLite)
				body, _ := other.raw("POST", "/api/v1/wiki/import", other.Token, arch, http.StatusOK)
				var res bullpen.WikiImportResult
				json.Unmarshal(body, &res)
				if len(res.Created) != 2 {
					t.Errorf("import %s: %s", format, body)
				}
			}
		})
	}
}

func fmtTags(tags []string) string { return strings.Join(tags, ",") }

// raw sends a request with a raw body and returns the response body and
// content type, failing unless the status is want.
func (ts *testServer) raw(method, path, token string, body []byte, want int) ([]byte, string) {
	ts.t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		ts.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, out)
	}
	return out, resp.Header.Get("Content-Type")
}

// Saves reach websocket clients as wiki.page_saved events.
func TestWikiLiveEvents(t *testing.T) {
	ts := newWikiServer(t, store.SQLite)
	conn := ts.dial(ts.Token, "")
	defer conn.Close()
	ts.do("POST", "/api/v1/wiki/pages", ts.Token, map[string]any{"title": "Live", "body": "x", "summary": "hello"}, nil)
	ts.do("DELETE", "/api/v1/wiki/pages/live", ts.Token, nil, nil)
	var types []string
	var saved bullpen.WikiEvent
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	for len(types) < 2 {
		var f frame
		if err := conn.ReadJSON(&f); err != nil {
			t.Fatalf("read websocket after %v: %v", types, err)
		}
		for _, ev := range f.Events {
			types = append(types, ev.Type)
			if ev.Type == bullpen.EventWikiPageSaved {
				json.Unmarshal(ev.Payload, &saved)
			}
		}
	}
	if strings.Join(types, " ") != "wiki.page_saved wiki.page_deleted" {
		t.Errorf("events = %v", types)
	}
	if saved.Slug != "live" || saved.Revision != 1 || saved.Author != "admin" || saved.Summary != "hello" || !saved.Created {
		t.Errorf("saved event = %+v", saved)
	}
}

// The dashboard session needs the CSRF header to save, and /wiki/{slug}
// links open the dashboard's wiki panel.
func TestWikiBrowser(t *testing.T) {
	ts := newWikiServer(t, store.SQLite)
	b := ts.login(ts.Token)
	var p bullpen.WikiPage
	if st := b.do("POST", "/api/v1/wiki/pages", map[string]any{"title": "Web", "body": "x"}, &p); st != http.StatusCreated {
		t.Fatalf("create with session: %d", st)
	}
	req, _ := http.NewRequest("PUT", ts.URL+"/api/v1/wiki/pages/web", strings.NewReader(`{"title":"Web","body":"y","base_revision":1}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("save without CSRF: %d, want 403", resp.StatusCode)
	}
	noRedirect := *b.client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err = noRedirect.Get(ts.URL + "/wiki/web")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/c/general#wiki/web" {
		t.Errorf("/wiki/web: %d to %q", resp.StatusCode, loc)
	}
}

// Without a wiki service the routes answer 503.
func TestWikiUnavailable(t *testing.T) {
	ts := newServer(t, web.Config{})
	var e apiError
	if st := ts.do("GET", "/api/v1/wiki/pages", ts.Token, nil, &e); st != http.StatusServiceUnavailable || e.Error.Code != bullpen.EUNAVAILABLE {
		t.Errorf("status %d %+v, want 503", st, e)
	}
}

// A whole-wiki import may be larger than the server's general body limit
// (the wiki package enforces the import's own bound on what it unpacks).
func TestWikiImportLargerThanBodyLimit(t *testing.T) {
	ts := newWikiServer(t, store.SQLite)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	page := strings.Repeat("Lorem ipsum dolor sit amet. ", 200) // ~5.6 KB
	for i := 0; i < 300; i++ {
		body := fmt.Sprintf("---\ntitle: Page %d\n---\n%s\n", i, page)
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("page-%d.md", i), Mode: 0o644, Size: int64(len(body))})
		tw.Write([]byte(body))
	}
	tw.Close()
	if buf.Len() <= 1<<20 {
		t.Fatalf("archive is %d bytes; the test needs more than the 1 MiB body limit", buf.Len())
	}
	body, _ := ts.raw("POST", "/api/v1/wiki/import", ts.Token, buf.Bytes(), http.StatusOK)
	var res bullpen.WikiImportResult
	if err := json.Unmarshal(body, &res); err != nil || len(res.Created) != 300 {
		t.Fatalf("import of %d bytes: %s", buf.Len(), body)
	}
	// Other routes keep the general limit.
	ts.raw("POST", "/api/v1/channels", ts.Token, bytes.Repeat([]byte(" "), 2<<20), http.StatusRequestEntityTooLarge)
}
