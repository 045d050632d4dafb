package web_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// page drives one browser tab in a test.
type page struct {
	t   *testing.T
	ctx context.Context
}

func newPage(t *testing.T, ctx context.Context) page { return page{t: t, ctx: ctx} }

func (p page) q(id string) string { return `[data-testid="` + id + `"]` }

func (p page) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", step, err)
	}
}

// mouseClick clicks selector with the mouse (browsertest.Click).
func (p page) mouseClick(step, selector string) {
	p.t.Helper()
	p.run(step, browsertest.Click(selector))
}

// wait polls a JavaScript condition until it holds (never a fixed sleep).
func (p page) wait(step, expr string) {
	p.t.Helper()
	if err := browsertest.Poll(p.ctx, `!!(`+expr+`)`, 20*time.Second); err != nil {
		seen, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(window.__evs || []).slice(-30).join("\n")`))
		p.t.Fatalf("%s: waiting for %s: %v\nlast events the page heard:\n%s", step, expr, err, seen)
	}
}

func (p page) eval(expr string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

func (p page) login(base, token string) {
	p.t.Helper()
	p.run("log in", chromedp.EmulateViewport(1400, 900),
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(p.q("login-token")),
		chromedp.SendKeys(p.q("login-token"), token),
		browsertest.Click(p.q("login-submit")),
		chromedp.WaitVisible(p.q("composer-input")))
	p.wait("websocket", `document.body.dataset.ws === "open"`)
	p.record()
}

// record keeps the events the page hears, for failure messages.
func (p page) record() {
	p.run("record events", chromedp.Evaluate[chromedp.Void](`window.__evs = []; document.addEventListener("bullpen:event",
		(e) => window.__evs.push(e.detail.seq + " " + e.detail.type + " " + JSON.stringify(e.detail.payload).slice(0, 160)))`))
}

// shot saves a screenshot to $BULLPEN_SCREENSHOTS/name, when set.
func (p page) shot(name string) {
	p.t.Helper()
	dir := os.Getenv("BULLPEN_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
	if err != nil {
		p.t.Errorf("screenshot: %v", err)
	}
}
