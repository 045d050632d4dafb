package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/chromedp/chromedp"
)

// kinds lists the types of a page of the API's events.
func (s *sbServer) eventTypes(query string) map[string]int {
	s.t.Helper()
	var p struct{ Items []bullpen.Event }
	if st := s.do("GET", "/api/v1/events?before=999999&limit=1000&"+query, s.Token, nil, &p); st != 200 {
		s.t.Fatalf("GET events?%s = %d", query, st)
	}
	out := map[string]int{}
	for _, ev := range p.Items {
		out[ev.Type]++
	}
	return out
}

// The highlights (kind=highlights, the Activity tab's default) leave out
// the kinds declared Detail: a command reads as one line, not a started
// and a finished one. kind=all, the API without kind, and the command's
// own group keep every event.
func TestEventsHighlights(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{})
	s.exec(s.Token, sb.ID, map[string]any{"cmd": "echo one"})
	waitUntil(t, func() bool { return s.eventTypes("kind=sandbox")[bullpen.EventSandboxExecFinished] == 1 }) // stored after the stream ends
	detail := bullpen.DetailKinds()
	for _, want := range []string{bullpen.EventSandboxExecStarted, bullpen.EventToolStarted, bullpen.EventWakeQueued, bullpen.EventRoutineSkipped, bullpen.EventTaskTurn} {
		if !strings.Contains(","+strings.Join(detail, ",")+",", ","+want+",") {
			t.Errorf("DetailKinds() = %v, lacks %s", detail, want)
		}
	}
	high := s.eventTypes("kind=highlights")
	if high[bullpen.EventSandboxExecStarted] != 0 || high[bullpen.EventSandboxExecFinished] != 1 || high[bullpen.EventSandboxCreated] != 1 {
		t.Errorf("highlights: %v, want the command finished and the sandbox created, not the command started", high)
	}
	for _, q := range []string{"kind=all", "", "kind=sandbox", "kind=" + bullpen.EventSandboxExecStarted} {
		if got := s.eventTypes(q); got[bullpen.EventSandboxExecStarted] != 1 {
			t.Errorf("events?%s: %v, want the command's start too", q, got)
		}
	}
	var e apiError
	if st := s.do("GET", "/api/v1/events?kind=highlights,sandbox", s.Token, nil, &e); st != 400 {
		t.Errorf("kind=highlights,sandbox = %d %+v, want 400: highlights is a view, not a kind", st, e)
	}
}

// The Activity tab at each screen size: by default a command shows as
// the one line of its end, "Every event" adds its start, and the line's
// link opens the command in the sandbox's exec history.
func TestTimelineHighlightsBrowser(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{"name": "tl-box"})
	entries := `Array.from(document.querySelectorAll('[data-testid="timeline-entry"]')).map(e => e.textContent)`
	for i, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		cmd := fmt.Sprintf("echo tl-%d", i)
		r := s.exec(s.Token, sb.ID, map[string]any{"cmd": cmd})
		waitUntil(t, func() bool { return s.eventTypes("kind=sandbox")[bullpen.EventSandboxExecFinished] == i+1 })
		b := newTab(t, s.URL, s.Token, size[0], size[1])
		if size[0] < 700 {
			b.mouseClick(name+": activity", sel("phone-tab-activity"))
		} else {
			b.mouseClick(name+": activity", sel("panel-tab-activity"))
		}
		b.waitFor(name+": the command's line", entries+`.some(t => t.includes("ran `+cmd+` →"))`)
		if got := evalIn[[]string](b, entries+`.filter(t => t.includes("`+cmd+`"))`); len(got) != 1 {
			t.Errorf("%s: highlights show %q for one command, want its one line", name, got)
		}
		if v := evalIn[string](b, q("timeline-kind")+`.value`); v != "highlights" {
			t.Errorf("%s: the kind filter starts at %q, want highlights", name, v)
		}
		b.shot("timeline-highlights-" + name)
		b.run(name+": every event", chromedp.SetValue(sel("timeline-kind"), "all"),
			chromedp.Evaluate[chromedp.Void](q("timeline-filters")+`.dispatchEvent(new Event("change"))`))
		b.waitFor(name+": its start too", entries+`.some(t => t.includes("is running `+cmd+` in"))`)
		b.run(name+": back to the highlights", chromedp.SetValue(sel("timeline-kind"), "highlights"),
			chromedp.Evaluate[chromedp.Void](q("timeline-filters")+`.dispatchEvent(new Event("change"))`))
		b.waitFor(name+": the start gone", `!`+entries+`.some(t => t.includes("is running `+cmd+` in"))`)
		b.run(name+": open the command", chromedp.Evaluate[chromedp.Void](`Array.from(document.querySelectorAll('[data-testid="timeline-link"]')).find(a => a.textContent.includes("ran `+cmd+` →")).click()`))
		entry := `document.querySelector('[data-exec-id="` + r.ExecID + `"]')`
		b.waitFor(name+": the command in its sandbox", entry+` && `+entry+`.classList.contains("sbx-exec-linked") && !`+
			entry+`.querySelector('[data-testid="sandbox-exec-output"]').hidden && `+entry+`.offsetHeight > 0 && `+entry+`.textContent.includes("tl-`+fmt.Sprint(i)+`")`)
	}
}
