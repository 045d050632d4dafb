package agents

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// promptTokens counts a request's prompt with the offline tokenizer: the
// stable prefix (system prompt and tool schemas) and the rest.
func promptTokens(req llm.Request) (prefix, total int) {
	prefix = llm.Count(req.System)
	for _, t := range req.Tools {
		prefix += llm.Count(t.Name) + llm.Count(t.Description) + llm.Count(string(t.Parameters))
	}
	total = prefix
	for _, m := range req.Messages {
		total += llm.Count(m.Content)
		for _, c := range m.ToolCalls {
			total += llm.Count(c.Name) + llm.Count(string(c.Arguments))
		}
	}
	return prefix, total
}

// turnPrompt is the first request of one agent turn.
type turnPrompt struct {
	handle        string
	prefix, total int
}

// runRounds runs the scenario rounds times in #general (each human ask a
// new top-level message, so history accumulates) and returns the first
// prompt of every turn, per agent, in order.
func runRounds(tb testing.TB, prov llm.Provider, kind string, rounds int) (map[string][]turnPrompt, *harness) {
	h := newHarness(tb, store.SQLite, map[string]llm.Provider{kind: prov}, func(c *Config) { c.DefaultProvider = kind })
	var mu sync.Mutex
	out := map[string][]turnPrompt{}
	h.svc.onRequest = func(agentID int64, req llm.Request) {
		if len(req.Messages) != 1 {
			return // a later step of the same turn
		}
		p, t := promptTokens(req)
		handle := submatch(meRE, req.System)
		mu.Lock()
		out[handle] = append(out[handle], turnPrompt{handle, p, t})
		mu.Unlock()
	}
	h.hire("starter/lead")
	h.hire("starter/engineer")
	h.start()
	for r := 1; r <= rounds; r++ {
		h.post(h.admin, h.general.ID, 0, fmt.Sprintf("@lead round %d: please check that the build machine still works and tell me what you find", r))
		h.waitIdle()
	}
	return out, h
}

// BenchmarkTokensPerTurn runs the scenario for 10 rounds and
// reports prompt tokens per turn (offline cl100k tokenizer): flat (turn 10
// ≤ 1.1 × turn 2), at most 6,000 with the full tool set (the engineer has
// all 11 tools), and on the Anthropic path the stable prefix share.
//
//	go test ./agents -run '^$' -bench TokensPerTurn -benchtime 1x -v
func BenchmarkTokensPerTurn(b *testing.B) {
	for _, kind := range []string{"scripted", "anthropic"} {
		b.Run(kind, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var prov llm.Provider = scripted.New(DemoScript)
				if kind == "anthropic" {
					f := llmtest.NewFakeAnthropic(demoHandler)
					defer f.Close()
					prov = anthropic.New(anthropic.Config{BaseURL: f.BaseURL(), APIKey: "k", Model: "claude-test"})
				}
				turns, h := runRounds(b, prov, kind, 10)
				reportTokens(b, turns, h)
			}
		})
	}
}

func reportTokens(b *testing.B, turns map[string][]turnPrompt, h *harness) {
	for _, handle := range []string{"lead", "engineer"} {
		ts := turns[handle]
		var line []string
		maxTotal, minShare := 0, 1.0
		for _, t := range ts {
			line = append(line, fmt.Sprint(t.total))
			maxTotal = max(maxTotal, t.total)
			minShare = min(minShare, float64(t.prefix)/float64(t.total))
		}
		b.Logf("@%s prompt tokens per turn: %s (prefix %d)", handle, strings.Join(line, " "), ts[0].prefix)
		if handle == "engineer" && len(ts) >= 10 {
			ratio := float64(ts[9].total) / float64(ts[1].total)
			b.ReportMetric(float64(ts[1].total), "turn2_tokens")
			b.ReportMetric(float64(ts[9].total), "turn10_tokens")
			b.ReportMetric(ratio, "turn10/turn2")
			b.ReportMetric(float64(maxTotal), "max_prompt_tokens")
			b.ReportMetric(100*minShare, "min_prefix_%")
			if ratio > 1.1 || maxTotal > 6000 || minShare < 0.7 {
				b.Errorf("engineer: turn10/turn2 = %.3f (want ≤ 1.1), max %d tokens (want ≤ 6000), prefix share %.0f%% (want ≥ 70%%)", ratio, maxTotal, 100*minShare)
			}
		}
	}
	eng, _ := h.db.MemberByHandle(context.Background(), "engineer")
	tt, _ := h.db.Turns(context.Background(), eng.ID, 100)
	var in, cached int
	for _, t := range tt {
		in += t.InputTokens
		cached += t.CachedInputTokens
	}
	if in > 0 {
		b.ReportMetric(100*float64(cached)/float64(in), "cached_input_%")
	}
}

// TestTokensFlat is the token benchmark's assertion as a test.
func TestTokensFlat(t *testing.T) {
	turns, _ := runRounds(t, scripted.New(DemoScript), "scripted", 10)
	for _, handle := range []string{"lead", "engineer"} {
		ts := turns[handle]
		if len(ts) < 10 {
			t.Fatalf("@%s had %d turns, want ≥ 10", handle, len(ts))
		}
		if r := float64(ts[9].total) / float64(ts[1].total); r > 1.1 {
			t.Errorf("@%s: turn 10 has %d prompt tokens, %.2f × turn 2 (%d); want ≤ 1.1", handle, ts[9].total, r, ts[1].total)
		}
		for i, tp := range ts {
			if tp.total > 6000 {
				t.Errorf("@%s turn %d: %d prompt tokens, want ≤ 6000", handle, i+1, tp.total)
			}
		}
	}
}

// instant answers at once, without tools.
type instant struct{}

func (instant) Name() string { return "scripted" }

func (p instant) Complete(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error) {
	return llm.Response{Text: ""}, nil
}

// BenchmarkWakeLatency measures the time from a human's message being
// stored (office.Post called) to the model request being sent, through
// the router, the durable inbox, the worker and the prompt builder.
//
//	go test ./agents -run '^$' -bench WakeLatency -benchtime 200x
func BenchmarkWakeLatency(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) { benchWakeLatency(b, d) })
	}
}

func benchWakeLatency(b *testing.B, dialect string) {
	sent := make(chan time.Time, 1)
	h := newHarness(b, dialect, map[string]llm.Provider{"scripted": instant{}}, nil)
	h.svc.onRequest = func(int64, llm.Request) { sent <- time.Now() }
	role, _ := h.svc.Catalog().Role("starter/lead")
	role.Budgets.TurnsPerHour = 10000 // the benchmark is not about the rate limit
	if _, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role}); err != nil {
		b.Fatal(err)
	}
	h.start()
	feed := h.off.Subscribe(h.off.Hub().Last())
	defer feed.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		h.post(h.admin, h.general.ID, 0, fmt.Sprintf("@lead ping %d", i))
		select {
		case at := <-sent:
			lat = append(lat, at.Sub(t0))
		case <-time.After(10 * time.Second):
			b.Fatalf("no model request 10 s after message %d", i)
		}
		waitEvent(b, feed, bullpen.EventTurnFinished)
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), "p50_ms")
	b.ReportMetric(pct(0.9), "p90_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	// The target (docs/benchmarks.md) is SQLite's, the embedded default. PostgreSQL is
	// reported, not judged: its path is the same, each statement a network
	// round trip (about 9 ms p50 on the tests' fsync=off cluster, 11–15 ms
	// durable, before and after issue 15's changes alike).
	if dialect == "sqlite" && b.N >= 20 && pct(0.5) > 10 {
		b.Errorf("wake latency p50 = %.2f ms, want ≤ 10 ms", pct(0.5))
	}
}

func waitEvent(tb testing.TB, f interface {
	Next(context.Context, int) ([]bullpen.Event, error)
}, typ string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		evs, err := f.Next(ctx, 100)
		if err != nil {
			tb.Fatalf("waiting for %s: %v", typ, err)
		}
		for _, ev := range evs {
			if ev.Type == typ {
				return
			}
		}
	}
}
