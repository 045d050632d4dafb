package sandboxes

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// Bounds of an agent CLI's sandbox when its role sets none: the CLIs are
// native programs of a few hundred MB with many threads, more than a
// command of the builtin loop needs.
const (
	cliMemory = 2 << 30
	cliPids   = 1024
)

// CLIHost is what Workspaces needs to run agent CLIs.
type CLIHost struct {
	// Dir holds the installed CLIs, which every CLI sandbox mounts
	// read-only at bullpen.CLIMountDir.
	Dir string
	// Socket returns the host unix socket that serves Bullpen (the MCP
	// endpoint and the model gateway) to the agent's sandbox, one per
	// agent, so the server knows which sandbox calls.
	Socket func(ctx context.Context, agent bullpen.Member) (string, error)
}

// CLIWorkspaces is Workspaces that also runs agent CLIs (the runner of
// the agents' CLI turns).
type CLIWorkspaces struct {
	*Workspaces
	host CLIHost
}

// WithCLIs returns w with agent CLI runs.
func (w *Workspaces) WithCLIs(h CLIHost) *CLIWorkspaces {
	return &CLIWorkspaces{Workspaces: w, host: h}
}

// RunCLI runs an agent CLI: the agent's workspace, with the
// CLIs mounted and the bridge attached (a workspace made before gets them
// with a restart), runs the CLI once as the sandbox user, its whole
// process tree killed when it ends.
func (w *CLIWorkspaces) RunCLI(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec, run bullpen.CLIRun) (bullpen.CLIProcess, error) {
	id, err := w.cliWorkspace(ctx, agent, rs)
	if err != nil {
		return nil, err
	}
	m := w.s.m
	if len(run.Dirs) > 0 {
		r, err := m.Run(ctx, id, sandbox.ExecRequest{Cmd: append([]string{"mkdir", "-p", "--"}, run.Dirs...)})
		if err == nil && r.ExitCode != 0 {
			err = bullpen.Errorf(bullpen.EUNAVAILABLE, "sandboxes: make the CLI's directories: %s", strings.TrimSpace(string(r.Stderr)))
		}
		if err != nil {
			return nil, err
		}
	}
	var stdin io.Reader = strings.NewReader(run.Stdin)
	if run.Input != nil {
		stdin = run.Input
	}
	p, err := m.Exec(ctx, id, sandbox.ExecRequest{Cmd: run.Argv, Env: run.Env, Workdir: bullpen.CLIWorkdir,
		Timeout: run.Timeout, Stdin: stdin, KillTree: true})
	if err != nil {
		return nil, err
	}
	return cliProc{p}, nil
}

// cliWorkspace returns the agent's running workspace with the CLI mount
// and the bridge.
func (w *CLIWorkspaces) cliWorkspace(ctx context.Context, agent bullpen.Member, rs bullpen.SandboxSpec) (string, error) {
	sock, err := w.host.Socket(ctx, agent)
	if err != nil {
		return "", err
	}
	mounts := []sandbox.Mount{{HostPath: w.host.Dir, Path: bullpen.CLIMountDir}}
	bridges := []sandbox.Bridge{{Port: bullpen.CLIBridgePort, HostSocket: sock}}
	sp, err := w.specOf(rs)
	if err != nil {
		return "", err
	}
	if sp.MemoryBytes == 0 {
		sp.MemoryBytes = cliMemory
	}
	sp.Pids, sp.Mounts, sp.Bridges = cliPids, mounts, bridges
	in, err := w.s.Ensure(ctx, agent, sp)
	if err != nil {
		return "", err
	}
	// A workspace keeps the network it was made with: the policy a human
	// approved for the CLI (or none, without approval) is applied here.
	if err := w.s.m.SetNetwork(ctx, in.ID, sp.Network); err != nil {
		return "", err
	}
	if !slices.Equal(in.Mounts, mounts) || !slices.Equal(in.Bridges, bridges) {
		if err := w.s.m.Attach(ctx, in.ID, mounts, bridges); err != nil {
			return "", err
		}
	}
	return in.ID, nil
}

// cliProc adapts a sandbox process.
type cliProc struct{ p *sandbox.Process }

func (c cliProc) Stdout() io.Reader { return c.p.Stdout() }
func (c cliProc) Stderr() io.Reader { return c.p.Stderr() }
func (c cliProc) Close() error      { return c.p.Close() }

// KillStrays kills what the run started and left running, not the run.
func (c cliProc) KillStrays() (int, error) { return c.p.KillStrays() }

func (c cliProc) Wait() (bullpen.CLIExit, error) {
	r, err := c.p.Wait()
	return bullpen.CLIExit{Code: r.Code, Signal: r.Signal, TimedOut: r.TimedOut}, err
}
