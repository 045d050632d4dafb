package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// tab is a logged-in browser tab that fails its test on any console error
// or failed request.
type tab struct {
	t   *testing.T
	ctx context.Context
}

// newTab starts Chromium at width×height, watches it, and logs in at url
// with token (no login when token is "").
func newTab(t *testing.T, url, token string, width, height int64) *tab {
	t.Helper()
	ctx := browsertest.Browser(t, 120*time.Second)
	browsertest.FailOnErrors(t, ctx)
	b := &tab{t: t, ctx: ctx}
	b.run("viewport", chromedp.EmulateViewport(width, height))
	if token != "" {
		b.run("log in", chromedp.Navigate(url+"/login"), chromedp.WaitVisible(sel("login-token")),
			chromedp.SendKeys(sel("login-token"), token), browsertest.Click(sel("login-submit")),
			chromedp.WaitVisible(sel("composer-input")))
	}
	return b
}

func sel(id string) string { return `[data-testid="` + id + `"]` }

// q is document.querySelector of a test id, in JavaScript.
func q(id string) string { return `document.querySelector('[data-testid="` + id + `"]')` }

// run runs one step's actions, each step bounded so a wrong selector
// fails in seconds rather than at the browser's deadline.
func (b *tab) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

// mouseClick clicks selector with the mouse, as a person does
// (browsertest.Click: a node the live page replaced is found again).
func (b *tab) mouseClick(step, selector string) {
	b.t.Helper()
	b.run(step, browsertest.Click(selector))
}

// waitFor polls expr until it holds (20 s), across a navigation
// (browsertest.Poll).
func (b *tab) waitFor(step, expr string) {
	b.t.Helper()
	if err := browsertest.Poll(b.ctx, expr, 20*time.Second); err != nil {
		text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 3000)`))
		b.t.Fatalf("%s: waiting for %s: %v\npage:\n%s", step, expr, err, text)
	}
}

func evalIn[T any](b *tab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// rect is an element's bounding box.
type rect struct{ Left, Top, Right, Bottom, Width, Height float64 }

func (b *tab) rect(id string) rect {
	b.t.Helper()
	return evalIn[rect](b, `(() => { const r = `+q(id)+`.getBoundingClientRect();
		return {Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom, Width: r.width, Height: r.height}; })()`)
}

func (r rect) overlaps(o rect) bool {
	return r.Left < o.Right && o.Left < r.Right && r.Top < o.Bottom && o.Top < r.Bottom
}

// inside reports whether r lies wholly within a w×h viewport.
func (r rect) inside(w, h float64) bool {
	return r.Width > 0 && r.Left >= 0 && r.Top >= 0 && r.Right <= w && r.Bottom <= h
}

// typeText types s into the focused element as a person's keyboard does,
// one keyDown carrying the text and one keyUp per character (the way
// Chrome reports real typing); chromedp's SendKeys adds a separate char
// event, which xterm.js takes as a second key press.
func typeText(s string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range s {
			down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Text: string(r), Key: string(r), UnmodifiedText: string(r)}
			if r == '\r' {
				down.Key, down.Code, down.WindowsVirtualKeyCode, down.NativeVirtualKeyCode = "Enter", "Enter", 13, 13
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
				return err
			}
			up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: down.Key, Code: down.Code, WindowsVirtualKeyCode: down.WindowsVirtualKeyCode}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, up); err != nil {
				return err
			}
		}
		return nil
	})
}
