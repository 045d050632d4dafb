package bullpen

import (
	"io"
	"time"
)

// WorkspaceExec is one command for an agent's sandbox (its workspace).
type WorkspaceExec struct {
	Command string // run by /bin/sh -c
	// Timeout kills the command after it; 0 means none but ctx (the
	// sandbox_exec tool always sets one: 120s unless the model asks for
	// 1-600s).
	Timeout time.Duration
	// There is no per-command network switch: a command has the network
	// of the role's sandbox, and with any network at all every command
	// needs a human's approval.
}

// WorkspaceResult is how a command in an agent's workspace ended.
type WorkspaceResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated,omitempty"` // output was cut to its head and tail
}

// FileEntry is one entry of a directory listing in an agent's workspace.
type FileEntry struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	Dir  bool   `json:"dir,omitempty"`
}

// CLIRun is one run of an agent CLI in the agent's workspace.
type CLIRun struct {
	Argv  []string
	Env   map[string]string
	Dirs  []string // made (as the sandbox user) before the run
	Stdin string
	// Input, when set, is the run's stdin instead of Stdin, read as the
	// run goes (a protocol spoken over stdio, ACP); closing it closes
	// the run's stdin.
	Input   io.Reader
	Timeout time.Duration // the turn's deadline: the tree is killed then
}

// CLIProcess is a running agent CLI.
type CLIProcess interface {
	Stdout() io.Reader
	Stderr() io.Reader
	// Wait returns how the run ended, once no process of it is left;
	// it may be called again and returns the same.
	Wait() (CLIExit, error)
	// Close kills the run (its whole tree) if it still runs.
	Close() error
}

// CLIExit is how an agent CLI run ended.
type CLIExit struct {
	Code     int
	Signal   string
	TimedOut bool
}

// Where an agent's sandbox reaches Bullpen and keeps a CLI's files: the
// sandboxes package mounts and bridges them there, the agents' CLI turns
// point the CLIs at them.
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

// ImageRef names a sandbox image two ways: its ID (the digest of its
// config) and the name a create starts from.
type ImageRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}
