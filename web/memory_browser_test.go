package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/chromedp/chromedp"
)

// The Memory tab of an agent's card lists its entries with their source
// and recall counts, pins one (the server keeps it) and forgets one in
// two clicks; a human teaches from it. The inspector of a turn that
// recalled an entry lists it with its score. Screenshots at 1400×900 and
// 390×844 go to $BULLPEN_SCREENSHOTS when set.
func TestMemoryTabBrowser(t *testing.T) {
	ts := newMemoryServer(t, store.SQLite)
	var eng view.Hired
	ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng)
	base := fmt.Sprintf("/api/v1/agents/%d/memory", eng.Agent.ID)
	var lesson, stale written
	ts.do("POST", base, ts.Token, map[string]any{"text": "Never deploy on Fridays; run the smoke tests first", "kind": "lesson"}, &lesson)
	ts.do("POST", base, ts.Token, map[string]any{"text": "The build machine is build-1", "kind": "fact"}, &stale)
	ts.do("POST", base, ts.Token, map[string]any{"text": "Answer briefly, in English", "kind": "preference", "pinned": true}, nil)

	// A turn that recalls the lesson, for the inspector.
	ts.do("POST", "/api/v1/channels/1/messages", ts.Token, map[string]any{"body": "@eng can we deploy the release today?"}, nil)
	var turns struct{ Items []bullpen.Turn }
	waitUntil(t, func() bool {
		ts.do("GET", fmt.Sprintf("/api/v1/agents/%d/turns", eng.Agent.ID), ts.Token, nil, &turns)
		return len(turns.Items) == 1 && turns.Items[0].State == "done"
	})

	for _, size := range [][2]int64{{1400, 900}, {390, 844}} {
		b := newTab(t, ts.URL, ts.Token, size[0], size[1])
		entry := func(id int64) string {
			return fmt.Sprintf(`document.querySelector('[data-testid="memory-entry-%d"]')`, id)
		}
		tabID := "panel-tab-agents"
		if size[0] < 600 {
			tabID = "phone-tab-agents" // a phone opens panels from the bottom bar
		}
		b.mouseClick("open the agents tab", sel(tabID))
		b.run("open the agents tab", chromedp.WaitVisible(sel("agent-eng")))
		b.run("open its memory", chromedp.Evaluate[chromedp.Void](q("agent-memory-eng")+`.click()`))
		b.waitFor("the entries", "!!"+entry(lesson.ID)+` && `+entry(lesson.ID)+`.textContent.includes("smoke tests") && `+
			entry(lesson.ID)+`.textContent.includes("1 recall")`)
		if size[0] == 1400 { // the phone pass sees what this one did
			b.waitFor("the other entry", "!!"+entry(stale.ID))
			b.run("pin", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`%s.click()`, q(fmt.Sprintf("memory-pin-%d", lesson.ID)))))
			b.waitFor("pinned", "!!"+entry(lesson.ID)+` && `+entry(lesson.ID)+`.textContent.includes("pinned")`)
			var e bullpen.MemoryEntry
			if ts.do("GET", fmt.Sprintf("%s/%d", base, lesson.ID), ts.Token, nil, &e); !e.Pinned {
				t.Errorf("after Pin the server has pinned = %v", e.Pinned)
			}
			forget := q(fmt.Sprintf("memory-forget-%d", stale.ID))
			b.run("forget, first click", chromedp.Evaluate[chromedp.Void](forget+`.click()`))
			if st := ts.do("GET", fmt.Sprintf("%s/%d", base, stale.ID), ts.Token, nil, nil); st != 200 {
				t.Errorf("one click on Forget forgot the entry: %d", st)
			}
			b.run("forget, second click", chromedp.Evaluate[chromedp.Void](forget+`.click()`))
			b.waitFor("forgotten", `!`+entry(stale.ID))
			if st := ts.do("GET", fmt.Sprintf("%s/%d", base, stale.ID), ts.Token, nil, nil); st != 404 {
				t.Errorf("after Forget the entry answers %d, want 404", st)
			}
			b.run("teach", chromedp.SendKeys(sel("memory-teach-text-eng"), "Customers in Japan are invoiced in yen"),
				chromedp.Evaluate[chromedp.Void](q("memory-teach-eng")+`.requestSubmit()`))
			b.waitFor("taught", q("memory-list-eng")+`.textContent.includes("invoiced in yen")`)
		}
		b.shot(fmt.Sprintf("memory-tab-%dx%d", size[0], size[1]))

		b.run("inspector", chromedp.Navigate(fmt.Sprintf("%s/turns/%d", ts.URL, turns.Items[0].ID)), chromedp.WaitVisible(sel("inspector-memory")))
		rows := evalIn[string](b, `Array.from(document.querySelectorAll('[data-testid="inspector-memory-entry"]')).map(r => r.textContent).join("|")`)
		if !strings.Contains(rows, "smoke tests") || !strings.Contains(rows, "pinned") {
			t.Errorf("inspector's recalled entries = %q, want the lesson (match) and the pinned preference", rows)
		}
		b.run("scroll to the recalled entries", chromedp.Evaluate[chromedp.Void](q("inspector-memory")+`.scrollIntoView()`))
		b.shot(fmt.Sprintf("memory-inspector-%dx%d", size[0], size[1]))
	}
}
