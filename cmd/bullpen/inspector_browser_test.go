package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/browsertest"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/chromedp/chromedp"
)

// A person asks @engineer something in the demo office, opens the thread,
// follows "why did it say this?" from the agent's answer and sees, in the
// inspector, the work packet's line with their question, the turn's tool
// calls and its tokens; the raw toggle shows the request exactly as
// recorded. The agent card's "last turns" lead there as well.
func TestBrowserTurnInspector(t *testing.T) {
	tab := browsertest.Browser(t, 120*time.Second)
	var out strings.Builder
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags("demo", []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--sandboxes=false"}); err != nil {
		t.Fatal(err)
	}
	m.Demo = true
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	defer m.Close(context.Background())
	token := tokenRE.FindString(out.String())
	api := apiClient{t: t, base: m.URL() + "api/v1", token: token}
	var eng view.Hired
	api.do("POST", "/agents", map[string]string{"role": "starter/engineer"}, 201, &eng)
	const ask = "@engineer please check that the build machine still works"
	var asked bullpen.Message
	api.do("POST", "/channels/1/messages", map[string]string{"body": ask}, 201, &asked)
	turn := waitTurnDone(t, api, eng.Agent.ID)
	var detail view.TurnDetail
	api.do("GET", fmt.Sprintf("/turns/%d", turn.ID), nil, 200, &detail)
	if len(detail.Turn.ToolCalls) == 0 || len(detail.ModelCalls) == 0 {
		t.Fatalf("turn %d has %d tool calls, %d model calls; the test needs both", turn.ID, len(detail.Turn.ToolCalls), len(detail.ModelCalls))
	}

	problems := browsertest.FailOnErrors(t, tab)
	sel := func(id string) string { return `[data-testid="` + id + `"]` }
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, actions...); err != nil {
			body, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: %v\npage:\n%.3000s", step, err, body)
		}
	}
	text := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	run("log in",
		chromedp.Navigate(m.URL()),
		chromedp.WaitVisible(sel("login-token")),
		chromedp.SendKeys(sel("login-token"), token),
		browsertest.Click(sel("login-submit")),
		chromedp.WaitVisible(sel("composer-input")))
	// The demo's team keeps posting in #general, so the question may have
	// scrolled out of the channel's loaded page by now: open its thread by
	// its link, as a shared link or a notification would.
	run("open the thread of the question",
		chromedp.Navigate(fmt.Sprintf("%s#thread-%d", m.URL(), asked.ID)),
		chromedp.WaitVisible(sel("thread-replies")+" "+sel("message-why")))
	run("follow why did it say this?",
		browsertest.Click(sel("thread-replies")+" "+sel("message-why")),
		chromedp.WaitVisible(sel("inspector-packet")))

	if got := text(`location.pathname`); got != fmt.Sprintf("/turns/%d", turn.ID) {
		t.Errorf("the link led to %s, want /turns/%d", got, turn.ID)
	}
	if got := text(`document.querySelector('` + sel("inspector-packet") + `').textContent`); !strings.Contains(got, "@admin: "+ask) {
		t.Errorf("work packet shown = %q, want the line %q", got, "@admin: "+ask)
	}
	names := text(`Array.from(document.querySelectorAll('` + sel("inspector-tool-name") + `')).map(e => e.textContent).join(",")`)
	var want []string
	for _, c := range detail.Turn.ToolCalls {
		want = append(want, c.Name)
	}
	if names != strings.Join(want, ",") {
		t.Errorf("tool calls shown = %q, want %q", names, strings.Join(want, ","))
	}
	in, outTok := text(`document.querySelector('`+sel("inspector-tokens-input")+`').textContent`), text(`document.querySelector('`+sel("inspector-tokens-output")+`').textContent`)
	if in != fmt.Sprint(detail.Turn.InputTokens) || outTok != fmt.Sprint(detail.Turn.OutputTokens) || detail.Turn.InputTokens == 0 {
		t.Errorf("tokens shown = %s in, %s out; want %d, %d", in, outTok, detail.Turn.InputTokens, detail.Turn.OutputTokens)
	}
	first := `document.querySelector('` + sel("inspector-request") + `')`
	run("show the first request's raw bytes", browsertest.Click(sel("inspector-request")+" [data-raw-toggle]"))
	if raw := text(first + `.querySelector('[data-view="raw"]:not([hidden])').textContent`); raw != detail.ModelCalls[0].Request {
		t.Errorf("raw request shown differs from the recorded one (%d vs %d bytes)", len(raw), len(detail.ModelCalls[0].Request))
	}
	screenshot(t, tab, "inspector.png")

	// The agent card lists its last turns, each linking to its inspector
	// page. The demo's team may have given the engineer newer turns by
	// now, so follow the newest link and check it leads to the turn it
	// names.
	link := sel("agent-turns-engineer") + " " + sel("agent-turn-link")
	run("show the agent card's last turns",
		chromedp.Navigate(m.URL()),
		chromedp.WaitVisible(sel("composer-input")),
		browsertest.Click(sel("panel-tab-agents")),
		chromedp.WaitVisible(link))
	label := text(`document.querySelector('` + link + `').textContent`)
	var newest int64
	if _, err := fmt.Sscanf(label, "turn %d", &newest); err != nil || newest < turn.ID {
		t.Fatalf("the card's newest turn link says %q, want a turn of @engineer from %d on", label, turn.ID)
	}
	run("open the agent card's newest turn", browsertest.Click(link), chromedp.WaitVisible(sel("inspector-packet")))
	if got := text(`location.pathname`); got != fmt.Sprintf("/turns/%d", newest) {
		t.Errorf("the agent card's link %q led to %s, want /turns/%d", label, got, newest)
	}
	problems.Check(t)
}

// waitTurnDone waits for the agent's first turn to end.
func waitTurnDone(t *testing.T, api apiClient, agentID int64) bullpen.Turn {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var list struct {
			Items []bullpen.Turn `json:"items"`
		}
		api.do("GET", fmt.Sprintf("/agents/%d/turns", agentID), nil, 200, &list)
		if len(list.Items) > 0 && list.Items[0].State != bullpen.TurnRunning {
			return list.Items[0]
		}
	}
	t.Fatal("no finished turn within 30 s")
	return bullpen.Turn{}
}
