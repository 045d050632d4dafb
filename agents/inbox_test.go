package agents

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// Kill the worker mid-turn (the model call never returns); after a
// restart on the same database the pending wakes complete, none twice.
func TestRestartMidTurn(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			started := make(chan struct{}, 10)
			h := newHarness(t, d, map[string]llm.Provider{"scripted": hanging{started}}, nil)
			lead := h.hire("starter/lead")
			h.start()
			h.post(h.admin, h.general.ID, 0, "@lead first")
			<-started
			h.post(h.admin, h.general.ID, 0, "@lead second") // pending behind the running turn
			waitFor(t, func() bool { p, _, _ := h.db.InboxCounts(context.Background()); return p == 1 })
			h.close() // the kill: the turn stays "running" in the database

			answers := 0
			var mu sync.Mutex
			prov := scripted.New(func(req llm.Request) (llm.Response, error) {
				v := ViewOf(req)
				if v.Steps > 0 {
					return llm.Response{}, nil
				}
				mu.Lock()
				answers++
				mu.Unlock()
				return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolPostMessage, map[string]any{"body": "on it"})}}, nil
			})
			h.open(map[string]llm.Provider{"scripted": prov}, nil)
			h.start()
			h.waitIdle()
			turns, err := h.db.Turns(context.Background(), lead.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			states := map[string]int{}
			for _, tr := range turns {
				states[tr.State]++
			}
			if states[bullpen.TurnAbandoned] != 1 || states[bullpen.TurnDone] < 1 || states[bullpen.TurnRunning] != 0 {
				t.Errorf("turn states = %v, want 1 abandoned, done ones, none running", states)
			}
			// Both wakes done, each exactly once: one claimed by exactly one done turn.
			var done int
			for _, tr := range turns {
				if tr.State != bullpen.TurnDone {
					continue
				}
				ws, _ := h.db.Wakes(context.Background(), tr.ID)
				done += len(ws)
			}
			if done != 2 {
				t.Errorf("done turns hold %d wakes, want 2 (each wake once)", done)
			}
			replies := 0
			for _, m := range h.messages(0) {
				if strings.HasPrefix(m, "@lead: on it") {
					replies++
				}
			}
			if replies != answers || answers < 1 || answers > 2 {
				t.Errorf("lead replied %d times in %d answering turns, want one reply per turn and 1-2 turns", replies, answers)
			}
		})
	}
}

// hanging is a model that never answers: it reports each call and waits
// until the call is cancelled.
type hanging struct{ started chan struct{} }

func (hanging) Name() string { return "scripted" }

func (p hanging) Complete(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	p.started <- struct{}{}
	<-ctx.Done()
	return llm.Response{}, ctx.Err()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 20s")
}

// Two agents that always answer each other are stopped by the hop budget,
// with a visible event and a system message; a human message resets it.
func TestHopBudgetStopsPingPong(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			pingpong := scripted.New(func(req llm.Request) (llm.Response, error) {
				v := ViewOf(req)
				if v.Steps > 0 {
					return llm.Response{}, nil
				}
				other := "engineer"
				if strings.Contains(v.System, "You are @engineer ") {
					other = "lead"
				}
				return llm.Response{ToolCalls: []llm.ToolCall{call(bullpen.ToolPostMessage, map[string]any{"body": "@" + other + " your turn"})}}, nil
			})
			h := newHarness(t, d, map[string]llm.Provider{"scripted": pingpong}, func(c *Config) { c.HopBudget = 4 })
			h.hire("starter/lead")
			h.hire("starter/engineer")
			h.start()
			since := h.off.Hub().Last()
			root := h.post(h.admin, h.general.ID, 0, "@lead start a ping-pong with @engineer")
			h.waitIdle()
			msgs := h.messages(since)
			agentMsgs, notices := 0, 0
			for _, m := range msgs {
				switch {
				case strings.Contains(m, "hop budget"):
					notices++
				case strings.HasPrefix(m, "@lead:") || strings.HasPrefix(m, "@engineer:"):
					agentMsgs++
				}
			}
			// The human's message wakes both; each chain (top level is one
			// thread) stops after 4 agent messages in a row.
			if notices != 1 || agentMsgs > 5 {
				t.Errorf("messages = %q\nwant 1 hop-budget notice and at most 5 agent messages", msgs)
			}
			var limits []bullpen.LimitEvent
			for _, ev := range h.events(since) {
				if ev.Type == bullpen.EventLimitReached {
					var p bullpen.LimitEvent
					json.Unmarshal(ev.Payload, &p)
					limits = append(limits, p)
				}
			}
			if len(limits) != 1 || limits[0].Limit != bullpen.LimitHops {
				t.Errorf("limit events = %+v, want one hop_budget", limits)
			}
			// A human reply in the thread resets the budget.
			before := len(h.messages(since))
			h.post(h.admin, h.general.ID, root.ID, "@lead once more")
			h.waitIdle()
			if after := len(h.messages(since)); after <= before+1 {
				t.Errorf("after a human message the agents did not resume (%d → %d messages)", before, after)
			}
		})
	}
}

// A mentioned agent with no provider answers with a visible notice; a
// failing provider's error shows in the channel.
func TestNoProviderAndProviderFailure(t *testing.T) {
	h := newHarness(t, store.SQLite, nil, nil)
	h.hire("starter/lead")
	h.start()
	if h.svc.ProviderNotice() == "" {
		t.Errorf("ProviderNotice() is empty with no provider")
	}
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@lead hello?")
	h.waitIdle()
	if msgs := h.messages(since); len(msgs) != 2 || !strings.Contains(msgs[1], `the office's default model provider "scripted" is not set up`) ||
		!strings.Contains(msgs[1], "Settings → Providers") || strings.Contains(msgs[1], "role provider") {
		t.Errorf("messages = %q, want the question and a plain no-provider notice naming the provider", msgs)
	}

	failing := scripted.New(func(llm.Request) (llm.Response, error) {
		return llm.Response{}, bullpen.Errorf(bullpen.EUNAVAILABLE, "openai: HTTP 503 after 3 retries")
	})
	h2 := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": failing}, nil)
	h2.hire("starter/lead")
	h2.start()
	since = h2.off.Hub().Last()
	h2.post(h2.admin, h2.general.ID, 0, "@lead hello?")
	h2.waitIdle()
	if msgs := h2.messages(since); len(msgs) != 2 || !strings.Contains(msgs[1], "could not answer: openai: HTTP 503") {
		t.Errorf("messages = %q, want the question and the provider's error", msgs)
	}
	var failed bool
	for _, ev := range h2.events(since) {
		failed = failed || ev.Type == bullpen.EventTurnFailed
	}
	if !failed {
		t.Errorf("no %s event", bullpen.EventTurnFailed)
	}
}
