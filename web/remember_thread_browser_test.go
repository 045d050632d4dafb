package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

const fridayLesson = "Never deploy on Fridays; run the smoke tests first"

var lastTrigger = regexp.MustCompile(`(?m)^- \(\w+\) \[\d+(?: in \d+)?\] @[a-z0-9_-]+: (.*)$`)

// lessonScript is an engineer that proposes a lesson when the message
// that woke it corrects it ("no: never deploy on Fridays"), says so in
// one line, and otherwise echoes.
func lessonScript(req llm.Request) (llm.Response, error) {
	v := agents.ViewOf(req)
	if v.Steps > 0 {
		if strings.Contains(v.Last, `"proposed":true`) {
			return llm.Response{Text: "Noted: please confirm the lesson."}, nil
		}
		return llm.Response{}, nil
	}
	m := lastTrigger.FindAllStringSubmatch(v.Packet, -1)
	if len(m) > 0 && strings.HasPrefix(strings.ToLower(m[len(m)-1][1]), "no: never deploy on fridays") {
		args, _ := json.Marshal(map[string]string{"text": fridayLesson, "kind": bullpen.MemoryLesson})
		return llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: bullpen.ToolMemoryWrite, Arguments: args}}}, nil
	}
	return echoScript(req)
}

// threadOf returns a thread's replies, oldest first.
func threadOf(ts *testServer, root int64) []bullpen.Message {
	var th struct{ Replies []bullpen.Message }
	ts.do("GET", fmt.Sprintf("/api/v1/messages/%d/thread", root), ts.Token, nil, &th)
	return th.Replies
}

// waitReplies waits until a thread has n replies and returns them.
func waitReplies(t *testing.T, ts *testServer, root int64, n int) []bullpen.Message {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if rs := threadOf(ts, root); len(rs) >= n {
			return rs
		}
	}
	t.Fatalf("thread %d: want %d replies, have %+v", root, n, threadOf(ts, root))
	return nil
}

// In a thread, in real Chromium at 1400×900 and 390×844: a reply has the
// Remember button too, with the thread's agent chosen for it, and saves
// an entry whose source is the reply; a correction made in a reply makes
// the agent propose a lesson to the human who made it, which waits under
// the agent's reply with Save and Edit (the wide pass edits the wording,
// the phone saves it as proposed) and counts once confirmed.
func TestRememberInThreadBrowser(t *testing.T) {
	ts, _ := newMemoryServerWith(t, store.SQLite, memory.Config{}, lessonScript)
	// Another agent, hired first: the form must not fall back on it.
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/pm", "handle": "ada"}, nil); st != 201 {
		t.Fatalf("hire ada = %d", st)
	}
	var eng view.Hired
	spec := map[string]any{"handle": "eng", "name": "Engineer", "prompt": "You are the engineer.",
		"tools": []string{bullpen.ToolPostMessage, bullpen.ToolMemoryWrite, bullpen.ToolMemorySearch, bullpen.ToolMemoryForget}}
	if st := ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"spec": spec}, &eng); st != 201 {
		t.Fatalf("hire = %d", st)
	}
	base := fmt.Sprintf("/api/v1/agents/%d/memory", eng.Agent.ID)
	entry := func(id int64) bullpen.MemoryEntry {
		var e bullpen.MemoryEntry
		ts.do("GET", fmt.Sprintf("%s/%d", base, id), ts.Token, nil, &e)
		return e
	}

	for i, size := range [][2]int64{{1400, 900}, {390, 844}} {
		var root bullpen.Message
		ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@eng please deploy the release"}, &root)
		waitReplies(t, ts, root.ID, 1)
		var correction bullpen.Message
		ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "no: never deploy on Fridays; run the smoke tests first",
			"thread_id": root.ID}, &correction)
		replies := waitReplies(t, ts, root.ID, 3)
		noted := replies[2]
		if noted.Author == nil || noted.Author.Handle != "eng" || !strings.Contains(noted.Body, "confirm the lesson") {
			t.Fatalf("the agent's answer to the correction: %+v", noted)
		}
		var lessons struct{ Items []bullpen.MemoryEntry }
		ts.do("GET", base+"?kind=lesson", ts.Token, nil, &lessons)
		var proposal bullpen.MemoryEntry
		for _, e := range lessons.Items {
			if e.ProposedTo != 0 && e.SourceID == noted.TurnID {
				proposal = e
			}
		}
		if proposal.ID == 0 || proposal.ProposedTo != 1 || proposal.SourceKind != bullpen.MemorySourceTurn {
			t.Fatalf("no lesson proposed to the admin from the turn %d: %+v", noted.TurnID, lessons.Items)
		}

		b := newSteerTab(t, ts.URL, ts.Token, size[0], size[1])
		b.run("open the thread", chromedp.Navigate(fmt.Sprintf("%s/#thread-%d", ts.URL, root.ID)))
		reply := func(id int64) string {
			return fmt.Sprintf(`document.querySelector('[data-testid="thread-replies"] .msg[data-id="%d"]')`, id)
		}
		b.arrives("the replies", `!!`+reply(correction.ID)+` && !!`+reply(noted.ID)) // retried across the navigation

		// The lesson proposed from the correction waits under the reply.
		box := reply(noted.ID) + `.querySelector('[data-testid="memory-proposal"]')`
		b.waitFor("the proposal under the agent's reply", `!!`+box+` && `+box+`.textContent.includes("smoke tests first")`)
		if mine := evalIn[int](b.tab, `document.querySelectorAll('[data-testid="memory-proposal"]').length`); mine != 1 {
			t.Errorf("%d proposals shown in the thread, want 1 (under the agent's answer)", mine)
		}
		b.run("scroll to it", chromedp.Evaluate[chromedp.Void](box+`.scrollIntoView({block: "center"})`))
		b.shot(fmt.Sprintf("thread-proposal-%dx%d", size[0], size[1]))
		want := fridayLesson
		if i == 0 {
			b.run("edit", chromedp.Evaluate[chromedp.Void](box+`.querySelector('[data-testid="proposal-edit"]').click()`))
			want = "Never deploy on Fridays; the smoke tests pass first"
			b.set("proposal-edit-text", want)
			b.click("proposal-edit-save")
		} else {
			b.run("save", chromedp.Evaluate[chromedp.Void](box+`.querySelector('[data-testid="proposal-save"]').click()`))
		}
		b.shows("proposal-saved", "Saved as a lesson of @eng: "+want)
		if got := entry(proposal.ID); got.ProposedTo != 0 || got.Text != want {
			t.Errorf("after the confirmation the entry is %+v, want it confirmed as %q", got, want)
		}

		// Remember on the human's reply: the thread's agent is chosen.
		btn := reply(correction.ID) + `.querySelector('[data-testid="message-remember"]')`
		if shown := evalIn[bool](b.tab, `!!`+btn+` && getComputedStyle(`+btn+`).display !== "none"`); !shown {
			t.Fatal("a thread reply has no Remember button")
		}
		// It shows on hover, inside the pane, clear of the author's name.
		at := evalIn[rect](b.tab, `(() => { const r = `+reply(correction.ID)+`.getBoundingClientRect();
			return {Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom, Width: r.width, Height: r.height}; })()`)
		b.run("hover the reply", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved,
				X: at.Left + at.Width/2, Y: at.Top + at.Height/2})
			return err
		}))
		b.waitFor("the button shows", `getComputedStyle(`+btn+`).opacity === "1"`)
		place := evalIn[[]float64](b.tab, `(() => { const b = `+btn+`.getBoundingClientRect(), p = document.querySelector('[data-testid="thread-pane"]').getBoundingClientRect(),
			n = `+reply(correction.ID)+`.querySelector('[data-testid="message-handle"]').getBoundingClientRect();
			return [b.left, b.right, p.left, p.right, n.right]; })()`)
		if place[0] < place[2] || place[1] > place[3] || place[0] < place[4] {
			t.Errorf("the reply's Remember button at [%.0f, %.0f] is outside the pane [%.0f, %.0f] or over the handle (ends at %.0f)",
				place[0], place[1], place[2], place[3], place[4])
		}
		b.shot(fmt.Sprintf("thread-reply-hover-%dx%d", size[0], size[1]))
		b.run("remember the reply", chromedp.Evaluate[chromedp.Void](btn+`.click()`))
		b.waitFor("the form", q("remember-form")+` && `+q("remember-agent")+fmt.Sprintf(`.value === "%d"`, eng.Agent.ID))
		if got := evalIn[string](b.tab, q("remember-text")+`.value`); got != correction.Body {
			t.Errorf("the form's text = %q, want the reply's %q", got, correction.Body)
		}
		text := fmt.Sprintf("Release days are Monday to Thursday (pass %d)", i+1)
		b.set("remember-text", text)
		b.set("remember-kind", "procedure")
		b.shot(fmt.Sprintf("thread-remember-%dx%d", size[0], size[1]))
		b.click("remember-save")
		b.shows("remember-done", "Remembered for @eng as a procedure")
		var found []bullpen.MemoryEntry
		ts.do("GET", base+"?q="+strings.ReplaceAll(text, " ", "+"), ts.Token, nil, &lessons)
		for _, e := range lessons.Items {
			if e.Text == text {
				found = append(found, e)
			}
		}
		if len(found) != 1 || found[0].SourceKind != bullpen.MemorySourceMessage || found[0].SourceID != correction.ID || found[0].Kind != "procedure" {
			t.Fatalf("after Remember on the reply: %+v, want one procedure whose source is message %d", found, correction.ID)
		}

		// In the Memory tab, the entry's source opens the reply's thread.
		if i == 0 {
			b.run("close the thread", chromedp.Evaluate[chromedp.Void](q("thread-close")+`.click()`))
			b.run("open the agents tab", chromedp.Evaluate[chromedp.Void](q("panel-tab-agents")+`.click()`))
			b.waitFor("the agent", `!!`+q("agent-memory-eng"))
			b.run("open its memory", chromedp.Evaluate[chromedp.Void](q("agent-memory-eng")+`.click()`))
			src := q(fmt.Sprintf("memory-entry-%d", found[0].ID))
			b.waitFor("the entry", `!!`+src)
			if got := evalIn[string](b.tab, src+`.querySelector('[data-testid="memory-source"]').textContent`); got != fmt.Sprintf("message %d", correction.ID) {
				t.Errorf("the entry's source reads %q", got)
			}
			b.run("follow its source", chromedp.Evaluate[chromedp.Void](src+`.querySelector('[data-testid="memory-source"]').click()`))
			b.arrives("the reply's thread", fmt.Sprintf(`location.pathname === "/c/general" && location.hash === "#thread-%d" && !!%s && !%s.hidden`,
				root.ID, reply(correction.ID), q("thread-pane")))
		}
	}
}
