package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// In headless Chromium against the real server: log in with the first-start
// token, post from the composer in one tab, and see the message appear live
// in a second tab, with no reload.
func TestBrowserLiveAcrossTabs(t *testing.T) {
	tabA := browsertest.Browser(t, 90*time.Second)
	m, out := startMain(t, t.TempDir())
	defer m.Close(context.Background())
	token := tokenRE.FindString(out.String())

	run := func(ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	waitFor := func(ctx context.Context, step, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("%s: waiting for %s: %v", step, expr, err)
		}
	}
	const wsOpen = `document.body.dataset.ws === "open"`

	run(tabA, "log in",
		chromedp.Navigate(m.URL()),
		chromedp.WaitVisible(`[data-testid="login-token"]`),
		chromedp.SendKeys(`[data-testid="login-token"]`, token),
		browsertest.Click(`[data-testid="login-submit"]`),
		chromedp.WaitVisible(`[data-testid="composer-input"]`))
	waitFor(tabA, "tab A websocket", wsOpen)

	tabB, cancel := chromedp.NewContext(tabA) // same browser, same cookies
	defer cancel()
	run(tabB, "open second tab", chromedp.Navigate(m.URL()+"c/general"), chromedp.WaitVisible(`[data-testid="message-list"]`))
	waitFor(tabB, "tab B websocket", wsOpen)

	run(tabA, "post", chromedp.SendKeys(`[data-testid="composer-input"]`, "hello from tab A, **live**\n"))
	const arrived = `Array.from(document.querySelectorAll('[data-testid="message-body"]')).some(e => e.innerHTML.includes("hello from tab A, <strong>live</strong>"))`
	waitFor(tabB, "message in tab B", arrived)
	waitFor(tabA, "message in tab A", arrived)

	n, err := chromedp.Run(tabB, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="message"]').length`))
	if err != nil || n != 1 {
		t.Errorf("tab B shows %d messages (%v), want exactly 1", n, err)
	}
	if dir := os.Getenv("BULLPEN_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(tabB, chromedp.CaptureScreenshot())
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "dashboard.png"), png, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	stored, err := m.DB.CountMessages(context.Background(), 0)
	if err != nil || stored != 1 {
		t.Errorf("stored %d messages (%v), want 1", stored, err)
	}
}
