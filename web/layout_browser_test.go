package web_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/bullpen-hq/bullpen/web"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

var viewports = [][2]int64{{1400, 900}, {1024, 768}, {800, 700}}

func (b *tab) width(id string) float64 { b.t.Helper(); return b.rect(id).Width }

func (b *tab) reload(url string) {
	b.t.Helper()
	b.run("reload", chromedp.Navigate(url+"/"), chromedp.WaitVisible(sel("panels")))
	b.waitFor("layout.js ran", q("panels-widen")+`.hasAttribute("aria-pressed") && `+q("panels-resize")+`.hasAttribute("aria-valuenow")`)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 2 }

// The panel widens (the toggle and the drag handle's arrow keys) and opens
// full width with the chat hidden and a way back; each choice survives a
// reload, at 1400, 1024 and 800 px, and the chat keeps its minimum width.
func TestPanelWidthBrowser(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	for _, vp := range viewports {
		t.Run(fmt.Sprintf("%dx%d", vp[0], vp[1]), func(t *testing.T) {
			b := newTab(t, s.URL, s.Token, vp[0], vp[1])
			w0 := b.width("panels")
			b.mouseClick("widen", sel("panels-widen"))
			w1 := b.width("panels")
			chat := b.width("chat-panel")
			chatMin := evalIn[float64](b, `parseInt(getComputedStyle(document.querySelector(".layout")).getPropertyValue("--chat-min"))`)
			if w1 < w0+30 || chat < chatMin-1 || b.rect("panels").Right > float64(vp[0])+1 {
				t.Fatalf("widened panel %.0f → %.0f px, chat %.0f px, right edge %.0f; want wider, chat ≥ %.0f, inside %d", w0, w1, chat, chatMin, b.rect("panels").Right, vp[0])
			}
			b.reload(s.URL)
			if w := b.width("panels"); !near(w, w1) || evalIn[string](b, q("panels-widen")+`.getAttribute("aria-pressed")`) != "true" {
				t.Errorf("after reload the panel is %.0f px, want %.0f (widened)", w, w1)
			}
			if vp[0] == 1400 {
				b.run("narrow by keyboard", chromedp.Focus(sel("panels-resize")), chromedp.KeyEvent(kb.ArrowRight))
				if w := b.width("panels"); !near(w, w1-40) {
					t.Errorf("ArrowRight on the handle: %.0f px, want %.0f", w, w1-40)
				}
				b.run("widen back", chromedp.KeyEvent(kb.ArrowLeft))
			}
			b.mouseClick("full width", sel("panels-full"))
			side := b.width("sidebar")
			if w, c := b.width("panels"), b.width("chat-panel"); c != 0 || !near(w, float64(vp[0])-side) || !b.rect("panels-back").inside(float64(vp[0]), float64(vp[1])) {
				t.Fatalf("full width: panel %.0f px, chat %.0f px; want %.0f and hidden, with Back to chat shown", w, c, float64(vp[0])-side)
			}
			b.reload(s.URL)
			if c := b.width("chat-panel"); c != 0 {
				t.Errorf("full width lost on reload: chat is %.0f px wide", c)
			}
			b.mouseClick("back to chat", sel("panels-back"))
			if w, c := b.width("panels"), b.width("chat-panel"); !near(w, w1) || c < chatMin-1 {
				t.Errorf("back to chat: panel %.0f px, chat %.0f px; want %.0f and the chat back", w, c, w1)
			}
			b.reload(s.URL)
			if c := b.width("chat-panel"); c < chatMin-1 {
				t.Errorf("after Back and a reload the chat is %.0f px", c)
			}
			b.run("reset", chromedp.Evaluate[chromedp.Void](`localStorage.clear()`))
		})
	}
}

// At 800 px the Agents tab and Log out are wholly inside the window, and
// at every width the sidebar footer draws nothing over the @handle.
func TestNarrowDashboardBrowser(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	for _, vp := range viewports {
		b := newTab(t, s.URL, s.Token, vp[0], vp[1])
		w, h := float64(vp[0]), float64(vp[1])
		for _, id := range []string{"panel-tab-agents", "logout-submit", "telegram-link", "me-handle"} {
			if r := b.rect(id); !r.inside(w, h) {
				t.Errorf("%dx%d: %s at %+v, not inside the window", vp[0], vp[1], id, r)
			}
		}
		if rows := evalIn[int](b, `new Set(Array.from(document.querySelectorAll('.panel-tab')).map(t => Math.round(t.getBoundingClientRect().top))).size`); rows != 1 {
			t.Errorf("%dx%d: the panel tabs take %d rows, want 1", vp[0], vp[1], rows)
		}
		handle := b.rect("me-handle")
		for _, id := range []string{"telegram-link", "logout-submit"} {
			if r := b.rect(id); r.overlaps(handle) {
				t.Errorf("%dx%d: %s %+v overlaps @handle %+v", vp[0], vp[1], id, r, handle)
			}
		}
	}
}

// The Telegram page scrolls to its "← Back to the office" links, its
// select is styled like the inputs, and the checkbox sits on its label's
// text line.
func TestTelegramPageBrowser(t *testing.T) {
	ts := newTelegramServer(t)
	b := newTab(t, ts.url, ts.token, 1024, 600)
	b.run("open /telegram", chromedp.Navigate(ts.url+"/telegram"), chromedp.WaitVisible(sel("telegram-page")))
	b.run("top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	if r := b.rect("telegram-back"); !r.inside(1024, 600) {
		t.Errorf("at the top of the page the back link is at %+v, not inside the window", r)
	}
	b.run("bottom", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`))
	if r := b.rect("telegram-back-bottom"); !r.inside(1024, 600) {
		t.Errorf("at the bottom of the page the back link is at %+v, not inside the window", r)
	}
	if got := evalIn[string](b, `(() => { const s = getComputedStyle(`+q("telegram-mode")+`); return s.appearance + " " + s.height + " " + s.borderTopLeftRadius; })()`); got != "none 40px 8px" {
		t.Errorf("select style = %q, want the inputs' look (none 40px 8px)", got)
	}
	off2 := evalIn[float64](b, `(() => { const l = `+q("telegram-approve-label")+`, box = l.querySelector("input").getBoundingClientRect();
		const r = document.createRange(); r.selectNodeContents(l); const rs = Array.from(r.getClientRects()).filter(x => x.width > 0 && x.height < 30);
		const text = rs[rs.length - 1]; return Math.abs((box.top + box.bottom) / 2 - (text.top + text.bottom) / 2) + (box.height > 24 ? 100 : 0); })()`)
	if off2 > 3 {
		t.Errorf("checkbox is %.1f px off its label's text line (or taller than 24 px)", off2)
	}
}
