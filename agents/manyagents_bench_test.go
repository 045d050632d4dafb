package agents

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/store"
)

// BenchmarkManyAgents times a turn's start to its first model request,
// and a message's post to that request, in an office of 10 agents and in
// one of 200: 100 turns at each size, spread over ten agents who share
// #team with the admin (every agent is in #general too). It reports each
// size's p50 and the ratio 200/10 (issue 29: within 1.5×; a prompt's
// roster grows with the turn's channel, not the office). Run it with
// -benchtime 1x: one iteration builds and measures both offices.
//
//	go test ./agents -run '^$' -bench ManyAgents -benchtime 1x
func BenchmarkManyAgents(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		for b.Loop() {
			start10, wake10 := manyAgentTurns(b, 10, 100)
			start200, wake200 := manyAgentTurns(b, 200, 100)
			b.ReportMetric(p50ms(start10), "turn_p50_10_ms")
			b.ReportMetric(p50ms(start200), "turn_p50_200_ms")
			b.ReportMetric(p50ms(start200)/p50ms(start10), "turn_ratio_x")
			b.ReportMetric(p50ms(wake10), "wake_p50_10_ms")
			b.ReportMetric(p50ms(wake200), "wake_p50_200_ms")
			b.ReportMetric(p50ms(wake200)/p50ms(wake10), "wake_ratio_x")
		}
	})
}

// manyAgentTurns hires agents agents and runs turns turns, each woken by
// a mention of one of the first ten, one at a time. It returns each
// turn's start → first model request and post → first model request.
func manyAgentTurns(b *testing.B, agents, turns int) (startToRequest, postToRequest []time.Duration) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	type sent struct{ at, started time.Time }
	reqs := make(chan sent, 1)
	h := newHarness(b, store.SQLite, map[string]llm.Provider{"scripted": instant{}}, nil)
	h.svc.onFirstRequest = func(started time.Time) { reqs <- sent{time.Now(), started} }
	role, err := h.svc.Catalog().Role("starter/engineer")
	if err != nil {
		b.Fatal(err)
	}
	role.Budgets.TurnsPerHour = 10000 // the benchmark is not about the rate limit
	ctx := context.Background()
	team, err := h.off.CreateChannel(ctx, h.admin, bullpen.ChannelInput{Name: "team"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range agents {
		r := role
		r.Handle, r.Name = fmt.Sprintf("a%03d", i), fmt.Sprintf("Agent %d", i)
		hired, err := h.svc.Hire(ctx, h.admin, bullpen.HireInput{Spec: &r})
		if err != nil {
			b.Fatalf("hire %s: %v", r.Handle, err)
		}
		if i < 10 {
			if _, err := h.off.JoinChannel(ctx, hired.Agent.Member, team.ID); err != nil {
				b.Fatalf("%s joins #team: %v", r.Handle, err)
			}
		}
	}
	h.start()
	feed := h.off.Subscribe(h.off.Hub().Last())
	defer feed.Close()
	for i := range turns {
		t0 := time.Now()
		h.post(h.admin, team.ID, 0, fmt.Sprintf("@a%03d ping %d", i%10, i))
		select {
		case s := <-reqs:
			startToRequest = append(startToRequest, s.at.Sub(s.started))
			postToRequest = append(postToRequest, s.at.Sub(t0))
		case <-time.After(10 * time.Second):
			b.Fatalf("%d agents: no model request 10 s after message %d", agents, i)
		}
		waitEvent(b, feed, bullpen.EventTurnFinished)
	}
	return startToRequest, postToRequest
}

// p50ms is the median of ds in milliseconds.
func p50ms(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[(len(s)-1)/2].Microseconds()) / 1000
}
