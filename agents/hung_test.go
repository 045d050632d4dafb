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
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/store"
)

// Four agents wait on a provider that accepts and never answers, more
// than the office-wide limit of 4 can hold; a fifth agent on a working
// provider still answers at once. The waiting ones show it in their live
// status and, after the notice time, once each in the channel.
func TestHungProviderDoesNotStallOthers(t *testing.T) {
	silent := llmtest.NewSilent()
	defer silent.Close()
	works := llmtest.NewFakeOpenAI(llmtest.Text("pong"))
	defer works.Close()
	providers := map[string]llm.Provider{
		"openai":   openai.New(openai.Config{BaseURL: silent.BaseURL(), Model: "hung", MaxRetries: -1}),
		"scripted": openai.New(openai.Config{BaseURL: works.BaseURL(), Model: "ok", Name: "working"}),
	}
	h := newHarness(t, store.SQLite, providers, func(c *Config) {
		c.DefaultProvider = "openai"
		c.Timeouts = bullpen.Timeouts{FirstByte: bullpen.Duration(time.Minute), Notice: bullpen.Duration(300 * time.Millisecond)}
	})
	var hung []bullpen.Member
	for _, handle := range []string{"h1", "h2", "h3", "h4"} {
		hung = append(hung, h.hireAs("starter/lead", handle, ""))
	}
	fast := h.hireAs("starter/lead", "fast", "scripted")
	feed := h.off.Subscribe(h.off.Hub().Last())
	statuses := collectStatuses(t, feed)
	h.start()
	h.post(h.admin, h.general.ID, 0, "@h1 @h2 @h3 @h4 please answer")
	waitFor(t, func() bool { return silent.Accepted() >= 4 })

	asked := h.post(h.admin, h.general.ID, 0, "@fast ping")
	start := time.Now()
	waitFor(t, func() bool { return len(h.repliesBy(fast.ID, asked.ID)) > 0 })
	took := time.Since(start)
	t.Logf("the agent on the working provider answered %s after its wake, with 4 turns hung", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("fast answered after %s, want within a couple of seconds (it was > 25 s when hung calls held the limit)", took)
	}

	for _, m := range hung {
		if st := h.svc.Status(m.ID); st.State != bullpen.StatusWaiting || !strings.HasPrefix(st.Detail, "waiting for the model, ") {
			t.Errorf("Status(@%s) = %+v, want waiting for the model", m.Handle, st)
		}
	}
	waitFor(t, func() bool { return statuses.waitedAtLeast(hung, 1) })
	waitFor(t, func() bool { return h.countNotices("is still waiting for the model") >= 4 })
	time.Sleep(1200 * time.Millisecond) // a repeated notice would show by now
	if n := h.countNotices("is still waiting for the model"); n != 4 {
		t.Errorf("%d waiting notices, want exactly one per hung call (4)", n)
	}
}

// hireAs hires a role under a handle, on the given provider kind.
func (h *harness) hireAs(role, handle, provider string) bullpen.Member {
	h.tb.Helper()
	r, err := h.svc.Catalog().Role(role)
	if err != nil {
		h.tb.Fatal(err)
	}
	r.Handle, r.Name, r.Provider = handle, "bullpen.AgentView "+handle, provider
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &r})
	if err != nil {
		h.tb.Fatalf("Hire(%s): %v", handle, err)
	}
	return hired.Agent.Member
}

// repliesBy returns agent's replies in the thread under root.
func (h *harness) repliesBy(agent, root int64) []bullpen.Message {
	ms, err := h.db.RecentMessages(context.Background(), h.general.ID, root, 0, 100)
	if err != nil {
		h.tb.Fatal(err)
	}
	var out []bullpen.Message
	for _, m := range ms {
		if m.AuthorID == agent && m.Source == bullpen.SourceAgent {
			out = append(out, m)
		}
	}
	return out
}

func (h *harness) countNotices(text string) int {
	n := 0
	for _, m := range h.messages(0) {
		if strings.Contains(m, text) {
			n++
		}
	}
	return n
}

// statusLog keeps the agent.status events a feed delivered.
type statusLog struct {
	mu     sync.Mutex
	waited map[int64]int64 // agent → most seconds waited seen
}

func collectStatuses(t *testing.T, feed interface {
	Next(context.Context, int) ([]bullpen.Event, error)
}) *statusLog {
	l := &statusLog{waited: map[int64]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			evs, err := feed.Next(ctx, 100)
			if err != nil {
				return
			}
			for _, ev := range evs {
				var p bullpen.AgentStatusEvent
				if ev.Type != bullpen.EventAgentStatus || json.Unmarshal(ev.Payload, &p) != nil || p.Status.State != bullpen.StatusWaiting {
					continue
				}
				l.mu.Lock()
				l.waited[p.AgentID] = max(l.waited[p.AgentID], p.Status.WaitedS)
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// waitedAtLeast reports whether every agent's live status has counted secs.
func (l *statusLog) waitedAtLeast(ms []bullpen.Member, secs int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range ms {
		if l.waited[m.ID] < secs {
			return false
		}
	}
	return true
}
