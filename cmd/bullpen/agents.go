package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/anthropic"
	"github.com/bullpen-hq/bullpen/agents/llm/openai"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/office"
	"github.com/bullpen-hq/bullpen/web"
)

// providersFromEnv configures model providers from the environment:
//
//	BULLPEN_OPENAI_API_KEY, BULLPEN_OPENAI_BASE_URL, BULLPEN_OPENAI_MODEL
//	BULLPEN_ANTHROPIC_API_KEY, BULLPEN_ANTHROPIC_BASE_URL, BULLPEN_ANTHROPIC_MODEL
//	BULLPEN_PROVIDER: the default for roles that name none
//
// OpenAI-compatible servers without keys (Ollama, vLLM) need only the
// base URL.
func providersFromEnv() (map[string]llm.Provider, string) {
	ps := map[string]llm.Provider{}
	if key, base := os.Getenv("BULLPEN_OPENAI_API_KEY"), os.Getenv("BULLPEN_OPENAI_BASE_URL"); key != "" || base != "" {
		ps["openai"] = openai.New(openai.Config{APIKey: key, BaseURL: base, Model: envOr("BULLPEN_OPENAI_MODEL", "gpt-4o-mini")})
	}
	if key := os.Getenv("BULLPEN_ANTHROPIC_API_KEY"); key != "" {
		ps["anthropic"] = anthropic.New(anthropic.Config{APIKey: key, BaseURL: os.Getenv("BULLPEN_ANTHROPIC_BASE_URL"),
			Model: envOr("BULLPEN_ANTHROPIC_MODEL", "claude-sonnet-4-5")})
	}
	def := os.Getenv("BULLPEN_PROVIDER")
	if def == "" {
		for _, k := range []string{"anthropic", "openai"} {
			if ps[k] != nil {
				def = k
				break
			}
		}
	}
	return ps, def
}

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
	providers, def := providersFromEnv()
	if m.Demo {
		sim := scripted.New(agents.DemoScript)
		sim.DeltaDelay = 120 * time.Millisecond // stream visibly
		providers, def = map[string]llm.Provider{"scripted": sim, "openai": sim, "anthropic": sim}, "scripted"
	}
	timeouts, err := agents.TimeoutsFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	cfg := agents.Config{Office: m.Office, Catalog: cat, Providers: providers, DefaultProvider: def,
		Simulation: m.Demo, Logger: m.Logger, Timeouts: timeouts,
		SharedDatabase: m.SharedDatabase && m.DatabaseURL != ""}
	if m.Wiki != nil {
		cfg.Wiki = m.Wiki
	}
	if m.Sandboxes != nil {
		cfg.Sandboxes = m.Sandboxes.Workspaces(m.SandboxTimes.AgentIdle)
	}
	svc, err := agents.New(cfg)
	if err != nil {
		return err
	}
	if err := svc.Start(ctx); err != nil {
		return err
	}
	m.Agents = svc
	return nil
}

// agentService returns the agents service for the web server (nil-safe).
func (m *Main) agentService() web.AgentService {
	if m.Agents == nil {
		return nil
	}
	return m.Agents
}

// runDemo hires the starter team and asks the lead for something, so the
// dashboard shows agents coordinating, writing the wiki and (with
// sandboxes) running commands. Everything is labelled a simulation.
func (m *Main) runDemo(ctx context.Context) error {
	off := m.Office
	members, err := off.Members(ctx)
	if err != nil {
		return err
	}
	var admin bullpen.Member
	for _, mb := range members {
		if mb.IsAdmin {
			admin = mb
			break
		}
	}
	if _, err := m.Agents.HireTeam(ctx, admin, "starter"); err != nil {
		return fmt.Errorf("demo: hire the starter team: %w", err)
	}
	general, err := off.ChannelByName(ctx, admin, "general")
	if err != nil {
		return err
	}
	_, err = off.Post(ctx, admin, office.PostInput{ChannelID: general.ID, Source: bullpen.SourceWeb,
		Body: "@lead welcome to the demo! Please get our build machine checked and tell me what you find."})
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "Demo: a simulated team (scripted model, not a real one) is working in #general.\n")
	return nil
}
