package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/cli"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/providers"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/agents/tasks"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/mcp"
	"github.com/bullpen-hq/bullpen/metrics"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/web"
)

// openAgents starts the agents service: the wake router, the workers and
// the turn runtime, with the wiki and the sandboxes wired in when they
// are available. demo runs every agent on the scripted simulation.
func (m *Main) openAgents(ctx context.Context) error {
	cat, err := agents.LoadCatalog(filepath.Join(m.DataDir, "roles"))
	if err != nil {
		m.Logger.Warn("some role files were left out", "err", err)
	}
	if cat == nil {
		return err
	}
	var ps map[string]llm.Provider
	var def string
	if m.Demo {
		ps, def = providers.Simulation(agents.DemoModel(m.DemoPace[0], m.DemoPace[1]))
	}
	if m.timeouts, err = agents.TimeoutsFromEnv(os.Getenv); err != nil {
		return err
	}
	cfg := agents.Config{Office: m.Office, DB: m.DB, Catalog: cat, Providers: ps, DefaultProvider: def,
		Simulation: m.Demo, Logger: m.Logger, Timeouts: m.timeouts,
		SharedDatabase: m.Shared(), Placement: m.Placement(), ReplicaDir: m.DataDir, Tasks: m.Tasks, Memory: m.Memory, Wiki: m.Wiki, TurnRetention: m.Recording.Retention}
	if !m.Demo {
		cfg.ProviderSource = m.Settings // the providers set up in Settings, read at each turn
	}
	if m.Sandboxes != nil {
		ws := m.Sandboxes.Workspaces(m.SandboxTimes.AgentIdle)
		cfg.Sandboxes = ws
		if err := m.wireCLIs(ws, &cfg); err != nil {
			return err
		}
	}
	svc, err := agents.New(cfg)
	if err != nil {
		return err
	}
	if err := svc.Start(ctx); err != nil {
		return err
	}
	m.Agents = svc
	m.atClose(func(context.Context) error { svc.Close(); return nil })
	if m.Demo {
		m.demo = agents.NewDemo(svc)
	}
	return nil
}

// mcpHandler returns the MCP endpoint over the agents' tool registry. The
// agents' sockets resolve turn tokens (auth is the office); the main
// listener takes ordinary tokens only (mcp.MemberTokens).
func (m *Main) mcpHandler(auth mcp.Authenticator) http.Handler {
	return mcp.New(mcp.Deps{Auth: auth, Tools: m.Agents, Turns: m.Agents, Office: m.Office, Wiki: m.Wiki, Fixtures: m.MCPConformance, Logger: m.Logger})
}

// openTasks starts the task service, its sweep of lapsed claims and its
// routines' ticks, and the memory's consolidation over the cap.
func (m *Main) openTasks() {
	m.Tasks = tasks.New(m.DB, m.Office, tasks.Config{Logger: m.Logger})
	ctx, cancel := context.WithCancel(context.Background())
	m.atClose(func(context.Context) error { cancel(); return nil })
	go m.Tasks.Run(ctx, time.Minute)
	go m.Tasks.RunRoutines(ctx, time.Second)
	go m.Memory.Run(ctx, time.Minute)
}

// wireCLIs gives the agents service the CLI runtimes: the installer in the
// data dir, the sandboxes, the per-turn tokens of the office and the
// per-agent sockets, which serve cliMux (its handlers are set once the
// agents service exists).
func (m *Main) wireCLIs(ws *sandboxes.Workspaces, cfg *agents.Config) error {
	m.cliMux = &cli.Mux{}
	socks, err := cli.New(cli.Config{Dir: cli.DirFor(m.DataDir), Handler: m.cliMux, Auth: m.Office, Logger: m.Logger})
	if err != nil {
		return err
	}
	m.sockets = socks
	m.atClose(func(context.Context) error { socks.Close(); return nil })
	in := runtime.InstallerIn(m.DataDir)
	cfg.CLIs = agents.JoinCLIs(ws.WithCLIs(sandboxes.CLIHost{Dir: in.Dir, Socket: socks.Socket}), in)
	cfg.TurnTokens, cfg.CLILender = m.Office, socks
	return nil
}

// gatewayHandler is the model gateway over the providers of Settings
// (seeded from the environment at start, read at each request, as the
// built-in loop does; tests set Main.Upstreams to reach fakes). The real
// keys stay in this process; each call is recorded and charged to its turn.
func (m *Main) gatewayHandler() http.Handler {
	lookup := m.Settings.Upstream
	if m.Upstreams != nil {
		lookup = agents.LookupIn(m.Upstreams)
	}
	return gateway.New(gateway.Config{Auth: m.Office, Upstreams: m.Agents.GatewayUpstreams(lookup), Turns: m.Agents, Recorder: m.DB,
		Responses: m.DB, Logger: m.Logger, Secrets: m.Secrets, Timeouts: gateway.TimeoutsOf(m.timeouts)})
}

// wireMetrics builds the metrics from the parts of the running office and
// hands the web server what it reports to and serves.
func (m *Main) wireMetrics(wcfg *web.Config) *metrics.Metrics {
	src := metrics.Sources{LastEvent: m.Office.Hub().Last, Inbox: m.DB.InboxCounts, RunningTurns: m.DB.RunningTurns,
		Tokens:           metrics.TokensOf(m.DB.TokensByProvider),
		WebsocketClients: func() int64 { return m.Server.WebsocketClients() }, // read after Run, once m.Server is set
		Outbox:           m.Telegram.OutboxCounts}
	if m.Sandboxes != nil {
		src.Sandboxes = m.Sandboxes.CountByState
	}
	mt := metrics.New(metrics.Config{Sources: src, OnError: func(source string, err error) {
		m.Logger.Warn("metrics: a source failed", "source", source, "err", err)
	}})
	wcfg.Metrics, wcfg.MetricsToken, wcfg.ObserveRequest = mt.Handler(), m.Ops.MetricsToken, mt.ObserveRequest
	return mt
}
