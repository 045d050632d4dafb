package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/providers"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/mcp"
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
		sim := scripted.New(agents.DemoScript)
		sim.DeltaDelay = 120 * time.Millisecond // stream visibly
		ps, def = providers.Simulation(agents.Paced(sim, m.DemoPace[0], m.DemoPace[1]))
	}
	timeouts, err := agents.TimeoutsFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	cfg := agents.Config{Office: m.Office, DB: m.DB, Catalog: cat, Providers: ps, DefaultProvider: def,
		Simulation: m.Demo, Logger: m.Logger, Timeouts: timeouts,
		SharedDatabase: m.Shared(), Tasks: m.Tasks}
	m.Recording.Apply(&cfg)
	if !m.Demo {
		cfg.ProviderSource = m.Settings // the providers set up in Settings, read at each turn
	}
	if m.Memory != nil {
		cfg.Memory = m.Memory
	}
	if m.Wiki != nil {
		cfg.Wiki = m.Wiki
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
	if m.Demo {
		m.demo = agents.NewDemo(svc)
	}
	return nil
}

// turnService returns the turn inspector for the web server (nil-safe).
func (m *Main) turnService() web.TurnService {
	if m.Agents == nil {
		return nil
	}
	return m.Agents
}

// mcpHandler returns the MCP endpoint over the agents' tool registry, or
// nil (the route answers "unavailable") without an agents service. The
// agents' sockets resolve turn tokens (auth is the office); the main
// listener takes ordinary tokens only (mcp.MemberTokens).
func (m *Main) mcpHandler(auth mcp.Authenticator) http.Handler {
	if m.Agents == nil {
		return nil
	}
	deps := mcp.Deps{Auth: auth, Tools: m.Agents, Turns: m.Agents, Fixtures: m.MCPConformance, Logger: m.Logger}
	if m.Office != nil {
		deps.Office = m.Office
	}
	if m.Wiki != nil {
		deps.Wiki = m.Wiki
	}
	return mcp.New(deps)
}

// agentService returns the agents service for the web server (nil-safe).
func (m *Main) agentService() web.AgentService {
	if m.Agents == nil {
		return nil
	}
	return m.Agents
}
