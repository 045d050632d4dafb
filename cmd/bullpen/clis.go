package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/bullpen-hq/bullpen"
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

// installCLIs is `bullpen install-clis`: it installs every agent CLI at its
// pinned version with npm (a hire of a CLI role does it too, in the
// background, for that CLI).
func (m *Main) installCLIs(ctx context.Context) error {
	in := m.cliInstaller()
	for _, rt := range runtime.Installs() {
		if in.Installed(rt) {
			fmt.Fprintf(m.Stdout, "%s: %s is installed in %s\n", rt.Name(), rt.Install().Spec(), in.Path(rt))
			continue
		}
		fmt.Fprintf(m.Stdout, "%s: installing %s with npm …\n", rt.Name(), rt.Install().Spec())
		dir, err := in.Ensure(ctx, rt)
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "%s: installed in %s\n", rt.Name(), dir)
	}
	return nil
}

// cliWiring is how agent CLIs reach Bullpen from their sandboxes: each
// agent's socket serves /mcp (over the agents' tool registry) and the
// model gateway, nothing else.
type cliWiring struct {
	sockets *cli.Sockets
	mu      sync.Mutex
	mcp     http.Handler
	gateway http.Handler
}

// wireCLIs gives the agents service the CLI runtimes: the installer in the
// data dir, the sandboxes, the per-turn tokens of the office and the
// per-agent sockets. Their handlers are set once the agents service
// exists (setHandlers): the MCP endpoint serves its tools.
func (m *Main) wireCLIs(ws *sandboxes.Workspaces, cfg *agents.Config) error {
	w := &cliWiring{}
	socks, err := cli.New(cli.Config{Dir: cli.DirFor(m.DataDir), Handler: http.HandlerFunc(w.serve), Auth: m.Office, Logger: m.Logger})
	if err != nil {
		return err
	}
	w.sockets = socks
	m.cli = w
	in := m.cliInstaller()
	cfg.CLIs = agents.JoinCLIs(ws.WithCLIs(sandboxes.CLIHost{Dir: in.Dir, Socket: socks.Socket}), in)
	cfg.TurnTokens, cfg.CLILender = m.Office, socks
	return nil
}

// setHandlers installs the MCP endpoint and the gateway behind the sockets.
func (w *cliWiring) setHandlers(mcpH, gw http.Handler) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.mcp, w.gateway = mcpH, gw
	w.mu.Unlock()
}

func (w *cliWiring) serve(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	mcpH, gw := w.mcp, w.gateway
	w.mu.Unlock()
	h := gw
	if r.URL.Path == "/mcp" {
		h = mcpH
	}
	if h == nil {
		http.Error(rw, "unavailable: not wired yet", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(rw, r)
}

func (w *cliWiring) close() {
	if w != nil {
		w.sockets.Close()
	}
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

// gatewayUpstreams finds the gateway's providers where the built-in
// loop finds them: in Settings (seeded from the environment at start,
// read at each request, so changes apply at once); without a settings
// service, in the environment. Tests set Main.Upstreams to reach fakes.
func (m *Main) gatewayUpstreams() agents.UpstreamLookup {
	if m.Upstreams != nil {
		return agents.LookupIn(m.Upstreams)
	}
	if m.Settings == nil {
		return agents.LookupIn(gateway.UpstreamsFromEnv(os.Getenv))
	}
	return func(ctx context.Context, name string) (gateway.Upstream, bool, error) {
		pc, err := m.Settings.Resolve(ctx, name)
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			return gateway.Upstream{}, false, nil
		} else if err != nil {
			return gateway.Upstream{}, false, err
		}
		up := gateway.Upstream{Kind: pc.Kind, BaseURL: pc.BaseURL, APIKey: pc.APIKey, OAuthToken: pc.OAuthToken, Model: pc.Model, Name: pc.Name}
		if up.BaseURL == "" && up.Kind == gateway.KindAnthropic {
			up.BaseURL = gateway.DefaultAnthropicBaseURL
		} else if up.BaseURL == "" {
			up.BaseURL = gateway.DefaultOpenAIBaseURL
		}
		return up, true, nil
	}
}
