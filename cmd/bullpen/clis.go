package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"

	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/agents/cli"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// cliInstaller is the installer of the agent CLIs, in <data dir>/clis.
func (m *Main) cliInstaller() *runtime.Installer {
	return &runtime.Installer{Dir: filepath.Join(m.DataDir, "clis")}
}

// installCLIs is `bullpen install-clis` (a hire of a CLI role installs
// its CLI too, in the background).
func (m *Main) installCLIs(ctx context.Context) error {
	return m.cliInstaller().InstallAll(ctx, m.Stdout)
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
	in := m.cliInstaller()
	cfg.CLIs = agents.JoinCLIs(ws.WithCLIs(sandboxes.CLIHost{Dir: in.Dir, Socket: socks.Socket}), in)
	cfg.TurnTokens = m.Office
	return nil
}

// gatewayHandler is the model gateway over the providers of the
// environment (the real keys stay in this process), recording each call
// and charging it to its turn.
func (m *Main) gatewayHandler() http.Handler {
	if m.Agents == nil {
		return nil
	}
	cfg := gateway.Config{Auth: m.Office, Upstreams: m.Agents.GatewayUpstreams(m.gatewayUpstreams()),
		Turns: m.Agents, Recorder: m.DB, Responses: m.DB, Logger: m.Logger, Secrets: m.Secrets}
	if t, err := agents.TimeoutsFromEnv(os.Getenv); err == nil { // openAgents already refused bad ones
		cfg.Timeouts = gateway.TimeoutsOf(t)
	}
	return gateway.New(cfg)
}

// gatewayUpstreams finds the gateway's providers where the built-in loop
// does: in Settings; without a settings service, in the environment.
// Tests set Main.Upstreams to reach fakes.
func (m *Main) gatewayUpstreams() agents.UpstreamLookup {
	if m.Upstreams != nil {
		return agents.LookupIn(m.Upstreams)
	}
	if m.Settings == nil {
		return agents.LookupIn(gateway.UpstreamsFromEnv(os.Getenv))
	}
	return m.Settings.Upstream
}
