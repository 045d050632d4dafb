package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/chromedp/chromedp"
)

// In headless Chromium against the real server: write a page in the wiki
// panel with a preview, read it, lose a race to another writer and keep
// the typed text, re-save on the new base, and see the history and diff.
// Hostile markdown and titles run no script.
func TestWikiPanelBrowser(t *testing.T) {
	ctx := browsertest.Browser(t, 120*time.Second)
	ts := newWikiServer(t, store.SQLite)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	waitFor := func(step, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("%s: waiting for %s: %v", step, expr, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	q := func(id string) string { return `[data-testid="` + id + `"]` }

	run("log in",
		chromedp.Navigate(ts.URL+"/login"),
		chromedp.WaitVisible(q("login-token")),
		chromedp.SendKeys(q("login-token"), ts.Token),
		browsertest.Click(q("login-submit")),
		chromedp.WaitVisible(q("composer-input")))
	run("wiki tab", browsertest.Click(q("panel-tab-wiki")))
	run("wiki tab", chromedp.WaitVisible(q("wiki-new")))

	// Write a page with a preview.
	run("new page",
		browsertest.Click(q("wiki-new")),
		chromedp.WaitVisible(q("wiki-edit-title")),
		chromedp.SendKeys(q("wiki-edit-title"), "Launch Plan"),
		chromedp.SendKeys(q("wiki-edit-tags"), "ops, launch"),
		chromedp.SendKeys(q("wiki-edit-body"), "# Launch\n\n- [x] **tests**\n- see [[Rollback]]\n"),
		browsertest.Click(q("wiki-tab-preview")))
	waitFor("preview", `document.querySelector('[data-testid="wiki-preview"]').innerHTML.includes("<strong>tests</strong>")`)
	run("save", browsertest.Click(q("wiki-save")), chromedp.WaitVisible(q("wiki-body")))
	waitFor("reading view", `document.querySelector('[data-testid="wiki-title"]').textContent === "Launch Plan" &&
		document.querySelector('[data-testid="wiki-body"] a.wiki-missing') !== null && location.hash === "#wiki/launch-plan"`)

	// Edit; meanwhile someone else saves revision 2.
	run("edit", browsertest.Click(q("wiki-edit")), chromedp.WaitVisible(q("wiki-edit-body")),
		chromedp.SendKeys(q("wiki-edit-body"), "my addition\n"))
	if st := ts.do("PUT", "/api/v1/wiki/pages/launch-plan", ts.Token, map[string]any{"title": "Launch Plan", "body": "their text\n", "base_revision": 1}, nil); st != http.StatusOK {
		t.Fatalf("concurrent save: %d", st)
	}
	run("stale save", browsertest.Click(q("wiki-save")), chromedp.WaitVisible(q("wiki-conflict")))
	if theirs := eval(`document.querySelector('[data-testid="wiki-conflict-theirs"]').value`); theirs != "their text\n" {
		t.Errorf("conflict shows %q, want the current text", theirs)
	}
	if mine := eval(`document.querySelector('[data-testid="wiki-edit-body"]').value`); !strings.Contains(mine, "my addition") {
		t.Errorf("editor lost the typed text: %q", mine)
	}
	run("re-save on the new base", browsertest.Click(q("wiki-save")), chromedp.WaitVisible(q("wiki-body")))
	waitFor("revision 3", `document.querySelector('[data-testid="wiki-meta"]').textContent.startsWith("Revision 3")`)

	run("history", browsertest.Click(q("wiki-history")), chromedp.WaitVisible(q("wiki-revisions")))
	waitFor("three revisions", `document.querySelectorAll('[data-testid="wiki-revision"]').length === 3`)
	run("diff", browsertest.Click(`[data-rev-diff="3"]`), chromedp.WaitVisible(q("wiki-diff")))
	waitFor("diff lines", `Array.from(document.querySelectorAll('.wiki-diff-insert')).some(e => e.textContent.includes("my addition"))`)

	shot := func(name string) {
		if dir := os.Getenv("BULLPEN_SCREENSHOTS"); dir != "" {
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
			}
			if err != nil {
				t.Errorf("screenshot: %v", err)
			}
		}
	}
	shot("wiki-history.png")

	// Hostile content: a page saved through the API, opened by a link.
	evil := "<script>alert(1)</script>\n\n" + `<img src=x onerror="window.__xss=1"> [x](javascript:window.__xss=2) [[Launch Plan|<img src=x onerror=window.__xss=3>]]`
	ts.do("POST", "/api/v1/wiki/pages", ts.Token, map[string]any{"slug": "evil", "title": `<img src=x onerror="window.__xss=4">`, "body": evil}, nil)
	run("open evil page", chromedp.Navigate(ts.URL+"/wiki/evil"), chromedp.WaitVisible(q("wiki-body")))
	waitFor("evil page shown", `document.querySelector('[data-testid="wiki-title"]').textContent.includes("onerror")`)
	if n := eval(`String(document.querySelectorAll('[data-testid="wiki-panel"] img[onerror], [data-testid="wiki-panel"] script').length)`); n != "0" {
		t.Errorf("%s live hostile elements in the panel", n)
	}
	eval(`document.querySelector('[data-testid="wiki-body"] a.wiki-link').click(), ""`)
	waitFor("wiki link opens the page", `document.querySelector('[data-testid="wiki-title"]').textContent === "Launch Plan"`)
	shot("wiki-page.png")
	if got := eval(`String(window.__xss || "")`); got != "" {
		t.Errorf("script ran: window.__xss = %s", got)
	}
}
