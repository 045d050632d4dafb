package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// steerScript: "read the channel" asks for read_channel (which the test's
// @writer must have approved); the approval's answer gets "read it, all
// fine"; anything else is echoed.
func steerScript(req llm.Request) (llm.Response, error) {
	v := agents.ViewOf(req)
	switch {
	case strings.Contains(v.Packet, "Approval #"):
		if v.Steps > 0 {
			return llm.Response{}, nil
		}
		return llm.Response{Text: "read it, all fine"}, nil
	case strings.Contains(v.Packet, "read the channel") && v.Steps == 0:
		return llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_channel", Arguments: []byte(`{"channel":"general"}`)}}}, nil
	}
	return echoScript(req)
}

// newSteerServer is newAgentServer on steerScript with the wiki too, so
// that every panel of the dashboard loads.
func newSteerServer(t *testing.T) *testServer {
	t.Helper()
	db, off, token := openOffice(t, store.SQLite)
	svc, err := agents.New(agents.Config{Office: off, DB: db, Providers: map[string]llm.Provider{"scripted": scripted.New(steerScript)},
		DefaultProvider: "scripted", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return serve(t, db, off, token, web.Config{ProviderNotice: svc.ProviderNotice()},
		web.Services{Office: off, Agents: svc, Wiki: wiki.New(db, wiki.Config{})}, func() { svc.Close() })
}

// The dashboard steers, in real Chromium at 1400×900: the first run hires
// the starter team in one click; @ suggests handles with their kind and
// state and Enter completes one; an unknown handle is warned about before
// it is sent (and the API names it); the message that asks for an
// approval carries Approve/Deny in the channel and in its thread, with a
// badge and a background notification; a fired agent moves to "Former
// agents"; a member click and the + picker open DMs; and full width no
// longer hides the chat of the next channel.
func TestSteerDashboardBrowser(t *testing.T) {
	ts := newSteerServer(t)
	b := newTab(t, ts.URL, ts.Token, 1400, 900)
	messages := `document.querySelectorAll('[data-testid="message-list"] > .msg').length`

	// First run: the guided empty state, the team in one click.
	b.waitFor("first run shown", q("first-run")+` !== null && `+q("first-run-team")+`.dataset.done === "false"`)
	if evalIn[bool](b, q("first-run-provider")+`.dataset.done !== "true"`) {
		t.Errorf("the scripted provider counts as set up, but the provider step is not done")
	}
	b.shot("steer-first-run-1400")
	b.mouseClick("hire the team", sel("first-run-hire"))
	b.waitFor("team hired", q("first-run-hired")+`?.textContent.includes("@lead")`)
	b.waitFor("lead in the members", `!!document.querySelector('[data-testid="member"][data-handle="lead"]')`)
	var team struct{ Items []bullpen.AgentView }
	ts.do("GET", "/api/v1/agents", ts.Token, nil, &team)
	if len(team.Items) != 4 {
		t.Fatalf("after one click %d agents, want the 4 of the starter team", len(team.Items))
	}

	// @ autocomplete: "@le" offers @lead, an idle agent; Enter completes it.
	b.mouseClick("type @le", sel("composer-input"))
	b.run("type @le", chromedp.SendKeys(sel("composer-input"), "@le"))
	b.waitFor("menu", `!`+q("mention-menu")+`.hidden && !!document.querySelector('[data-testid="mention-option"][data-handle="lead"]')`)
	opt := evalIn[string](b, `document.querySelector('[data-testid="mention-option"][data-handle="lead"]').textContent`)
	if !strings.Contains(opt, "Lead") || !strings.Contains(opt, "agent") || !strings.Contains(opt, "idle") {
		t.Errorf("the @lead option reads %q, want its name, kind and state", opt)
	}
	b.shot("steer-mention-1400")
	b.run("pick it", chromedp.KeyEvent(kb.Enter))
	b.waitFor("completed", q("composer-input")+`.value === "@lead "`)
	b.run("write and send", chromedp.SendKeys(sel("composer-input"), "status please"), chromedp.KeyEvent(kb.Enter))
	b.waitFor("the lead answers", `[...document.querySelectorAll('.msg-body, .preview-body')].some(e => e.textContent.includes("echo: @lead status please"))`)

	// An unknown handle: warned, not sent; "Send anyway" sends it.
	before := evalIn[int](b, messages)
	b.run("mention nobody", chromedp.SendKeys(sel("composer-input"), "@nobodyhere are you there?"), chromedp.KeyEvent(kb.Enter))
	defer func() {
		if t.Failed() {
			t.Logf("composer: %q", evalIn[string](b, q("composer-input")+`.value`))
		}
	}()
	b.waitFor("warning", `!`+q("mention-warning")+`.hidden && `+q("mention-warning")+`.textContent.includes("@nobodyhere")`)
	b.shot("steer-unknown-handle-1400")
	if n := evalIn[int](b, messages); n != before {
		t.Errorf("the message to @nobodyhere was sent before the warning was answered (%d → %d messages)", before, n)
	}
	b.mouseClick("send anyway", sel("mention-send-anyway"))
	b.waitFor("sent anyway", fmt.Sprintf(`%s === %d && %s.value === ""`, messages, before+1, q("composer-input")))
	// The API names unresolved handles too. Posted in a channel of its own:
	// in #general the lead's echo would repeat "@all" and wake the writer
	// hired below, whose turn would then answer that thread instead.
	var side bullpen.Channel
	if st := ts.do("POST", "/api/v1/channels", ts.Token, map[string]any{"name": "side"}, &side); st != 201 {
		t.Fatalf("create #side: %d", st)
	}
	var posted bullpen.Message
	if st := ts.do("POST", fmt.Sprintf("/api/v1/channels/%d/messages", side.ID), ts.Token, map[string]any{"body": "@lead and @ghost and @all, `@incode`"}, &posted); st != 201 || !slices.Equal(posted.UnresolvedMentions, []string{"ghost"}) {
		t.Errorf("POST answered %d with unresolved_mentions %q, want [ghost]", st, posted.UnresolvedMentions)
	}

	// Approvals where they are asked, with a badge and a notification.
	b.run("fake notifications in a background tab", chromedp.Evaluate[chromedp.Void](`window.__notes = [];
		window.Notification = function (title) { window.__notes.push(title); };
		window.Notification.permission = "granted";
		Object.defineProperty(document, "hidden", { configurable: true, get: () => true });`))
	spec := map[string]any{"handle": "writer", "name": "Writer", "tools": []string{"post_message", "read_channel"}, "approvals": []string{"read_channel"}, "prompt": "You write."}
	var writer view.Hired
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"spec": spec}, &writer); st != 201 {
		t.Fatalf("hire writer: %d", st)
	}
	var ask bullpen.Message
	ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@writer read the channel"}, &ask)
	buttons := fmt.Sprintf(`document.querySelector('.msg[data-id="%d"] [data-testid="message-approval"] [data-testid="approval-approve"]')`, ask.ID)
	b.waitFor("Approve on the asking message (in the channel)", buttons+` !== null`)
	b.waitFor("badge", q("approvals-badge")+`?.textContent === "1" && !`+q("approvals-badge")+`.hidden`)
	b.waitFor("notified", `window.__notes.some(n => n.includes("@writer asks for approval"))`)
	if txt := evalIn[string](b, fmt.Sprintf(`document.querySelector('.msg[data-id="%d"]').textContent`, ask.ID)); strings.Contains(txt, "/api/v1/approvals") {
		t.Errorf("the request still tells the human to use the API: %q", txt)
	}
	b.shot("steer-approval-1400")
	// Clicked from the page's own script: the live lines above it come and
	// go while agents work, and a click by coordinates can land beside it.
	b.run("open the thread", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('.msg[data-id="%d"] [data-testid="message-replies"]').click()`, ask.ID)))
	inThread := q("thread-replies") + `.querySelector('[data-testid="approval-approve"]')`
	b.waitFor("Approve in the thread", inThread+` !== null`)
	b.mouseClick("approve in the thread", `[data-testid="thread-replies"] [data-testid="approval-approve"]`)
	b.waitFor("answered everywhere", `[...document.querySelectorAll('[data-testid="message-approval"]')].every(x => x.dataset.state === "approved") && `+q("approvals-badge")+`.hidden`)
	b.waitFor("the writer goes on", `[...document.querySelectorAll('.msg-body, .preview-body')].some(e => e.textContent.includes("read it, all fine"))`)
	b.run("foreground again", chromedp.Evaluate[chromedp.Void](`delete document.hidden`))

	// A fired agent leaves the member list, live.
	ts.do("DELETE", "/api/v1/agents/"+itoa(writer.Agent.ID), ts.Token, nil, nil)
	b.waitFor("former agents", `!document.querySelector('[data-testid="member"][data-handle="writer"]') && !`+q("former-agents")+`.hidden && !!document.querySelector('[data-testid="former-member"][data-handle="writer"]')`)

	// DMs: a member click, then the + picker.
	b.mouseClick("click @lead", `[data-testid="member"][data-handle="lead"]`)
	b.afterLoad("DM with the lead", q("channel-handle")+`?.textContent === "@lead"`)
	if !evalIn[bool](b, `!!document.querySelector('[data-testid="former-member"][data-handle="writer"]') && !document.querySelector('[data-testid="member"][data-handle="writer"]')`) {
		t.Errorf("after a reload the fired @writer is not under Former agents only")
	}
	b.mouseClick("open the picker", sel("new-dm-toggle"))
	b.run("find the engineer", chromedp.SendKeys(sel("new-dm-filter"), "engin"))
	b.waitFor("one option", `document.querySelectorAll('[data-testid="new-dm-option"]').length === 1`)
	b.shot("steer-new-dm-1400")
	b.mouseClick("pick", sel("new-dm-option"))
	b.afterLoad("DM with the engineer", q("channel-handle")+`?.textContent === "@engineer"`)
	if n := evalIn[int](b, `document.querySelectorAll('[data-testid="dm-link"]').length`); n != 2 {
		t.Errorf("%d DMs in the sidebar, want 2", n)
	}

	// Full width is not a trap: after it, a channel shows its chat.
	b.mouseClick("full width", sel("panels-full"))
	b.waitFor("chat hidden", q("chat-panel")+`.getBoundingClientRect().width < 1`)
	b.mouseClick("pick #general", `[data-testid="channel-link"][data-channel-name="general"]`)
	b.afterLoad("#general with its chat", q("channel-name")+`.textContent.includes("general") && `+q("chat-panel")+`.getBoundingClientRect().width > 300`)

	for _, vp := range [][2]int64{{1024, 768}, {390, 844}} {
		t.Run(fmt.Sprintf("%dx%d", vp[0], vp[1]), func(t *testing.T) {
			d := newTab(t, ts.URL, ts.Token, vp[0], vp[1])
			d.mouseClick("type @", sel("composer-input"))
			d.run("type @", chromedp.SendKeys(sel("composer-input"), "@"))
			d.waitFor("menu", `document.querySelectorAll('[data-testid="mention-option"]').length >= 5`)
			if r := d.rect("mention-menu"); !r.inside(float64(vp[0]), float64(vp[1])) || r.Height < 60 {
				t.Errorf("the mention menu is at %+v, not inside the %dx%d window", r, vp[0], vp[1])
			}
			d.noOverflow("mention menu")
			d.shot(fmt.Sprintf("steer-mention-%dx%d", vp[0], vp[1]))
		})
	}
}
