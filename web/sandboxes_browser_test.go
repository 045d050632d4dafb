package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/chromedp/chromedp"
)

// An agent's own sandbox_exec shows in its sandbox's exec history with its
// output, and still does after a reload: the history is stored, not only
// streamed. The entry's link (#sandbox=…&exec=…) opens it directly.
func TestSandboxHistoryBrowser(t *testing.T) {
	s := newWorkspaceServer(t, time.Hour)
	var hired view.Hired
	if st := s.do("POST", "/api/v1/agents", s.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &hired); st != 201 {
		t.Fatalf("hire: %d", st)
	}
	s.askAgent(hired.Agent.Member, "echo from-agent-$((6*7))")
	ws := s.workspaceOf(hired.Agent.Member)
	var page bullpen.SandboxExecPage
	waitUntil(t, func() bool {
		page, _ = s.execsOf(s.Token, ws.ID, "")
		return len(page.Items) == 1 && !page.Items[0].Running
	})

	b := newTab(t, s.URL, s.Token, 1400, 900)
	entry := `document.querySelector('[data-exec-id="` + page.Items[0].ID + `"]')`
	openEntry := func(step string) {
		b.mouseClick(step, sel("panel-tab-sandboxes"))
		b.run(step, chromedp.WaitVisible(sel("sandbox-item")),
			browsertest.Click(sel("sandbox-item")), chromedp.WaitVisible(sel("sandbox-detail")))
		b.waitFor(step+": the agent's command in the history", entry+` && `+entry+`.querySelector('[data-testid="sandbox-exec-command"]').textContent.includes("from-agent")`)
		if by := evalIn[string](b, entry+`.querySelector('[data-testid="sandbox-exec-by"]').textContent`); by != "@eng" {
			t.Errorf("%s: entry by %q, want @eng", step, by)
		}
		if end := evalIn[string](b, entry+`.querySelector('[data-testid="sandbox-exec-end"]').textContent`); !strings.HasPrefix(end, "exit 0 · ") || !strings.HasSuffix(end, " ms") {
			t.Errorf("%s: entry end %q, want exit 0 and a duration", step, end)
		}
		b.mouseClick(step+": open the entry", `[data-exec-id="`+page.Items[0].ID+`"] [data-testid="sandbox-exec-toggle"]`)
		b.waitFor(step+": its output", `(() => { const o = `+entry+`.querySelector('[data-testid="sandbox-exec-output"]');
			return !o.hidden && o.offsetHeight > 0 && o.textContent.includes("from-agent-42"); })()`)
	}
	openEntry("first visit")
	b.run("reload", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(sel("composer-input")))
	openEntry("after the reload")
	link := "/#sandbox=" + ws.ID + "&exec=" + page.Items[0].ID
	if h := evalIn[string](b, `location.hash`); "/"+h != link {
		t.Errorf("opened entry's link = %q, want %q", h, link)
	}
	b.run("follow the link", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(sel("composer-input")), chromedp.Navigate(s.URL+link))
	b.waitFor("the link opens the entry", entry+` && !`+entry+`.querySelector('[data-testid="sandbox-exec-output"]').hidden && `+
		entry+`.textContent.includes("from-agent-42")`)
}

// A round trip through the terminal: type a command into xterm.js, the
// shell in the sandbox runs it, and its output is drawn by xterm.
func TestSandboxTerminalBrowser(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	var sb struct{ ID string }
	if st := s.do("POST", "/api/v1/sandboxes", s.Token, map[string]any{"name": "term-box"}, &sb); st != 201 {
		t.Fatalf("create: %d", st)
	}
	b := newTab(t, s.URL, s.Token, 1400, 900)
	b.run("open the sandbox", chromedp.Navigate(s.URL+"/#sandbox="+sb.ID), chromedp.WaitVisible(sel("sandbox-detail")))
	b.waitFor("running", q("sandbox-detail-state")+`.textContent === "running" && !`+q("sandbox-terminal-open")+`.disabled`)
	b.mouseClick("open the terminal", sel("sandbox-terminal-open"))
	b.waitFor("shell connected", `document.querySelector('[data-sandboxes]').dataset.terminal === "open"`)
	rows := `Array.from(document.querySelectorAll('[data-testid="sandbox-terminal"] .xterm-rows > div')).map(r => r.textContent.trim())`
	b.waitFor("prompt", rows+`.some(r => r.endsWith("$"))`)
	b.run("type", chromedp.Focus(`[data-testid="sandbox-terminal"] .xterm-helper-textarea`), typeText("echo hi-$((6*7))\r"))
	b.waitFor("hi-42 drawn by xterm", rows+`.some(r => r === "hi-42")`)
	if got := evalIn[[]string](b, rows+`.filter(r => r.includes("hi-"))`); len(got) < 2 || !strings.HasSuffix(got[0], "$ echo hi-$((6*7))") {
		t.Errorf("terminal rows with hi- = %q, want the typed line, then hi-42", got)
	}
	// A real terminal: its size is the drawn one, and a key reaches a
	// program without Enter (raw mode: vim and top work).
	b.run("stty size", typeText("stty size\r"))
	b.waitFor("the terminal's size", rows+`.some(r => /^\d+ \d+$/.test(r))`)
	size := evalIn[string](b, rows+`.find(r => /^\d+ \d+$/.test(r))`)
	if n := evalIn[int](b, `document.querySelectorAll('[data-testid="sandbox-terminal"] .xterm-rows > div').length`); !strings.HasPrefix(size, fmt.Sprint(n)+" ") {
		t.Errorf("stty size %q; xterm draws %d rows", size, n)
	}
	b.run("one key", typeText("read -n1 k; echo; echo KEY-$k\r"))
	time.Sleep(300 * time.Millisecond)
	b.run("press z", typeText("z"))
	b.waitFor("the key read without Enter", rows+`.some(r => r === "KEY-z")`)
}
