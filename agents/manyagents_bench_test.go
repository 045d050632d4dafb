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
// one of 200: 100 turns in each, alternating between the two offices so
// that both see the same load, spread over ten agents who share #team
// with the admin (every agent is in #general too). It reports each
// size's p50 and the ratio 200/10 (issue 29: within 1.5×; a prompt's
// roster grows with the turn's channel, not the office). Run it with
// -benchtime 1x: one iteration builds and measures both offices.
//
//	go test ./agents -run '^$' -bench ManyAgents -benchtime 1x
func BenchmarkManyAgents(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			small, large := newManyAgents(b, 10), newManyAgents(b, 200)
			var start10, wake10, start200, wake200 []time.Duration
			for i := range 100 {
				s, w := small.turn(i)
				start10, wake10 = append(start10, s), append(wake10, w)
				s, w = large.turn(i)
				start200, wake200 = append(start200, s), append(wake200, w)
			}
			b.StartTimer()
			b.ReportMetric(p50ms(start10), "turn_p50_10_ms")
			b.ReportMetric(p50ms(start200), "turn_p50_200_ms")
			b.ReportMetric(p50ms(start200)/p50ms(start10), "turn_ratio_x")
			b.ReportMetric(p50ms(wake10), "wake_p50_10_ms")
			b.ReportMetric(p50ms(wake200), "wake_p50_200_ms")
			b.ReportMetric(p50ms(wake200)/p50ms(wake10), "wake_ratio_x")
		}
	})
}

// manyAgents is an office of n agents, ten of them in #team.
type manyAgents struct {
	b    *testing.B
	h    *harness
	n    int
	team bullpen.Channel
	reqs chan sentAt
	feed interface {
		Next(context.Context, int) ([]bullpen.Event, error)
	}
}

// sentAt is when a turn's first model request left, and when the turn
// started.
type sentAt struct{ at, started time.Time }

func newManyAgents(b *testing.B, n int) *manyAgents {
	b.Helper()
	o := &manyAgents{b: b, n: n, reqs: make(chan sentAt, 1)}
	o.h = newHarness(b, store.SQLite, map[string]llm.Provider{"scripted": instant{}}, nil)
	o.h.svc.onFirstRequest = func(started time.Time) { o.reqs <- sentAt{time.Now(), started} }
	role, err := o.h.svc.Catalog().Role("starter/engineer")
	if err != nil {
		b.Fatal(err)
	}
	role.Budgets.TurnsPerHour = 10000 // the benchmark is not about the rate limit
	ctx := context.Background()
	if o.team, err = o.h.off.CreateChannel(ctx, o.h.admin, bullpen.ChannelInput{Name: "team"}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		r := role
		r.Handle, r.Name = fmt.Sprintf("a%03d", i), fmt.Sprintf("Agent %d", i)
		hired, err := o.h.svc.Hire(ctx, o.h.admin, bullpen.HireInput{Spec: &r})
		if err != nil {
			b.Fatalf("hire %s: %v", r.Handle, err)
		}
		if i < 10 {
			if _, err := o.h.off.JoinChannel(ctx, hired.Agent.Member, o.team.ID); err != nil {
				b.Fatalf("%s joins #team: %v", r.Handle, err)
			}
		}
	}
	o.h.start()
	feed := o.h.off.Subscribe(o.h.off.Hub().Last())
	b.Cleanup(feed.Close)
	o.feed = feed
	return o
}

// turn mentions one of the ten agents in #team and returns the turn's
// start → first model request and the post → that request.
func (o *manyAgents) turn(i int) (startToRequest, postToRequest time.Duration) {
	t0 := time.Now()
	o.h.post(o.h.admin, o.team.ID, 0, fmt.Sprintf("@a%03d ping %d", i%10, i))
	select {
	case s := <-o.reqs:
		startToRequest, postToRequest = s.at.Sub(s.started), s.at.Sub(t0)
	case <-time.After(10 * time.Second):
		o.b.Fatalf("%d agents: no model request 10 s after message %d", o.n, i)
	}
	waitEvent(o.b, o.feed, bullpen.EventTurnFinished)
	return startToRequest, postToRequest
}

// p50ms is the median of ds in milliseconds.
func p50ms(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[(len(s)-1)/2].Microseconds()) / 1000
}
