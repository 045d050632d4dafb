package views

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// In the browser, members, DMs and activity lines that app.js renders
// live carry the @handle beside the display name, and the handle is
// visible (not cut off) at both window sizes. Screenshots go to
// $BULLPEN_VIEWS_SCREENSHOTS when set.
func TestHandlesInBrowser(t *testing.T) {
	f := newFakeServer(t)
	ctx := browsertest.Browser(t, 2*time.Minute)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	wait := func(expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	run("open dashboard", chromedp.EmulateViewport(1400, 900), chromedp.Navigate(f.URL+"/c/general"))
	<-f.pages
	<-f.sinces
	wait(`document.body.dataset.ws === "open"`)

	// A second "Ada Lovelace" joins, then opens a DM with Ada (member 1).
	f.send(f.event("member.created", 0, map[string]any{"id": 10, "handle": "mallory", "display_name": "Ada Lovelace", "kind": "human"}),
		f.event("channel.created", 0, map[string]any{"id": 11, "name": "dm-1-10", "kind": "dm"}))
	wait(`!!document.querySelector('[data-testid="dm-link"][data-channel-id="11"]')`)
	row := `document.querySelector('[data-testid="member"][data-member-id="10"]')`
	if got := eval(row + `.querySelector('[data-testid="member-handle"]').textContent`); got != "@mallory" {
		t.Errorf("live member row handle = %q, want @mallory", got)
	}
	dm := `document.querySelector('[data-testid="dm-link"][data-channel-id="11"]')`
	if got := eval(dm + `.querySelector('.channel-name').textContent + " " + ` + dm + `.querySelector('[data-testid="dm-handle"]').textContent`); got != "Ada Lovelace @mallory" {
		t.Errorf("live DM link = %q, want \"Ada Lovelace @mallory\"", got)
	}
	// The timeline's line for the join ("Ada Lovelace (@mallory), human,
	// joined the office") is package timeline's, tested there.
	for _, size := range [][2]int64{{1400, 900}, {1024, 768}} {
		run("resize", chromedp.EmulateViewport(size[0], size[1]))
		// Every handle is laid out whole: not clipped by its box.
		clipped := eval(`Array.from(document.querySelectorAll('[data-testid="member-handle"], [data-testid="dm-handle"], [data-testid="message-handle"]'))
			.filter(e => e.offsetWidth === 0 || e.scrollWidth > e.clientWidth + 1).map(e => e.textContent).join(",")`)
		if clipped != "" {
			t.Errorf("at %dx%d these handles are hidden or cut off: %s", size[0], size[1], clipped)
		}
		if dir := os.Getenv("BULLPEN_VIEWS_SCREENSHOTS"); dir != "" {
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("handles-%dx%d.png", size[0], size[1])), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
