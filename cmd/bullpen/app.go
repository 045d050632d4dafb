package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/bullpen-hq/bullpen/e2b"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/cli"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/bridge/telegram"
	"github.com/bullpen-hq/bullpen/config"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/internal/fds"
	"github.com/bullpen-hq/bullpen/internal/redact"
	"github.com/bullpen-hq/bullpen/mcp"
	"github.com/bullpen-hq/bullpen/metrics"
	"github.com/bullpen-hq/bullpen/office"
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
	// Demo runs every agent on the scripted simulation (bullpen demo).
	Demo bool
	// DemoPace bounds how long each simulated model answer takes (default
	// 1–3 s, so a person can follow; tests make it short).
	DemoPace [2]time.Duration
	// Metrics are served at /metrics.
	Metrics *metrics.Metrics
	// sandboxesDown says why sandboxes are unavailable, for /healthz.
	sandboxesDown string
	stderr        io.Writer

	Logger *slog.Logger
	Stdout io.Writer
	// Secrets are what no view, record, answer or log line shows: the
	// providers' keys (Settings adds them as it reads them), the
	// Telegram bot token, the metrics token. Logger redacts them.
	Secrets *redact.Secrets

	DB     *store.DB
	Office *office.Office
	// Wiki serves the wiki's pages, search and agent tools.
	Wiki *wiki.Wiki
	// Memory serves the agents' memory: recall, tools and the API.
	Memory *memory.Service
	// Sandboxes runs the office's sandboxes; nil when they are unavailable
	// (not root, turned off, or the host lacks cgroups or overlayfs).
	Sandboxes *sandboxes.Service
	// Settings keeps the model providers; agents read them at each turn.
	Settings *settings.Service
	// Agents runs the agents: wake router, workers, turns, approvals.
	Agents *agents.Service
	// Tasks serves tasks; its sweep returns lapsed claims to open.
	Tasks     *tasks.Service
	stopTasks context.CancelFunc
	// Telegram is the Telegram bridge (idle until a bot token is set).
	Telegram *telegram.Bridge
	// TelegramApprovals answers approvals from Telegram's buttons; set it
	// to the agents service when that is wired (nil: the buttons say
	// approvals are not available).
	TelegramApprovals telegram.Approvals
	Server            *web.Server
	// Upstreams are the model gateway's providers; nil reads them from
	// the environment (BULLPEN_ANTHROPIC_API_KEY, …).
	Upstreams map[string]gateway.Upstream
	// sockets serve cliMux (MCP, gateway) to the agent CLIs' sandboxes.
	sockets *cli.Sockets
	cliMux  *cli.Mux
	ln      net.Listener
	demo    *agents.Demo // bullpen demo: starts when watched
	e2b     *e2b.Server  // the E2B-compatible API; nil without sandboxes
	served  chan error
}

// NewMain returns a Main with its defaults.
func NewMain(stdout, stderr io.Writer) *Main {
	sec := redact.New()
	return &Main{Stdout: stdout, Logger: slog.New(sec.Handler(config.NewLogger(stderr, "text").Handler())), Secrets: sec, stderr: stderr, DemoPace: [2]time.Duration{time.Second, 3 * time.Second}}
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
	db, err := store.Open(ctx, store.Config{URL: m.DatabaseURL, DataDir: m.DataDir, Record: m.Recording.StoreCaps(), Secrets: m.Secrets})
	if err != nil {
		return err
	}
	m.DB = db
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
	m.openSandboxes(ctx)
	m.Wiki = wiki.New(m.DB, wiki.Config{})
	m.Memory = memory.New(m.DB, memory.Config{})
	if err := m.openSettings(ctx); err != nil {
		return err
	}
	m.openTasks()
	if err := m.openAgents(ctx); err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	if m.TelegramApprovals == nil && m.Agents != nil { // never a typed nil in the interface
		m.TelegramApprovals = m.Agents
	}
	if err := m.openTelegram(ctx); err != nil {
		return err
	}
	wcfg := web.Config{OfficeName: m.OfficeName, Logger: m.Logger, Notice: m.Agents.Notice}
	m.Auth.Apply(&wcfg)
	if m.demo != nil {
		wcfg.OnWatch = m.demo.Watched
	}
	m.Metrics = m.wireMetrics(&wcfg)
	wcfg.Descriptors = fds.Count
	wcfg.SandboxesOff, wcfg.SandboxesDown = !m.SandboxesOn, m.sandboxesDown
	if m.Sandboxes != nil {
		wcfg.SandboxReady = m.sandboxReady
	}
	mcpH := m.mcpHandler(mcp.MemberTokens(off.Authenticate))
	m.cliMux.SetHandlers(m.mcpHandler(off), m.gatewayHandler())
	m.Server = web.New(wcfg, web.Services{Office: off, Agents: m.agentService(), Sandboxes: m.timedSandboxService(),
		Telegram: m.telegramService(), Wiki: m.Wiki, Memory: m.Memory, Turns: m.turnService(), Timeline: timeline.Lines{Log: m.Logger},
		Settings: m.settingsService(), MCP: mcpH, Tasks: m.Tasks, Routines: m.Tasks, E2B: m.e2bService()})
	if m.ln, err = net.Listen("tcp", m.Addr); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	m.ln = fds.Listener(m.ln, m.Logger) // out of descriptors, it waits and accepts again
	m.served = make(chan error, 1)
	go func() { m.served <- m.Server.Serve(m.ln) }()

	fmt.Fprintf(m.Stdout, "Bullpen is running: %s\n", m.URL())
	fmt.Fprintf(m.Stdout, "Data: %s\n", m.Where())
	if token != "" {
		fmt.Fprintf(m.Stdout, "\nFirst start: log in as @%s with this token (shown only once):\n\n    %s\n\n", m.AdminHandle, token)
	}
	return nil
}

// openTasks starts the task service, its sweep of lapsed claims and its
// routines' ticks.
func (m *Main) openTasks() {
	m.Tasks = tasks.New(m.DB, m.Office, tasks.Config{Logger: m.Logger})
	ctx, cancel := context.WithCancel(context.Background())
	m.stopTasks = cancel
	go m.Tasks.Run(ctx, time.Minute)
	go m.Tasks.RunRoutines(ctx, time.Second)
}

// URL is the dashboard's address.
func (m *Main) URL() string { return "http://" + m.ln.Addr().String() + "/" }

// Close shuts the server down (websockets get a going-away frame) and
// closes the database.
func (m *Main) Close(ctx context.Context) error {
	var errs []error
	if m.Server != nil {
		errs = append(errs, m.Server.Shutdown(ctx))
		// Shutdown cannot stop a Serve that has not registered its listener
		// yet (a Close right after Run); closing the listener always does.
		if m.ln != nil {
			m.ln.Close()
			errs = append(errs, <-m.served)
		}
	}
	if m.stopTasks != nil {
		m.stopTasks()
	}
	if m.Agents != nil {
		m.Agents.Close()
	}
	if m.sockets != nil {
		m.sockets.Close()
	}
	if m.Telegram != nil {
		m.Telegram.Close()
	}
	if m.e2b != nil {
		m.e2b.Close()
	}
	if m.Sandboxes != nil {
		errs = append(errs, m.Sandboxes.Close())
	}
	if m.DB != nil {
		errs = append(errs, m.DB.Close())
	}
	return errors.Join(errs...)
}
