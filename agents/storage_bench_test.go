package agents

import (
	"context"
	"fmt"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// BenchmarkTurnStorage measures what the turn inspector stores: it runs
// the fixed agents scenario (a human asks @lead, lead hands off to
// @engineer, engineer uses its tools, lead answers: 3 turns) and reports
// the bytes of bodies kept per turn (model-call requests and responses,
// tool-call arguments and results), then repeats the scenario until at
// least 1,000 turns are stored and reports the database size: the SQLite
// file, or on PostgreSQL the database and the record tables
// (pg_total_relation_size of agent_model_calls and agent_tool_calls).
// "scripted" stores the simulation's JSON; "anthropic" goes through the
// real SDK to a fake server, so the bodies are real wire bytes (SSE).
//
//	go test ./agents -run '^$' -bench TurnStorage -benchtime 1x
func BenchmarkTurnStorage(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		for _, kind := range []string{"scripted", "anthropic"} {
			b.Run(d+"/"+kind, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					benchTurnStorage(b, d, kind)
				}
			})
		}
	}
}

func benchTurnStorage(b *testing.B, dialect, kind string) {
	var prov llm.Provider = scripted.New(DemoScript)
	if kind == "anthropic" {
		f := llmtest.NewFakeAnthropic(demoHandler)
		defer f.Close()
		prov = anthropic.New(anthropic.Config{BaseURL: f.BaseURL(), APIKey: "k", Model: "claude-sonnet-4-5"})
	}
	h := newHarness(b, dialect, map[string]llm.Provider{kind: prov}, func(c *Config) { c.DefaultProvider = kind })
	ctx := context.Background()
	var ids []int64
	for _, id := range []string{"starter/lead", "starter/engineer"} {
		role, _ := h.svc.Catalog().Role(id)
		role.Budgets.TurnsPerHour, role.Budgets.DailyTokens = 10000, 1_000_000_000 // not about budgets
		hired, err := h.svc.Hire(ctx, h.admin, bullpen.HireInput{Spec: &role})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, hired.Agent.ID)
	}
	h.start()
	turns := func() int {
		n := 0
		for _, id := range ids {
			ts, err := h.db.Turns(ctx, id, 5000)
			if err != nil {
				b.Fatal(err)
			}
			n += len(ts)
		}
		return n
	}
	var first float64
	for round := 1; ; round++ {
		h.post(h.admin, h.general.ID, 0, fmt.Sprintf("@lead round %d: please check that our build machine works", round))
		h.waitIdle()
		n := turns()
		if round == 1 {
			st, err := h.db.StorageSize(ctx)
			if err != nil {
				b.Fatal(err)
			}
			first = float64(st.RecordBytes) / float64(n)
		}
		if n >= 1000 {
			reportStorage(b, h, n, first)
			return
		}
	}
}

func reportStorage(b *testing.B, h *harness, n int, first float64) {
	st, err := h.db.StorageSize(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(first, "record_B/turn")
	b.ReportMetric(float64(st.RecordBytes)/float64(n), "record_B/turn_avg")
	b.ReportMetric(float64(st.Database)/1e6, "db_MB")
	b.ReportMetric(float64(st.Database)/float64(n), "db_B/turn")
	if st.Records > 0 {
		b.ReportMetric(float64(st.Records)/1e6, "record_tables_MB")
	}
	b.Logf("%d turns: %.0f bytes of bodies per turn in the scenario (%.0f on average), database %.1f MB (%.0f bytes per turn), record tables %.1f MB",
		n, first, float64(st.RecordBytes)/float64(n), float64(st.Database)/1e6, float64(st.Database)/float64(n), float64(st.Records)/1e6)
}
