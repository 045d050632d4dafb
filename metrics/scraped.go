package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	descEvents     = prometheus.NewDesc("bullpen_events_total", "Events stored (rate() of it is events per second).", nil, nil)
	descWebsockets = prometheus.NewDesc("bullpen_websocket_clients", "Open websockets (event feed and interactive exec).", nil, nil)
	descWakes      = prometheus.NewDesc("bullpen_wakes", "Agent wakes waiting (pending) or taken by a worker (claimed).", []string{"state"}, nil)
	descTurns      = prometheus.NewDesc("bullpen_turns_running", "Agent turns running, office-wide.", nil, nil)
	descTokens     = prometheus.NewDesc("bullpen_model_tokens_total", "Model tokens used by agent turns, by provider and kind (input, cached_input, output).", []string{"provider", "kind"}, nil)
	descSandboxes  = prometheus.NewDesc("bullpen_sandboxes", "Sandboxes by state.", []string{"state"}, nil)
	descOutbox     = prometheus.NewDesc("bullpen_telegram_outbox", "Telegram outbox items by state (pending and uncertain are the depth).", []string{"state"}, nil)
)

// scraped is a collector that reads every state and depth from its owner
// when Prometheus scrapes, so nothing has to keep them up to date.
type scraped struct {
	src     Sources
	timeout time.Duration
	onError func(string, error)
}

// Describe implements prometheus.Collector.
func (s *scraped) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEvents, descWebsockets, descWakes, descTurns, descTokens, descSandboxes, descOutbox} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *scraped) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if f := s.src.LastEvent; f != nil {
		ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(f()))
	}
	if f := s.src.WebsocketClients; f != nil {
		ch <- prometheus.MustNewConstMetric(descWebsockets, prometheus.GaugeValue, float64(f()))
	}
	s.inbox(ctx, ch)
	if f := s.src.RunningTurns; f != nil {
		if n, err := f(ctx); s.ok("turns", err) {
			ch <- prometheus.MustNewConstMetric(descTurns, prometheus.GaugeValue, float64(n))
		}
	}
	s.tokens(ctx, ch)
	if f := s.src.Sandboxes; f != nil {
		if by, err := f(ctx); s.ok("sandboxes", err) {
			for state, n := range by {
				ch <- prometheus.MustNewConstMetric(descSandboxes, prometheus.GaugeValue, float64(n), state)
			}
		}
	}
	if f := s.src.Outbox; f != nil {
		if by, err := f(ctx); s.ok("outbox", err) {
			for state, n := range by {
				ch <- prometheus.MustNewConstMetric(descOutbox, prometheus.GaugeValue, float64(n), state)
			}
		}
	}
}

func (s *scraped) inbox(ctx context.Context, ch chan<- prometheus.Metric) {
	if s.src.Inbox == nil {
		return
	}
	pending, claimed, err := s.src.Inbox(ctx)
	if !s.ok("wakes", err) {
		return
	}
	ch <- prometheus.MustNewConstMetric(descWakes, prometheus.GaugeValue, float64(pending), "pending")
	ch <- prometheus.MustNewConstMetric(descWakes, prometheus.GaugeValue, float64(claimed), "claimed")
}

func (s *scraped) tokens(ctx context.Context, ch chan<- prometheus.Metric) {
	if s.src.Tokens == nil {
		return
	}
	rows, err := s.src.Tokens(ctx)
	if !s.ok("tokens", err) {
		return
	}
	for _, r := range rows {
		for kind, n := range map[string]int64{"input": r.Input, "cached_input": r.CachedInput, "output": r.Output} {
			ch <- prometheus.MustNewConstMetric(descTokens, prometheus.CounterValue, float64(n), r.Provider, kind)
		}
	}
}

// ok reports a failed source and tells whether to emit its series.
func (s *scraped) ok(source string, err error) bool {
	if err != nil {
		s.onError(source, err)
		return false
	}
	return true
}
