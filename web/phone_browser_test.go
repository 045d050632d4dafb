package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// shot saves a screenshot of the tab to $BULLPEN_SCREENSHOTS/name.png, when set.
func (b *tab) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("BULLPEN_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// afterLoad waits up to 20 s for expr to hold on the page a click is
// loading: evaluating in a page being replaced may fail, so it retries.
func (b *tab) afterLoad(step, expr string) {
	b.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
	}
	b.t.Fatalf("%s: %s never held", step, expr)
}

// noOverflow fails when the page scrolls sideways.
func (b *tab) noOverflow(step string) {
	b.t.Helper()
	if w := evalIn[[]float64](b, `[document.scrollingElement.scrollWidth, innerWidth]`); w[0] > w[1] {
		b.t.Errorf("%s: the page is %.0f px wide in a %.0f px window", step, w[0], w[1])
	}
}

// At 390×844 (a phone) the dashboard is one column: nothing overflows
// sideways, the composer and Send are inside the window, the ☰ menu opens
// the sidebar and closes on a channel, on × and on Escape, and each
// button of the bottom bar shows its panel over the whole window. At
// 1400×900 the bar and the menu button are not shown.
func TestPhoneDashboardBrowser(t *testing.T) {
	s := newWorkspaceServer(t, time.Minute) // with agents, for the Agents sheet
	if st := s.do("POST", "/api/v1/channels", s.Token, map[string]string{"name": "pocket"}, nil); st != 201 {
		t.Fatalf("create channel: %d", st)
	}
	const w, h = 390, 844
	b := newTab(t, s.URL, s.Token, w, h)
	b.waitFor("phone.js ran", q("nav-open")+`.hasAttribute("aria-expanded") && `+q("panels-widen")+`.hasAttribute("aria-pressed")`)
	b.shot("phone-chat")
	b.noOverflow("chat")
	for _, id := range []string{"composer-input", "composer-send", "nav-open", "phone-tab-chat", "phone-tab-agents"} {
		if r := b.rect(id); !r.inside(w, h) {
			t.Errorf("%s at %+v, not inside the %dx%d window", id, r, w, h)
		}
	}
	if send, bar := b.rect("composer-send"), b.rect("phone-bar"); send.overlaps(bar) {
		t.Errorf("Send %+v is under the bottom bar %+v", send, bar)
	}
	if c := b.width("chat-panel"); c < w-1 {
		t.Errorf("the chat is %.0f px wide, want the whole %d", c, w)
	}
	if r := b.rect("sidebar"); r.Right > 0 && evalIn[string](b, `getComputedStyle(`+q("sidebar")+`).visibility`) != "hidden" {
		t.Errorf("the sidebar shows (%+v) before the menu is opened", r)
	}

	// The menu: open, close by ×, open, close by Escape, open, pick a channel.
	open := func(step string) {
		t.Helper()
		b.mouseClick(step, sel("nav-open"))
		b.waitFor(step, `(() => { const r = `+q("sidebar")+`.getBoundingClientRect(); return r.left >= 0 && r.width > 200 && getComputedStyle(`+q("sidebar")+`).visibility === "visible"; })()`)
	}
	closed := `(() => { const s = ` + q("sidebar") + `; return s.getBoundingClientRect().right <= 0 && getComputedStyle(s).visibility === "hidden"; })()`
	open("open the menu")
	b.shot("phone-menu")
	b.noOverflow("menu")
	b.mouseClick("close by ×", sel("nav-close"))
	b.waitFor("closed by ×", closed)
	open("open again")
	b.run("Escape", chromedp.KeyEvent(kb.Escape))
	b.waitFor("closed by Escape", closed)
	open("open a third time")
	b.mouseClick("pick #pocket", `[data-testid="channel-link"][data-channel-name="pocket"]`)
	b.afterLoad("#pocket shown", q("channel-name")+`.textContent.includes("pocket") && `+closed)
	b.noOverflow("#pocket")

	// The sheets: each panel fills the window above the bar.
	bar := b.rect("phone-bar")
	for _, id := range []string{"activity", "wiki", "sandboxes", "agents"} {
		b.mouseClick("open "+id, sel("phone-tab-"+id))
		b.waitFor(id+" shown", `!`+q("panel-"+id)+`.hidden && `+q("panels")+`.getBoundingClientRect().width > 0`)
		p := b.rect("panels")
		if p.Left > 0.5 || p.Top > 0.5 || p.Width < w-1 || p.Bottom < bar.Top-1 {
			t.Errorf("the %s sheet is at %+v, want the whole window above the bar (top %.0f)", id, p, bar.Top)
		}
		if pr := b.rect("panel-" + id); pr.Width < w-1 {
			t.Errorf("the %s panel is %.0f px wide, want %d", id, pr.Width, w)
		}
		if got := evalIn[string](b, q("phone-tab-"+id)+`.getAttribute("aria-pressed")`); got != "true" {
			t.Errorf("the %s button is not shown pressed (%q)", id, got)
		}
		b.noOverflow(id + " sheet")
		b.shot("phone-" + id)
	}
	if r := b.rect("approvals-list"); r.Top > h || evalIn[bool](b, q("approvals-list")+`.closest("[data-panel]").hidden`) {
		t.Errorf("the Agents sheet does not show the approvals (%+v)", r)
	}
	b.mouseClick("back to chat", sel("phone-tab-chat"))
	b.waitFor("chat back", q("panels")+`.getBoundingClientRect().width === 0`)
	if r := b.rect("composer-send"); !r.inside(w, h) {
		t.Errorf("back in the chat, Send is at %+v", r)
	}

	for _, vp := range [][2]int64{{1400, 900}, {1024, 768}} {
		t.Run(fmt.Sprintf("%dx%d", vp[0], vp[1]), func(t *testing.T) {
			d := newTab(t, s.URL, s.Token, vp[0], vp[1])
			d.waitFor("phone.js ran", q("nav-open")+`.hasAttribute("aria-expanded")`)
			for _, id := range []string{"phone-bar", "nav-open", "nav-close"} {
				if r := d.rect(id); r.Width != 0 || r.Height != 0 {
					t.Errorf("%s is shown at %+v", id, r)
				}
			}
			if sw, pw := d.width("sidebar"), d.width("panels"); sw < 200 || pw < 300 {
				t.Errorf("sidebar %.0f px, panels %.0f px: the three columns are gone", sw, pw)
			}
			d.noOverflow("desktop")
			d.shot(fmt.Sprintf("desktop-%dx%d", vp[0], vp[1]))
		})
	}
}
