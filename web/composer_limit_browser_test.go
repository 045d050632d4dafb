package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/store"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// An oversized paste is caught in the composer, before Send, in words: a
// note says how long the message is, what one may hold and what to do,
// and Send is off (Enter posts nothing); cut to size, it shows the count
// and posts. Characters count as the server counts them (an emoji is
// one). At each screen size, and in a thread's composer.
func TestComposerWarnsOfAnOversizedPasteBrowser(t *testing.T) {
	ts := newWikiServer(t, store.SQLite)
	posts := func() int {
		var l struct{ Items []any }
		ts.do("GET", "/api/v1/channels/1/messages?limit=200", ts.Token, nil, &l)
		return len(l.Items)
	}
	paste := func(id, text string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const i = %s; i.focus(); i.value = %q; i.dispatchEvent(new Event("input", {bubbles: true})); })()`, q(id), text))
	}
	long := strings.Repeat("😀", 50) + strings.Repeat("x", 16_000) // 16,050 characters, 16,100 UTF-16 units
	fits := strings.Repeat("😀", 50) + strings.Repeat("y", 14_950) // 15,000
	for i, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		b := newTab(t, ts.URL, ts.Token, size[0], size[1])
		before := posts()
		b.run(name+": paste", paste("composer-input", long))
		b.waitFor(name+": the warning", `!`+q("composer-limit")+`.hidden && `+q("composer-limit")+`.hasAttribute("data-over")`)
		note := evalIn[string](b, q("composer-limit")+`.textContent`)
		for _, says := range []string{"16,050 characters", "at most 16,000", "Cut 50 characters", "wiki page"} {
			if !strings.Contains(note, says) {
				t.Errorf("%s: the note %q does not say %q", name, note, says)
			}
		}
		if !evalIn[bool](b, q("composer-send")+`.disabled`) {
			t.Errorf("%s: Send is on for a message the server would refuse", name)
		}
		b.shot("composer-limit-" + name)
		b.run(name+": Enter", chromedp.KeyEvent(kb.Enter))
		if n := posts(); n != before {
			t.Errorf("%s: Enter posted an oversized message (%d posts, was %d)", name, n, before)
		}
		if !evalIn[bool](b, q("composer-error")+`.hidden`) {
			t.Errorf("%s: an API error shows: %q", name, evalIn[string](b, q("composer-error")+`.textContent`))
		}
		text := fits + fmt.Sprint(i)
		b.run(name+": cut to size", paste("composer-input", text))
		b.waitFor(name+": the count", q("composer-limit")+`.textContent === "15,001 of 16,000 characters" && !`+
			q("composer-limit")+`.hasAttribute("data-over") && !`+q("composer-send")+`.disabled`)
		b.mouseClick(name+": send", sel("composer-send"))
		b.waitFor(name+": sent", q("composer-input")+`.value === "" && `+q("composer-limit")+`.hidden`)
		if n := posts(); n != before+1 {
			t.Errorf("%s: %d posts after sending one that fits, want %d", name, n, before+1)
		}
	}

	// The thread's composer warns the same way.
	b := newTab(t, ts.URL, ts.Token, 1400, 900)
	b.mouseClick("open a thread", sel("message-reply"))
	b.run("open a thread", chromedp.WaitVisible(sel("thread-input")))
	b.run("paste in the thread", paste("thread-input", long))
	b.waitFor("the thread's warning", q("thread-limit")+`.hasAttribute("data-over") && `+q("thread-send")+`.disabled`)
}
