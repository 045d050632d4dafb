package agents

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// An agent CLI that can run as a server (runtime.Server: opencode) runs
// as one in the agent's sandbox, started by the agent's first turn and
// kept while it answers: each turn is then a thin client attached to it,
// which saves the CLI's start (9–11 s of CPU for opencode) on every turn
// after the first. The server holds a standing secret instead of a
// turn's token; while a turn runs, the agent's socket takes the secret
// as that turn's token (TurnLender), and refuses it between turns.
//
// What the server does belongs to the turn that lends it a token: after
// a clean turn whatever the turn left running in the server's process
// tree is killed, and a turn that ends any other way (killed at its
// deadline, stopped by a budget, a broken stream, a failed run) stops the
// server with everything it started, so that nothing of that turn runs
// on into the next; a change of what the server was started with (model,
// provider, role, sandbox) restarts it. A server that cannot start, or is busy, leaves
// the turn to a one-shot run of the CLI, as before.

// TurnLender lets a standing secret stand for a running turn's token on
// the agent's socket until release (*cli.Sockets).
type TurnLender interface {
	Lend(agentID int64, secret, token string) (release func(), err error)
}

// A CLI server listens on a sandbox loopback port drawn from this range
// at each start (the bridge to Bullpen is bullpen.CLIBridgePort, below
// it): a server a crashed Bullpen left in a sandbox that outlived it
// holds its port but cannot take the next one's place.
const (
	cliServerPortMin = 20000
	cliServerPorts   = 10000
)

func cliServerPort() int {
	n, _ := rand.Int(rand.Reader, big.NewInt(cliServerPorts))
	return cliServerPortMin + int(n.Int64())
}

// cliServerStart bounds how long a server may take to say it listens.
const cliServerStart = 2 * time.Minute

// cliServer is one agent's running CLI server.
type cliServer struct {
	key              string // what it was started with (serverKey)
	proc             bullpen.CLIProcess
	secret, password string
	port             int
	url              string
	exited           chan struct{} // closed once the process is gone
	out              *tailBuffer   // its stdout and stderr, for errors
}

func (c *cliServer) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// cliServers are the running CLI servers of this process, by agent.
type cliServers struct {
	mu sync.Mutex
	m  map[int64]*cliServer
}

// stop kills the agent's server, if it runs, and forgets it.
func (cs *cliServers) stop(agentID int64) {
	cs.mu.Lock()
	c := cs.m[agentID]
	delete(cs.m, agentID)
	cs.mu.Unlock()
	if c != nil {
		_ = c.proc.Close()
		<-c.exited
	}
}

// serverPlan is what a turn needs to run attached to a server.
type serverPlan struct {
	rt    runtime.Server
	turn  runtime.Turn // the turn's view; Token is the turn's token
	stdin string
}

// serverTurn is a turn attached to a server: end releases the lend, and
// stops the server unless the turn ended cleanly.
type serverTurn struct {
	s       *Service
	agentID int64
	server  *cliServer
	release func()
}

// strayKiller is a CLI process that can kill what it started and left
// running, but not itself (sandboxes' runs can).
type strayKiller interface {
	KillStrays() (int, error)
}

// end ends the turn's hold on the server: after a clean turn, whatever
// the turn started through the server and left running (a command sent
// to the background) is killed, as a one-shot run's whole tree is;
// otherwise the server is stopped with everything it started.
func (t *serverTurn) end(clean bool) {
	if t == nil {
		return
	}
	if clean {
		if k, ok := t.server.proc.(strayKiller); ok {
			if n, err := k.KillStrays(); err != nil {
				clean = false
			} else if n > 0 {
				t.s.log.Info("agents: killed what a turn left running in its CLI server", "agent", t.agentID, "processes", n)
			}
		}
	}
	t.release()
	if !clean {
		t.s.servers.stop(t.agentID)
	}
}

// serverKey is what a server was started with, but for its secret.
func serverKey(rt runtime.Server, t runtime.Turn, role bullpen.Role, spec bullpen.SandboxSpec) string {
	t.Token, t.Session = "", ""
	inv := rt.ServeCommand(t, 0, "")
	b, _ := json.Marshal([]any{inv.Argv, inv.Env, role, spec})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// cliAttach returns the run of a turn attached to the agent's server,
// starting the server first when none runs or it was started otherwise.
// The turn lends its token before a server starts: a server may reach
// the MCP endpoint as it starts (for its tool list).
func (s *Service) cliAttach(ctx context.Context, e *turnEnv, spec bullpen.SandboxSpec, p *serverPlan, run bullpen.CLIRun) (bullpen.CLIRun, *serverTurn, error) {
	key := serverKey(p.rt, p.turn, e.role, spec)
	s.servers.mu.Lock()
	c := s.servers.m[e.agent.ID]
	s.servers.mu.Unlock()
	fresh := c == nil || !c.alive() || c.key != key
	if fresh {
		s.servers.stop(e.agent.ID) // gone, or started otherwise
		port := cliServerPort()
		c = &cliServer{key: key, secret: randomHex(32), password: randomHex(16), exited: make(chan struct{}),
			out: &tailBuffer{max: 16 << 10}, port: port, url: "http://127.0.0.1:" + strconv.Itoa(port)}
	}
	release, err := s.cfg.CLILender.Lend(e.agent.ID, c.secret, p.turn.Token)
	if err != nil {
		return run, nil, err
	}
	if fresh {
		if err := s.startServer(ctx, e, spec, p, c); err != nil {
			release()
			return run, nil, err
		}
		s.servers.mu.Lock()
		if s.servers.m == nil {
			s.servers.m = map[int64]*cliServer{}
		}
		s.servers.m[e.agent.ID] = c
		s.servers.mu.Unlock()
	}
	inv := p.rt.AttachCommand(p.turn, c.url, c.password)
	run.Argv, run.Env = inv.Argv, inv.Env
	run.Stdin = inv.PromptPrefix + p.stdin
	return run, &serverTurn{s: s, agentID: e.agent.ID, server: c, release: release}, nil
}

// startServer starts the CLI's server in the agent's sandbox and waits
// until it listens. It runs on the service's context: it outlives the
// turn, and dies with the service.
func (s *Service) startServer(ctx context.Context, e *turnEnv, spec bullpen.SandboxSpec, p *serverPlan, c *cliServer) error {
	s.mu.Lock()
	sctx := s.ctx
	s.mu.Unlock()
	if sctx == nil || sctx.Err() != nil {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "agents: the service is stopping")
	}
	t := p.turn
	t.Token, t.Session = c.secret, ""
	inv := p.rt.ServeCommand(t, c.port, c.password)
	proc, err := s.cfg.CLIs.RunCLI(sctx, e.agent, spec, bullpen.CLIRun{Argv: inv.Argv, Env: inv.Env,
		Dirs: append([]string{p.turn.Home}, inv.Dirs...), Stdin: ""})
	if err != nil {
		return fmt.Errorf("agents: start the %s server: %w", p.rt.Name(), err)
	}
	c.proc = proc
	ready := make(chan struct{})
	go func() { _, _ = io.Copy(c.out, proc.Stderr()) }()
	go func() {
		sc := bufio.NewScanner(proc.Stdout())
		said := false
		for sc.Scan() {
			_, _ = c.out.Write(append(sc.Bytes(), '\n'))

			if !said && p.rt.Ready(sc.Text()) {
				said = true
				close(ready)
			}
		}
		_, _ = proc.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(cliServerStart)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-c.exited:
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "the %s server exited before it listened: %s", p.rt.Name(), clipStderr(c.out.String()))
	case <-timer.C:
	case <-ctx.Done():
	}
	_ = proc.Close()
	<-c.exited
	return bullpen.Errorf(bullpen.EUNAVAILABLE, "the %s server did not listen within %s", p.rt.Name(), cliServerStart)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
