package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/chromedp/chromedp"
)

// The Activity timeline in headless Chromium against the real server: it
// shows the stored log at once and after a reload, pages back with
// "Older", adds new entries live at the top, filters by kind with the
// filter in the URL (kept across a reload), and its entries open their
// subject: a wiki edit opens the revision's diff, a message its thread.
func TestTimelineBrowser(t *testing.T) {
	ts := newTimelineServer(t, store.SQLite) // first: it shuts down after the browser's checks
	ctx := browsertest.Browser(t, 2*time.Minute)
	browsertest.FailOnErrors(t, ctx)
	bg := context.Background()
	admin, err := ts.Off.Authenticate(bg, ts.Token)
	if err != nil {
		t.Fatal(err)
	}
	general, err := ts.Off.ChannelByName(bg, admin, bullpen.GeneralChannel)
	if err != nil {
		t.Fatal(err)
	}
	var page bullpen.WikiPage
	ts.do("POST", "/api/v1/wiki/pages", ts.Token, map[string]any{"title": "Launch plan", "body": "one\ntwo\n"}, &page)
	ts.do("PUT", "/api/v1/wiki/pages/launch-plan", ts.Token, map[string]any{"title": "Launch plan", "body": "one\nthree\n", "base_revision": 1}, nil)
	var first bullpen.Message
	for i := range 60 {
		m, err := ts.Off.Post(bg, admin, bullpen.PostInput{ChannelID: general.ID, Body: fmt.Sprintf("note %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = m
		}
	}

	if _, err := ts.Off.Post(bg, admin, bullpen.PostInput{ChannelID: general.ID, ThreadID: first.ID, Body: "reply to note 0"}); err != nil {
		t.Fatal(err)
	}

	b := newPage(t, ctx)
	b.login(ts.URL, ts.Token)

	// Older messages come with their answers too.
	b.mouseClick("load older messages", b.q("load-older"))
	b.wait("answer under an older message", fmt.Sprintf(`document.querySelector('[data-testid="message"][data-id="%d"] [data-testid="reply-preview"]')?.textContent.includes("reply to note 0")`, first.ID))

	const entries = `document.querySelectorAll('[data-testid="timeline-entry"]')`
	seqs := `Array.from(` + entries + `).map(e => e.dataset.seq).join(",")`
	b.wait("first page", entries+`.length === 50`)
	before := b.eval(seqs)
	if got := b.eval(entries + `[0].textContent`); !strings.Contains(got, "@admin replied in #general: “reply to note 0”") {
		t.Errorf("newest entry = %q", got)
	}

	b.run("reload", chromedp.Reload(), chromedp.WaitVisible(b.q("timeline-list")))
	b.record()
	if after := b.eval(seqs); after != before {
		t.Errorf("after a reload the timeline shows %s, before %s", after, before)
	}

	b.mouseClick("older", b.q("timeline-older"))
	b.wait("older entries", entries+`.length > 50`)
	order := b.eval(`(() => { const s = Array.from(` + entries + `).map(e => Number(e.dataset.seq));
		return s.every((v, i) => i === 0 || v < s[i - 1]) ? "desc" : s.join(","); })()`)
	if order != "desc" {
		t.Errorf("entries out of order or repeated: %s", order)
	}

	if _, err := ts.Off.Post(bg, admin, bullpen.PostInput{ChannelID: general.ID, Body: "a live one"}); err != nil {
		t.Fatal(err)
	}
	b.wait("live entry on top", entries+`[0].textContent.includes("“a live one”")`)

	b.run("filter wiki edits", chromedp.SetValue(`#tl-kind`, "wiki"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#tl-kind").dispatchEvent(new Event("change", {bubbles: true}))`))
	b.wait("only wiki entries", entries+`.length === 2 && Array.from(`+entries+`).every(e => e.dataset.kind.startsWith("wiki."))`)
	if got := b.eval(`location.search`); got != "?kind=wiki" {
		t.Errorf("filter URL = %q, want ?kind=wiki", got)
	}
	b.run("reload filtered", chromedp.Reload(), chromedp.WaitVisible(b.q("timeline-list")))
	b.record()
	b.wait("filter kept", `document.querySelector("#tl-kind").value === "wiki" && `+entries+`.length === 2`)

	edit := `document.querySelector('[data-testid="timeline-entry"][data-kind="wiki.page_saved"] a[href="#wiki-diff/launch-plan/2"]')`
	if got := b.eval(edit + `?.textContent || ""`); got != "@admin edited [[Launch plan]] (+1 −1)" {
		t.Errorf("wiki edit line = %q", got)
	}
	b.run("open the edit", chromedp.Evaluate[chromedp.Void](edit+`.click()`))
	b.wait("its diff", `!document.querySelector('[data-testid="panel-wiki"]').hidden &&
		Array.from(document.querySelectorAll('[data-testid="wiki-diff-line"]')).some(l => l.textContent.includes("three"))`)

	b.mouseClick("back to the timeline", b.q("panel-tab-activity"))
	b.run("filter messages", chromedp.SetValue(`#tl-kind`, "message"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#tl-kind").dispatchEvent(new Event("change", {bubbles: true}))`))
	b.wait("only messages", entries+`.length === 50 && Array.from(`+entries+`).every(e => e.dataset.kind.startsWith("message."))`)
	b.mouseClick("older messages", b.q("timeline-older"))
	msg := fmt.Sprintf(`document.querySelector('[data-testid="timeline-link"][href="/c/general#thread-%d"]')`, first.ID)
	b.wait("the first note", msg)
	b.run("open the message", chromedp.Evaluate[chromedp.Void](msg+`.click()`))
	b.wait("its thread", fmt.Sprintf(`!document.querySelector('[data-testid="thread-pane"]').hidden &&
		document.querySelector('[data-testid="thread-pane"]').dataset.rootId === "%d" &&
		document.querySelector('[data-testid="thread-root"]').textContent.includes("note 0")`, first.ID))
	b.shot("timeline.png")
}
