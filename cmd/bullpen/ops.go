package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/metrics"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/web"
)

// onOff is a boolean flag that also reads on/off, as docs/operations.md's
// configuration table writes them (--sandboxes=off), and yes/no.
type onOff struct{ v *bool }

// parseOnOff reads on/off, true/false, yes/no and 1/0.
func parseOnOff(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q: want on or off", s)
}

// String implements flag.Value.
func (o onOff) String() string {
	if o.v != nil && *o.v {
		return "on"
	}
	return "off"
}

// Set implements flag.Value.
func (o onOff) Set(s string) error {
	b, err := parseOnOff(s)
	if err == nil {
		*o.v = b
	}
	return err
}

// IsBoolFlag lets --sandboxes alone mean on.
func (o onOff) IsBoolFlag() bool { return true }

// onOffVar registers an on/off flag whose default comes from env (def when
// unset); a bad env value is an error at check time, not a silent default.
func onOffVar(fs *flag.FlagSet, p *bool, name, env string, def bool, usage string) func() error {
	*p = def
	var envErr error
	if v := envOr(env, ""); v != "" {
		b, err := parseOnOff(v)
		*p, envErr = b, err
		if err != nil {
			envErr = fmt.Errorf("%s: %w", env, err)
		}
	}
	fs.Var(onOff{p}, name, usage)
	return func() error { return envErr }
}

// opsFlags are the operator's logging and metrics settings.
type opsFlags struct {
	LogFormat    string
	MetricsToken string
}

// RegisterFlags adds --log-format and --metrics-token; the returned check
// validates them after parsing.
func (o *opsFlags) RegisterFlags(fs *flag.FlagSet) func() error {
	fs.StringVar(&o.LogFormat, "log-format", envOr("BULLPEN_LOG_FORMAT", "text"), "log lines as text or json (env BULLPEN_LOG_FORMAT)")
	fs.StringVar(&o.MetricsToken, "metrics-token", envOr("BULLPEN_METRICS_TOKEN", ""), "Bearer token that lets non-loopback clients read /metrics (env BULLPEN_METRICS_TOKEN)")
	return func() error {
		if o.LogFormat != "text" && o.LogFormat != "json" {
			return fmt.Errorf("--log-format %q: want text or json", o.LogFormat)
		}
		return nil
	}
}

// newLoggerFormat returns the server's logger writing text or JSON lines.
func newLoggerFormat(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

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
