package agents

import (
	"context"
	"io"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// CLISandboxes runs agent CLIs in the agents' own sandboxes: the sandbox
// is created or started with the installed CLIs mounted read-only and the
// bridge to Bullpen, and the run is one exec as the sandbox user whose
// whole process tree dies with it. Package sandboxes provides it
// (Workspaces.WithCLIs); nil makes CLI roles fail with a notice.
type CLISandboxes interface {
	// EnsureCLI installs the runtime's CLI unless it is installed.
	EnsureCLI(ctx context.Context, rt runtime.Runtime) error
	// RunCLI starts one run in the agent's sandbox.
	RunCLI(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, run CLIRun) (CLIProcess, error)
}

// CLIRun is one CLI run.
type CLIRun struct {
	Runtime runtime.Runtime
	Argv    []string
	Env     map[string]string
	Dirs    []string // made (as the sandbox user) before the run
	Stdin   string
	Timeout time.Duration // the turn's deadline: the tree is killed then
}

// CLIProcess is a running CLI.
type CLIProcess interface {
	Stdout() io.Reader
	Stderr() io.Reader
	// Wait returns how the run ended, once no process of it is left.
	Wait() (CLIExit, error)
	// Close kills the run (its whole tree) if it still runs.
	Close() error
}

// CLIExit is how a CLI run ended.
type CLIExit struct {
	Code     int
	Signal   string
	TimedOut bool
}

// TurnTokens issues the short-lived credential of one CLI turn, which the
// CLI uses for the MCP endpoint and the model gateway. *office.Office
// provides it.
type TurnTokens interface {
	MintTurnToken(ctx context.Context, agentMemberID, turnID int64, ttl time.Duration) (string, error)
	RevokeTurnTokens(ctx context.Context, turnID int64) error
}

// Where a sandbox reaches Bullpen and keeps a CLI's files. The sandboxes
// package mounts and bridges them there.
const (
	// CLIMountDir holds the installed CLIs inside every sandbox that runs
	// one (read-only).
	CLIMountDir = "/opt/bullpen/clis"
	// CLIBridgePort is the sandbox loopback port bridged to the agent's
	// host socket, which serves /mcp and the gateway.
	CLIBridgePort = 4100
	// CLIWorkdir is the agent's persistent workspace: its sandbox home.
	CLIWorkdir = "/home/sandbox"
	// CLIHomes holds each runtime's state (HOME), one directory per CLI.
	CLIHomes = "/home/sandbox/.bullpen"
)
