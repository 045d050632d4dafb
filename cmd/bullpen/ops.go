package main

import (
	"context"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/metrics"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/web"
)

// wireMetrics builds the metrics from the parts of the running office and
// hands the web server what it reports to and serves.
func (m *Main) wireMetrics(wcfg *web.Config) *metrics.Metrics {
	src := metrics.Sources{
		LastEvent:    func() int64 { return m.Office.Hub().Last() },
		Inbox:        m.DB.InboxCounts,
		RunningTurns: m.DB.RunningTurns,
		Tokens: func(ctx context.Context) ([]metrics.ProviderTokens, error) {
			rows, err := m.DB.TokensByProvider(ctx)
			out := make([]metrics.ProviderTokens, len(rows))
			for i, r := range rows {
				out[i] = metrics.ProviderTokens{Provider: r.Provider, Input: r.Input, CachedInput: r.CachedInput, Output: r.Output}
			}
			return out, err
		},
		WebsocketClients: func() int64 {
			if m.Server == nil {
				return 0
			}
			return m.Server.WebsocketClients()
		},
	}
	if m.Sandboxes != nil {
		src.Sandboxes = m.sandboxStates
	}
	if m.Telegram != nil {
		src.Outbox = func(ctx context.Context) (map[string]int64, error) {
			st, err := m.Telegram.Status(ctx)
			return st.Outbox, err
		}
	}
	mt := metrics.New(metrics.Config{Sources: src, OnError: func(source string, err error) {
		m.Logger.Warn("metrics: a source failed", "source", source, "err", err)
	}})
	wcfg.Metrics, wcfg.MetricsToken, wcfg.ObserveRequest = mt.Handler(), m.Ops.MetricsToken, mt.ObserveRequest
	return mt
}

// sandboxStates counts the office's sandboxes by state.
func (m *Main) sandboxStates(ctx context.Context) (map[string]int, error) {
	infos, err := m.Sandboxes.Manager().List(ctx, nil)
	if err != nil {
		return nil, err
	}
	by := map[string]int{}
	for _, in := range infos {
		by[string(in.State)]++
	}
	return by, nil
}

// timedSandboxes is the web layer's sandbox service with each create
// timed for the metrics.
type timedSandboxes struct {
	web.Sandboxes
	observe func(time.Duration)
}

// Create implements web.SandboxLifecycle, timing successful creates.
func (t timedSandboxes) Create(ctx context.Context, actor bullpen.Member, spec sandbox.Spec) (sandbox.Info, error) {
	start := time.Now()
	info, err := t.Sandboxes.Create(ctx, actor, spec)
	if err == nil {
		t.observe(time.Since(start))
	}
	return info, err
}
