package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/web"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// maxFirstLoadKB is the most a channel page's first load (empty cache)
// may transfer: the page, its scripts and styles, and the API calls its
// scripts make while it settles.
const maxFirstLoadKB = 150

// TestFirstLoadWeightBrowser: in real Chromium with an empty cache, a
// channel page's first load transfers at most maxFirstLoadKB, compressed,
// and does not fetch the terminal library; opening a terminal fetches it
// and the terminal works. It prints the figure dashboard_first_load_kb.
func TestFirstLoadWeightBrowser(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var sb struct{ ID string }
	if st := s.do("POST", "/api/v1/sandboxes", s.Token, map[string]any{"name": "weigh-box"}, &sb); st != 201 {
		t.Fatalf("create: %d", st)
	}
	b := newTab(t, s.URL, s.Token, 1400, 900)
	b.run("empty the cache", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCache, cdp.Empty{})
		return err
	}), chromedp.Navigate(s.URL+"/c/general"), chromedp.WaitVisible(sel("composer-input")))
	b.waitFor("page loaded", `document.readyState === "complete"`)
	time.Sleep(1500 * time.Millisecond) // the panels' first API calls
	type entry struct {
		Name     string
		Transfer float64
		Body     float64
		Decoded  float64
	}
	entries := evalIn[[]entry](b, `performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
		.map(e => ({Name: e.name, Transfer: e.transferSize, Body: e.encodedBodySize, Decoded: e.decodedBodySize}))`)
	var total, decoded float64
	var lines []string
	for _, e := range entries {
		total += e.Transfer
		decoded += e.Decoded
		lines = append(lines, fmt.Sprintf("%7.0f B (%7.0f decoded) %s", e.Transfer, e.Decoded, strings.TrimPrefix(e.Name, s.URL)))
		if strings.Contains(e.Name, "xterm") {
			t.Errorf("the first load fetched %s", e.Name)
		}
	}
	kb := total / 1000
	t.Logf("first load: %.1f KB transferred (%.1f KB decoded), %d requests:\n%s", kb, decoded/1000, len(entries), strings.Join(lines, "\n"))
	fmt.Printf("figure dashboard_first_load_kb %.1f KB\nfigure dashboard_first_load_decoded_kb %.1f KB\n", kb, decoded/1000)
	if kb > maxFirstLoadKB || total == 0 {
		t.Errorf("a channel page's first load transferred %.1f KB, want at most %d (and more than 0)", kb, maxFirstLoadKB)
	}

	b.run("open the sandbox", chromedp.Navigate(s.URL+"/c/general#sandbox="+sb.ID), chromedp.WaitVisible(sel("sandbox-detail")))
	b.waitFor("running", q("sandbox-detail-state")+`.textContent === "running" && !`+q("sandbox-terminal-open")+`.disabled`)
	b.mouseClick("open the terminal", sel("sandbox-terminal-open"))
	b.waitFor("xterm.js fetched", `typeof window.Terminal === "function" && performance.getEntriesByType("resource").some(e => e.name.includes("/static/vendor/xterm.js?v="))`)
	b.waitFor("shell connected", `document.querySelector('[data-sandboxes]').dataset.terminal === "open"`)
	rows := `Array.from(document.querySelectorAll('[data-testid="sandbox-terminal"] .xterm-rows > div')).map(r => r.textContent.trim())`
	b.waitFor("prompt", rows+`.some(r => r.endsWith("$"))`)
	b.run("type", chromedp.Focus(`[data-testid="sandbox-terminal"] .xterm-helper-textarea`), typeText("echo hi-$((6*7))\r"))
	b.waitFor("hi-42 drawn by xterm", rows+`.some(r => r === "hi-42")`)
}
