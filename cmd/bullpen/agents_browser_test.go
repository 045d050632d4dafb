package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// In headless Chromium against the real server: open the Agents tab, hire
// "starter/engineer" from the form, see it listed idle; a second hire of
// the same handle shows the server's error and keeps the input; edit its
// title and mute it; fire it (two clicks) and see it marked fired, on the page and in
// the API.
func TestBrowserAgentsHireEditFire(t *testing.T) {
	tab := browsertest.Browser(t, 90*time.Second)
	m, out := startMain(t, t.TempDir())
	defer m.Close(context.Background())
	token := tokenRE.FindString(out.String())

	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	waitFor := func(step, expr string) {
		t.Helper()
		if _, err := chromedp.Run(tab, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('[data-agents]').innerText`))
			t.Fatalf("%s: waiting for %s: %v\npanel:\n%s", step, expr, err, text)
		}
	}
	const q = `document.querySelector`
	sel := func(id string) string { return `[data-testid="` + id + `"]` }

	run("log in",
		chromedp.Navigate(m.URL()),
		chromedp.WaitVisible(sel("login-token")),
		chromedp.SendKeys(sel("login-token"), token),
		browsertest.Click(sel("login-submit")),
		chromedp.WaitVisible(sel("composer-input")))
	// The panel re-renders as the office's events arrive, so a button is
	// clicked where it stands when clicked (a node found a moment before
	// may have been replaced: "Could not find node with given id").
	clickNow := func(id string) string {
		return `(() => { const b = document.querySelector('` + sel(id) + `'); if (!b || b.offsetParent === null) return false; b.click(); return true })()`
	}
	run("open the Agents tab", chromedp.WaitVisible(sel("panel-tab-agents")))
	waitFor("the Agents tab clicked", clickNow("panel-tab-agents"))
	run("see the empty agents panel", chromedp.WaitVisible(sel("agents-empty")))
	waitFor("the hire form opened", clickNow("agent-hire-open"))
	run("see the hire form", chromedp.WaitVisible(sel("agent-hire-form")))
	waitFor("roles loaded", q+`('`+sel("agent-hire-role")+` option[value="starter/engineer"]') !== null`)

	run("hire starter/engineer",
		chromedp.SetValue(sel("agent-hire-role"), "starter/engineer"),
		browsertest.Click(sel("agent-hire-submit")))
	waitFor("engineer listed idle", q+`('`+sel("agent-engineer")+`') !== null && `+
		q+`('`+sel("agent-engineer")+`').dataset.status === "idle" && `+
		q+`('`+sel("agent-status-engineer")+`').textContent === "idle"`)
	// A browser hire shows no token: the agent's runtime mints its own.
	waitFor("hire confirmed", q+`('`+sel("agent-hire-result")+`').textContent.includes("Hired @engineer")`)
	if shown, _ := chromedp.Run(tab, chromedp.Evaluate[bool](q+`('`+sel("agent-hire-result")+`').textContent.includes("bp_")`)); shown {
		t.Error("the browser hire shows the agent's token")
	}
	if n, _ := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="agents-list"] > li').length`)); n != 1 {
		t.Errorf("%d agents listed, want 1", n)
	}

	// A second engineer: the handle is taken. The server's message shows
	// and the form keeps what was typed.
	run("hire it again",
		browsertest.Click(sel("agent-hire-open")),
		chromedp.WaitVisible(sel("agent-hire-form")),
		chromedp.SetValue(sel("agent-hire-role"), "starter/engineer"),
		chromedp.SendKeys(sel("agent-hire-title"), "Second engineer"),
		browsertest.Click(sel("agent-hire-submit")))
	waitFor("hire error", `!`+q+`('`+sel("agent-hire-error")+`').hidden && `+q+`('`+sel("agent-hire-error")+`').textContent.includes("engineer")`)
	kept, _ := chromedp.Run(tab, chromedp.Evaluate[string](q+`('`+sel("agent-hire-role")+`').value + "|" + `+q+`('`+sel("agent-hire-title")+`').value`))
	if kept != "starter/engineer|Second engineer" {
		t.Errorf("after a failed hire the form holds %q, want the input kept", kept)
	}
	run("cancel", browsertest.Click(sel("agent-hire-cancel")))

	run("edit the title and mute it",
		browsertest.Click(sel("agent-edit-engineer")),
		chromedp.WaitVisible(sel("agent-edit-form-engineer")),
		chromedp.SetValue(sel("agent-edit-title-engineer"), "Build engineer"),
		browsertest.Click(sel("agent-edit-muted-engineer")),
		browsertest.Click(sel("agent-edit-save-engineer")))
	waitFor("title and mute saved", q+`('`+sel("agent-edit-form-engineer")+`').hidden && `+
		q+`('`+sel("agent-engineer")+` .agt-meta').textContent.startsWith("Build engineer") && `+
		q+`('`+sel("agent-status-engineer")+`').textContent === "idle · muted"`)

	run("fire (two clicks)", browsertest.Click(sel("agent-fire-engineer")), browsertest.Click(sel("agent-fire-engineer")))
	waitFor("engineer fired", q+`('`+sel("agent-engineer")+`').dataset.status === "fired" && `+
		q+`('`+sel("agent-status-engineer")+`').textContent === "fired" && `+
		q+`('`+sel("agent-engineer")+` .agt-manage').hidden`)
	screenshot(t, tab, "agents.png")

	// The server agrees: fired, with the edited title.
	req, _ := http.NewRequest("GET", m.URL()+"api/v1/agents", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var list struct {
		Items []bullpen.AgentView `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("agents: %v: %s", err, raw)
	}
	if len(list.Items) != 1 || list.Items[0].Handle != "engineer" || list.Items[0].State != "fired" || list.Items[0].Title != "Build engineer" || !list.Items[0].Muted {
		t.Errorf("agents = %s, want one fired, muted engineer titled Build engineer", strings.TrimSpace(string(raw)))
	}
}
