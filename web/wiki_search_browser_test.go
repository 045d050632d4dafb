package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/chromedp/chromedp"
)

// Wiki search from an open page, at each screen size: typing in the
// search box while a page is open shows the results (they went to a
// hidden list before), and each hit's snippet reads as the page's text,
// not its Markdown. While editing, a search leaves the edit open and says
// why.
func TestWikiSearchFromAPageBrowser(t *testing.T) {
	ts := newWikiServer(t, store.SQLite)
	for _, p := range []map[string]any{
		{"title": "Launch plan", "body": "# Launch\n\n- [x] **Ship** the *beta* on [[Friday]]\n- read [the runbook](https://runbook.test/x) first\n"},
		{"title": "Rollback", "body": "If the ship sinks, `git revert` and tell #general.\n"},
	} {
		if st := ts.do("POST", "/api/v1/wiki/pages", ts.Token, p, nil); st != 201 {
			t.Fatalf("create page %v: %d", p["title"], st)
		}
	}
	for _, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		b := newTab(t, ts.URL, ts.Token, size[0], size[1])
		b.run(name+": open a page", chromedp.Navigate(ts.URL+"/#wiki/rollback"))
		b.waitFor(name+": the page", `!`+q("wiki-page-view")+`.hidden && `+q("wiki-title")+`.textContent === "Rollback" && `+q("wiki-page-view")+`.offsetHeight > 0`)
		b.mouseClick(name+": search", sel("wiki-search"))
		b.run(name+": search", typeText("ship"))
		b.waitFor(name+": the results show", `!`+q("wiki-list-view")+`.hidden && `+q("wiki-page-view")+`.hidden && `+
			`document.querySelectorAll('[data-testid="wiki-snippet"]').length === 2 && `+q("wiki-list")+`.offsetHeight > 0`)
		snips := evalIn[[]string](b, `Array.from(document.querySelectorAll('[data-testid="wiki-snippet"]')).map(s => s.textContent)`)
		for _, s := range snips {
			if strings.ContainsAny(s, "*[]`") || strings.HasPrefix(s, "#") || strings.Contains(s, "](") || strings.Contains(s, "runbook.test") {
				t.Errorf("%s: snippet %q shows Markdown", name, s)
			}
		}
		if !strings.Contains(strings.Join(snips, "|"), "Ship the beta on Friday") {
			t.Errorf("%s: snippets %q, want the text as the page reads", name, snips)
		}
		if h := evalIn[string](b, `location.hash`); h != "" {
			t.Errorf("%s: the address still names the closed page: %q", name, h)
		}
		b.shot("wiki-search-" + name)
	}

	// While editing, the edit stays open with what was typed.
	b := newTab(t, ts.URL, ts.Token, 1400, 900)
	b.run("open a page", chromedp.Navigate(ts.URL+"/#wiki/rollback"))
	b.waitFor("the page", q("wiki-title")+`.textContent === "Rollback"`)
	b.mouseClick("edit", sel("wiki-edit"))
	b.run("edit", chromedp.WaitVisible(sel("wiki-edit-body")),
		chromedp.SendKeys(sel("wiki-edit-body"), " typed-and-kept"), browsertest.Click(sel("wiki-search")), typeText("ship"))
	b.waitFor("told why", q("wiki-error")+`.textContent.includes("Save or cancel")`)
	if !evalIn[bool](b, `!`+q("wiki-edit-view")+`.hidden && `+q("wiki-edit-body")+`.value.includes("typed-and-kept")`) {
		t.Error("a search while editing closed the edit or lost its text")
	}
}
