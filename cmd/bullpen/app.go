package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/cli"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/config"
	"github.com/bullpen-hq/bullpen/e2b"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/internal/fds"
	"github.com/bullpen-hq/bullpen/internal/redact"
	"github.com/bullpen-hq/bullpen/mcp"
	"github.com/bullpen-hq/bullpen/metrics"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/sandbox/kube"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/settings"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/timeline"
	"github.com/bullpen-hq/bullpen/web"
	"github.com/bullpen-hq/bullpen/wiki"
)

// Main is the whole program, reusable by end-to-end tests: ParseFlags,
// Run (returns once listening), Close.
type Main struct {
	// Config is what the flags and the environment set (ParseFlags).
	config.Config
	Logger *slog.Logger
	Stdout io.Writer
	stderr io.Writer
	// Secrets are what no view, record, answer or log line shows: the
	// providers' keys (Settings adds them as it reads them), the
	// Telegram bot token, the metrics token. Logger redacts them.
	Secrets *redact.Secrets

	// The parts of the office, made by Run. Sandboxes is nil when they
	// are unavailable (not root, turned off, or the host lacks cgroups or
	// overlayfs; sandboxesDown says why, for /healthz). Telegram is idle
	// until a bot token is set; Tasks' sweep returns lapsed claims to open.
	DB            *store.DB
	Office        *office.Office
	Wiki          *wiki.Wiki
	Memory        *memory.Service
	Sandboxes     *sandboxes.Service
	sandboxesDown string
	Settings      *settings.Service // the model providers, read at each turn
	Agents        *agents.Service   // wake router, workers, turns, approvals
	timeouts      bullpen.Timeouts  // of the agents' model calls, from the environment
	Tasks         *tasks.Service
	Telegram      *telegram.Bridge
	Metrics       *metrics.Metrics // served at /metrics
	Server        *web.Server
	// TelegramApprovals answers approvals from Telegram's buttons; nil
	// means the agents service.
	TelegramApprovals telegram.Approvals
	// Upstreams are the model gateway's providers (tests); nil reads
	// them from Settings (gatewayHandler).
	Upstreams map[string]gateway.Upstream

	sockets *cli.Sockets // serve cliMux (MCP, gateway) to the agent CLIs' sandboxes
	cliMux  *cli.Mux
	demo    *agents.Demo // bullpen demo: starts when watched
	ln      net.Listener
	// closers undo what Run opened, each registered as its part opens;
	// Close runs them in the reverse order.
	closers []func(context.Context) error
}

// atClose registers what Close does for a part just opened.
func (m *Main) atClose(f func(context.Context) error) { m.closers = append(m.closers, f) }

// NewMain returns a Main with its defaults.
func NewMain(stdout, stderr io.Writer) *Main {
	sec := redact.New()
	m := &Main{Stdout: stdout, Logger: slog.New(sec.Handler(config.NewLogger(stderr, "text").Handler())), Secrets: sec, stderr: stderr}
	m.DemoPace = [2]time.Duration{time.Second, 3 * time.Second}
	return m
}

// ParseFlags reads flags, falling back to environment variables, and
// sets up the logger they ask for.
func (m *Main) ParseFlags(cmd string, args []string) error {
	if err := m.Config.Parse(cmd, args, os.Getenv); err != nil {
		return err
	}
	if m.stderr != nil {
		m.Logger = slog.New(m.Secrets.Handler(config.NewLogger(m.stderr, m.Ops.LogFormat).Handler()))
	}
	m.Secrets.Add(m.Ops.MetricsToken)
	return nil
}

// OpenStore opens the database and applies migrations.
func (m *Main) OpenStore(ctx context.Context) error {
	db, err := store.Open(ctx, store.Config{URL: m.DatabaseURL, DataDir: m.DataDir, Secrets: m.Secrets,
		Record: store.RecordCaps{BodyCap: int(m.Recording.BodyCap), TurnCap: int(m.Recording.TurnCap)}})
	if err != nil {
		return err
	}
	m.DB = db
	m.atClose(func(context.Context) error { return db.Close() })
	return nil
}

// Run opens everything, prints the URL (and the admin token on first
// start), and starts serving in the background.
func (m *Main) Run(ctx context.Context) error {
	if _, err := fds.RaiseLimit(); err != nil {
		m.Logger.Warn("open file limit", "err", err)
	}
	if err := m.OpenStore(ctx); err != nil {
		return err
	}
	off, err := office.New(ctx, m.DB, office.Config{})
	if err != nil {
		return err
	}
	m.Office = off
	token, err := off.Bootstrap(ctx, m.AdminHandle)
	if err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	sbcfg := sandboxes.Config{Office: off, DB: m.DB, DefaultLifetime: m.SandboxTimes.DefaultLifetime, Logger: m.Logger}
	m.SandboxLimits.Apply(&sbcfg.Sandbox)
	if rt := m.SandboxRuntime; rt.Runtime == config.RuntimeKubernetes {
		sbcfg.Driver = sandboxes.Opener(kube.Options{KubeConfig: rt.KubeConfig, Namespace: rt.Namespace, Office: m.OfficeName, InitImage: rt.InitImage,
			HostImage: rt.HostImage, RuntimeClass: rt.RuntimeClass, StorageClass: rt.StorageClass, PullPolicy: rt.PullPolicy, Transport: rt.Transport, SnapshotClass: rt.SnapshotClass, WarmPool: rt.WarmPool, WarmPoolImages: rt.PoolImages(), Mounts: rt.KubeMounts(), Logger: m.Logger}.Open)
	}
	m.Sandboxes, m.sandboxesDown = sandboxes.OpenOrExplain(ctx, m.DataDir, m.SandboxesOn, sbcfg)
	if m.Sandboxes != nil {
		m.atClose(func(context.Context) error { return m.Sandboxes.Close() })
	}
	m.Wiki = wiki.New(m.DB, wiki.Config{})
	if m.Settings, err = settings.Open(ctx, settings.Config{DB: m.DB, Logger: m.Logger, Secrets: m.Secrets}, os.Getenv); err != nil {
		return err
	}
	m.Memory = memory.New(m.DB, memory.Config{Embedder: &memory.ProviderEmbedder{DB: m.DB}, Models: m.Settings, Log: m.Logger})
	m.openTasks()
	if err := m.openAgents(ctx); err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	if m.TelegramApprovals == nil {
		m.TelegramApprovals = m.Agents
	}
	m.Telegram, err = telegram.Open(ctx, telegram.Config{Office: off, DB: m.DB, Approvals: m.TelegramApprovals, OfficeName: m.OfficeName,
		Logger: m.Logger, Secrets: m.Secrets, Shared: m.Shared()}, os.Getenv)
	if err != nil {
		return err
	}
	m.atClose(func(context.Context) error { m.Telegram.Close(); return nil })
	if err := m.serve(); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "Bullpen is running: %s\n", m.URL())
	fmt.Fprintf(m.Stdout, "Data: %s\n", m.Where())
	if token != "" {
		fmt.Fprintf(m.Stdout, "\nFirst start: log in as @%s with this token (shown only once):\n\n    %s\n\n", m.AdminHandle, token)
	}
	return nil
}

// serve wires the web server (and the agents' sockets' MCP and gateway)
// and starts it on Addr in the background.
func (m *Main) serve() error {
	wcfg := web.Config{OfficeName: m.OfficeName, Logger: m.Logger, Notice: m.Agents.Notice, Descriptors: fds.Count,
		SandboxesOff: !m.SandboxesOn, SandboxesDown: m.sandboxesDown, AuthFailures: m.Auth.Failures, AuthWindow: m.Auth.Window, TrustedProxies: m.Auth.Proxies()}
	if m.demo != nil {
		wcfg.OnWatch = m.demo.Watched
	}
	m.Metrics = m.wireMetrics(&wcfg)
	var sb web.Sandboxes // nil interfaces without sandboxes: their routes answer "unavailable"
	var e2bAPI web.E2B
	if m.Sandboxes != nil {
		api := e2b.New(e2b.Config{Boxes: m.Sandboxes, Keys: m.Office, DefaultTimeout: m.SandboxTimes.DefaultLifetime, Logger: m.Logger})
		m.atClose(func(context.Context) error { api.Close(); return nil })
		wcfg.SandboxReady, sb, e2bAPI = m.Sandboxes.Ready, m.Sandboxes, api
	}
	m.cliMux.SetHandlers(m.mcpHandler(m.Office), m.gatewayHandler())
	m.Server = web.New(wcfg, web.Services{Office: m.Office, Agents: m.Agents, Sandboxes: web.TimedSandboxes(sb, m.Metrics.ObserveSandboxCreate),
		Telegram: m.Telegram, Wiki: m.Wiki, Memory: m.Memory, Turns: m.Agents, Timeline: timeline.Lines{Log: m.Logger},
		Settings: m.Settings, MCP: m.mcpHandler(mcp.MemberTokens(m.Office.Authenticate)), Tasks: m.Tasks, Routines: m.Tasks, E2B: e2bAPI})
	ln, err := net.Listen("tcp", m.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	m.ln = fds.Listener(ln, m.Logger) // out of descriptors, it waits and accepts again
	served := make(chan error, 1)
	go func() { served <- m.Server.Serve(m.ln) }()
	m.atClose(func(ctx context.Context) error {
		// Shutdown cannot stop a Serve that has not registered its listener
		// yet (a Close right after Run); closing the listener always does.
		err := m.Server.Shutdown(ctx)
		m.ln.Close()
		return errors.Join(err, <-served)
	})
	return nil
}

// URL is the dashboard's address.
func (m *Main) URL() string { return "http://" + m.ln.Addr().String() + "/" }

// Close shuts the server down (websockets get a going-away frame), stops
// the parts in the reverse order Run opened them, and closes the
// database. A second Close does nothing.
func (m *Main) Close(ctx context.Context) error {
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i](ctx))
	}
	m.closers = nil
	return errors.Join(errs...)
}
