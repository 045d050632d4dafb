package browsertest

import (
	"context"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Click is chromedp.Click (a mouse click on the first visible match of a
// CSS selector) that survives the live dashboard: the page re-renders
// parts of itself as the office's events arrive, and Chrome forgets a
// node it handed out once its document is re-read, so a click whose node
// went away between finding and clicking looks it up again (up to five
// times) instead of failing on "Could not find node with given id". Any
// other error, and a selector that never matches, fail as before.
func Click(selector string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range 5 {
			if _, err = chromedp.Click(selector)(ctx, t); err == nil || !NodeGone(err) {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, err
	}
}

// NodeGone reports whether err says that a node Chrome handed out no
// longer exists: its document was re-read or the node was replaced.
func NodeGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Could not find node with given id") || strings.Contains(msg, "No node with given id") ||
		strings.Contains(msg, "Node is detached from document")
}

// ContextGone reports whether err says that the JavaScript context an
// evaluation ran in is gone: the page navigated meanwhile.
func ContextGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Execution context was destroyed")
}

// Poll waits until the JavaScript expression expr is true, for at most
// timeout. A navigation that replaces the page while it polls (a hash
// route, a redirect) destroys the context the poll ran in: it polls again
// in the new page's.
func Poll(ctx context.Context, expr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil || !ContextGone(err) || time.Now().After(deadline) {
			return err
		}
	}
}
