package browsertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Problems collects what went wrong in a tab: console errors, uncaught
// exceptions, failed requests and HTTP error answers.
type Problems struct {
	mu   sync.Mutex
	list []string
}

func (p *Problems) add(format string, args ...any) {
	p.mu.Lock()
	p.list = append(p.list, fmt.Sprintf(format, args...))
	p.mu.Unlock()
}

// List returns the problems seen so far.
func (p *Problems) List() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

// FailOnProblems watches the tab of ctx and, when the test ends, fails it
// for every console error, uncaught exception, failed request or response
// with status 400 or more that the page met. A test that provokes an error
// on purpose uses a tab without it.
func FailOnProblems(tb testing.TB, ctx context.Context) *Problems {
	tb.Helper()
	p := &Problems{}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				p.add("console.%s: %s", e.Type, argsText(e.Args))
			}
		case *runtime.EventExceptionThrown:
			p.add("uncaught exception: %s", exceptionText(e.ExceptionDetails))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				p.add("browser log: %s %s", e.Entry.Text, e.Entry.URL)
			}
		case *network.EventLoadingFailed:
			if !e.Canceled {
				p.add("request failed: %s (%s)", e.ErrorText, e.RequestID)
			}
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				p.add("HTTP %d: %s", e.Response.Status, e.Response.URL)
			}
		}
	})
	if err != nil {
		tb.Fatalf("browsertest: watch the tab: %v", err)
	}
	tb.Cleanup(func() {
		for _, s := range p.List() {
			tb.Errorf("browser: %s", s)
		}
	})
	return p
}

func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if a.Description != "" {
			parts = append(parts, a.Description)
		} else {
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "?"
	}
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}
