package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/web"
	"github.com/chromedp/chromedp"
)

// A terminal session in the dashboard's exec history, at each screen size:
// open the terminal, print something coloured, resize the window, close
// the terminal. The history then holds one entry per session (resizes add
// none), tagged "terminal", ended (not a red exit 137), whose output is
// the screen's text without escape codes.
func TestTerminalHistoryBrowser(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var sb struct{ ID string }
	if st := s.do("POST", "/api/v1/sandboxes", s.Token, map[string]any{"name": "term-box"}, &sb); st != 201 {
		t.Fatalf("create: %d", st)
	}
	rows := `Array.from(document.querySelectorAll('[data-testid="sandbox-terminal"] .xterm-rows > div')).map(r => r.textContent.trim())`
	entries := `Array.from(document.querySelectorAll('[data-testid="sandbox-exec"]'))`
	for i, size := range [][2]int64{{1400, 900}, {1024, 768}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		b := newTab(t, s.URL, s.Token, size[0], size[1])
		b.run(name+": open the sandbox", chromedp.Navigate(s.URL+"/#sandbox="+sb.ID), chromedp.WaitVisible(sel("sandbox-detail")))
		b.waitFor(name+": running", q("sandbox-detail-state")+`.textContent === "running" && !`+q("sandbox-terminal-open")+`.disabled`)
		b.mouseClick(name+": open the terminal", sel("sandbox-terminal-open"))
		b.waitFor(name+": prompt", rows+`.some(r => r.endsWith("$"))`)
		b.run(name+": type", chromedp.Focus(`[data-testid="sandbox-terminal"] .xterm-helper-textarea`),
			typeText(fmt.Sprintf(`printf 'session-%d \033[1;31mred\033[0m done\n'`+"\r", i)))
		want := fmt.Sprintf("session-%d red done", i)
		if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](rows+`.some(r => r === "`+want+`")`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			b.shot("debug-" + name)
			t.Fatalf("%s: not drawn; rows %q", name, evalIn[[]string](b, rows))
		}
		b.waitFor(name+": the live entry is a terminal", entries+`.some(e => e.querySelector('[data-testid="sandbox-exec-tag"]'))`)
		b.run(name+": resize the window", chromedp.EmulateViewport(size[0]-40, size[1]-60))
		b.run(name+": resize back", chromedp.EmulateViewport(size[0], size[1]))
		b.run(name+": stty", typeText("stty size\r"))
		b.waitFor(name+": after the resizes", rows+`.filter(r => /^\d+ \d+$/.test(r)).length > 0`)
		b.shot("terminal-open-" + name)
		b.mouseClick(name+": close the terminal", sel("sandbox-terminal-close"))

		last := entries + `.find(e => e.querySelector('[data-testid="sandbox-exec-tag"]') && e.textContent.includes("` + want + `"))`
		b.waitFor(name+": the session ended in the history", `(() => { const e = `+last+`;
			return e && e.querySelector('[data-testid="sandbox-exec-end"]').textContent.startsWith("ended"); })()`)
		end := evalIn[map[string]string](b, `(() => { const x = `+last+`.querySelector('[data-testid="sandbox-exec-end"]');
			return {text: x.textContent, ok: x.dataset.ok, color: getComputedStyle(x).color}; })()`)
		if end["ok"] == "false" || strings.Contains(end["text"], "137") || end["color"] == "rgb(252, 165, 165)" {
			t.Errorf("%s: the closed session reads %+v, want ended, not a failure", name, end)
		}
		out := evalIn[string](b, last+`.querySelector('[data-testid="sandbox-exec-output"]').textContent`)
		if strings.ContainsAny(out, "\x1b\a\r") || !strings.Contains(out, "\n"+want+"\n") {
			t.Errorf("%s: the session's output in the history is %q, want its screen's text", name, out)
		}
		if n := evalIn[int](b, entries+`.length`); n != i+1 {
			t.Errorf("%s: the history shows %d entries after %d sessions (resizes must add none): %q", name, n, i+1,
				evalIn[[]string](b, entries+`.map(e => e.querySelector('[data-testid="sandbox-exec-command"]').textContent)`))
		}
		b.run(name+": open the entry", chromedp.Evaluate[chromedp.Void](`(() => { const e = `+last+`;
			if (e.querySelector('[data-testid="sandbox-exec-output"]').hidden) e.querySelector('[data-testid="sandbox-exec-toggle"]').click(); })()`))
		b.waitFor(name+": its output shows", `!`+last+`.querySelector('[data-testid="sandbox-exec-output"]').hidden`)
		b.run(name+": scroll to it", chromedp.Evaluate[chromedp.Void](last+`.scrollIntoView({block: "center"})`))
		b.shot("terminal-history-" + name)
	}
}
