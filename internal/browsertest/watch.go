package browsertest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Problems collects what went wrong in a tab: console errors, uncaught
// exceptions, failed requests and responses with an error status.
type Problems struct {
	mu   sync.Mutex
	list []string
}

// FailOnErrors watches the tab of ctx and fails tb, when the test ends,
// for anything that went wrong in the page, so that a browser test cannot
// pass over a broken script or a request the page should not have made.
// Call it before the first navigation and after the server under test
// has started: cleanups run last-registered first, so the check then runs
// while the server is still up, and a page still polling a server that the
// test has stopped is not counted.
func FailOnErrors(tb testing.TB, ctx context.Context) *Problems {
	tb.Helper()
	p := &Problems{}
	if err := chromedp.Listen(ctx, p.see); err != nil {
		tb.Fatalf("browsertest: watch the tab: %v", err)
	}
	tb.Cleanup(func() { p.Check(tb) })
	return p
}

// see runs in the tab's read loop: it only records.
func (p *Problems) see(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "uncaught exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		msg = "console.error:"
		for _, a := range e.Args {
			msg += " " + string(a.Value) + a.Description
		}
	case *log.EventEntryAdded:
		if e.Entry.Level != log.EntryLevelError {
			return
		}
		msg = fmt.Sprintf("log error (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
	case *network.EventLoadingFailed:
		if e.Canceled {
			return // a navigation away, not a failure
		}
		msg = fmt.Sprintf("request failed: %s (%s)", e.ErrorText, e.Type)
	case *network.EventResponseReceived:
		if e.Response.Status < 400 {
			return
		}
		msg = fmt.Sprintf("HTTP %d for %s", e.Response.Status, e.Response.URL)
	default:
		return
	}
	p.mu.Lock()
	p.list = append(p.list, msg)
	p.mu.Unlock()
}

// Take returns the problems seen so far and forgets them, for a test
// that provoked some on purpose (a form the API refuses answers 4xx): it
// checks they are the ones it expected.
func (p *Problems) Take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.list
	p.list = nil
	return list
}

// Check fails tb for each problem seen so far and forgets them.
func (p *Problems) Check(tb testing.TB) {
	tb.Helper()
	p.mu.Lock()
	list := p.list
	p.list = nil
	p.mu.Unlock()
	for _, m := range list {
		tb.Errorf("browser: %s", m)
	}
}
