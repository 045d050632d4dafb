package web_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/view"
	"github.com/chromedp/chromedp"
)

// foldModels gives the memory's consolidation one model, whatever the
// agent's provider.
type foldModels struct{ p llm.Provider }

func (m foldModels) Provider(context.Context, string) (llm.Provider, string, error) {
	return m.p, "scripted", nil
}

// The History section of an agent's Memory tab, in real Chromium at
// 1400×900 and 390×844: a consolidation over the cap shows as one item
// with every folded entry (before) and the model's new entries (after),
// by the agent; expiries and merges show their text before and after; a
// forget made in the tab appears at once with only who and when; the
// text of an entry learned in a DM never shows. Screenshots at 1024×768
// too.
func TestMemoryHistoryBrowser(t *testing.T) {
	var garbled atomic.Bool // the model's answer holds no entries: the excess expires
	model := scripted.New(func(llm.Request) (llm.Response, error) {
		if garbled.Load() {
			return llm.Response{Text: "I would rather not."}, nil
		}
		return llm.Response{Text: `[{"text": "Deploys: never on Fridays, smoke tests first, then tag the release", "kind": "lesson"},
			{"text": "Team habits: standup at 9:30, reviews within a day", "kind": "fact"}]`}, nil
	})
	ts, mem := newMemoryServerWith(t, store.SQLite, memory.Config{Cap: 5, Models: foldModels{model}}, echoScript)
	ctx := context.Background()
	var eng view.Hired
	ts.do("POST", "/api/v1/agents", ts.Token, map[string]any{"role": "starter/engineer", "handle": "eng"}, &eng)
	base := fmt.Sprintf("/api/v1/agents/%d/memory", eng.Agent.ID)
	write := func(text string, more map[string]any) written {
		t.Helper()
		body := map[string]any{"text": text}
		for k, v := range more {
			body[k] = v
		}
		var w written
		if st := ts.do("POST", base, ts.Token, body, &w); st != 201 && st != 200 {
			t.Fatalf("write %q = %d", text, st)
		}
		return w
	}

	// Over the cap of 5, six unpinned entries are folded into two.
	write("Answer briefly, in English", map[string]any{"pinned": true})
	folded := []string{"Never deploy on Fridays", "Run the smoke tests before a deploy", "Tag the release after deploying",
		"Standup is at 9:30", "Reviews are answered within a day", "The build machine is build-1"}
	for _, text := range folded {
		write(text, nil)
	}
	if res, err := mem.Consolidate(ctx, eng.Agent.ID); err != nil || res.Folded != 6 || res.Written != 2 {
		t.Fatalf("Consolidate = %+v, %v; want 6 folded into 2", res, err)
	}
	var list struct{ Items []bullpen.MemoryEntry }
	ts.do("GET", base+"?q=Deploys", ts.Token, nil, &list)
	if len(list.Items) != 1 {
		t.Fatalf("the consolidated lesson: %+v", list.Items)
	}
	ts.do("PATCH", fmt.Sprintf("%s/%d", base, list.Items[0].ID), ts.Token, map[string]any{"pinned": true}, nil)
	// Over it again with a model that answers nothing usable: the excess expires.
	garbled.Store(true)
	for _, text := range []string{"Backups run nightly at 02:00", "The office closes at 18:00", "Customers in Japan are invoiced in yen",
		"The VPN is vpn.example.internal"} {
		write(text, nil)
	}
	if res, err := mem.Consolidate(ctx, eng.Agent.ID); err != nil || res.Expired != 2 {
		t.Fatalf("Consolidate with a useless answer = %+v, %v; want 2 expired", res, err)
	}
	// A near-duplicate is merged; so is one learned in a DM, whose text
	// stays out of the history.
	if w := write("The VPN is at vpn.example.internal", nil); !w.Merged {
		t.Fatalf("the near-duplicate was not merged: %+v", w)
	}
	var dm bullpen.Channel
	ts.do("POST", "/api/v1/dms", ts.Token, map[string]any{"member_id": eng.Agent.ID}, &dm)
	write("My badge number is 4471", map[string]any{"channel_id": dm.ID})
	if w := write("My badge number is 4471.", map[string]any{"channel_id": dm.ID}); !w.Merged || w.ChannelID != dm.ID {
		t.Fatalf("the DM's near-duplicate: %+v", w)
	}
	var hist struct{ Items []bullpen.MemoryHistory }
	ts.do("GET", base+"/history", ts.Token, nil, &hist)
	var expired []bullpen.MemoryHistory
	for _, h := range hist.Items {
		if h.Action == bullpen.MemoryExpired {
			expired = append(expired, h)
		}
	}
	ts.do("GET", base+"?q=office", ts.Token, nil, &list)
	if len(expired) != 2 || len(list.Items) != 1 {
		t.Fatalf("history %+v; the office entry %+v", hist.Items, list.Items)
	}
	office := list.Items[0]

	items := `Array.from(document.querySelectorAll('[data-testid="memory-history-item"]'))`
	itemsOf := func(b *tab, action string) []string {
		return evalIn[[]string](b, items+fmt.Sprintf(`.filter(i => i.dataset.action === %q).map(i => i.textContent)`, action))
	}
	for _, size := range [][2]int64{{1400, 900}, {390, 844}} {
		b := newTab(t, ts.URL, ts.Token, size[0], size[1])
		tabID := "panel-tab-agents"
		if size[0] < 600 {
			tabID = "phone-tab-agents"
		}
		b.mouseClick("open the agents tab", sel(tabID))
		b.run("open the agents tab", chromedp.WaitVisible(sel("agent-eng")))
		b.run("open its memory", chromedp.Evaluate[chromedp.Void](q("agent-memory-eng")+`.click()`))
		b.waitFor("the entries", q("memory-list-eng")+`.textContent.includes("VPN is at")`)
		if open := evalIn[bool](b, q("memory-history-eng")+`.open`); open {
			t.Error("the history is open before anyone asked for it")
		}
		b.run("open the history", chromedp.Evaluate[chromedp.Void](q("memory-history-open-eng")+`.click()`))
		b.waitFor("the history", items+`.length >= 5`)

		cons := itemsOf(b, "consolidated")
		if len(cons) != 1 {
			t.Fatalf("consolidation items: %q, want the six rows as one", cons)
		}
		for _, want := range append(folded, "folded 6 entries into 2", "by @eng", "Deploys: never on Fridays", "Team habits: standup") {
			if !strings.Contains(cons[0], want) {
				t.Errorf("the consolidation %q lacks %q", cons[0], want)
			}
		}
		exp := itemsOf(b, "expired")
		if len(exp) != 2 {
			t.Errorf("expired items: %q, want 2", exp)
		}
		for i, h := range expired {
			if i < len(exp) && (!strings.Contains(exp[i], h.Before) || !strings.Contains(exp[i], fmt.Sprintf("entry #%d expired: over the cap of 5", h.EntryID))) {
				t.Errorf("expired item %q, want its text %q and why", exp[i], h.Before)
			}
		}
		merged := strings.Join(itemsOf(b, "merged"), "|")
		if !strings.Contains(merged, "beforeThe VPN is vpn.example.internal") || !strings.Contains(merged, "afterThe VPN is at vpn.example.internal") ||
			!strings.Contains(merged, "by @admin") || !strings.Contains(merged, "text, unchanged(learned in a DM: not kept in the history)") {
			t.Errorf("merged items = %q", merged)
		}
		if all := evalIn[string](b, q("memory-history-list-eng")+`.textContent`); strings.Contains(all, "4471") {
			t.Errorf("the text of an entry learned in a DM shows in the history: %q", all)
		}

		if size[0] == 1400 { // the phone pass sees what this one did
			forget := q(fmt.Sprintf("memory-forget-%d", office.ID))
			b.run("forget, two clicks", chromedp.Evaluate[chromedp.Void](forget+`.click()`), chromedp.Evaluate[chromedp.Void](forget+`.click()`))
			b.waitFor("the forget listed first", items+`[0].dataset.action === "forgot"`)
		}
		forgot := itemsOf(b, "forgot")
		if len(forgot) != 1 || !strings.Contains(forgot[0], fmt.Sprintf("entry #%d forgotten", office.ID)) ||
			!strings.Contains(forgot[0], "by @admin") || strings.Contains(forgot[0], "office closes") {
			t.Errorf("forgot items = %q, want who and when only", forgot)
		}
		b.run("scroll to the consolidation", chromedp.Evaluate[chromedp.Void](items+`.find(i => i.dataset.action === "consolidated").scrollIntoView({block: "center"})`))
		b.shot(fmt.Sprintf("memory-history-%dx%d", size[0], size[1]))
		if size[0] == 1400 {
			b.run("1024×768", chromedp.EmulateViewport(1024, 768),
				chromedp.Evaluate[chromedp.Void](items+`[0].scrollIntoView({block: "start"})`))
			b.shot("memory-history-1024x768")
		}
	}
}
