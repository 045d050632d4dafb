// Package runtime describes the agent CLIs Bullpen can run as an agent's
// brain (role runtime claude-code, codex, opencode): for each one, how to
// install it (an npm package at a pinned version), how to invoke it for one
// non-interactive turn inside the agent's sandbox (argv and env: the work
// packet on stdin, the office brief appended to the CLI's own system
// prompt, Bullpen's MCP endpoint and model gateway through the sandbox's
// bridged loopback ports, a per-turn token, a per-agent HOME in the
// persistent workspace), and how to parse its JSON output stream into
// events. Each CLI is one small file; this file holds what they share.
//
// The package knows nothing of the office: package agents runs the turn
// (agents/cliturn.go) and turns the events into Bullpen events.
package runtime

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// Runtime is one agent CLI.
type Runtime interface {
	// Name is the role's runtime value (bullpen.RuntimeClaudeCode, …).
	Name() string
	// Install says which npm package and version to install and where its
	// executable is inside the install.
	Install() Install
	// Command returns the invocation of one turn; the prompt goes on stdin.
	Command(t Turn) Invocation
	// NewParser returns a parser for one run's stdout.
	NewParser() Parser
	// Resumable reports whether the CLI can continue its own session
	// (role resume: true).
	Resumable() bool
}

// Parser reads a CLI's JSON stream, one line at a time.
type Parser interface {
	// Line parses one line of stdout. A line that is not the CLI's JSON is
	// an error (the CLI is broken or not the one expected).
	Line(line []byte) ([]Event, error)
	// End is called at EOF; it fails when the stream ended without the
	// CLI's final result.
	End() error
}

// Turn is what one CLI run needs, as seen from inside the sandbox.
type Turn struct {
	CLIDir  string // where the install is mounted, e.g. /opt/bullpen/clis/<Install.Dir()>
	Workdir string // the agent's persistent workspace (the CLI's cwd)
	Home    string // the agent's CLI state (HOME; CODEX_HOME below it)
	Model   string // "" lets the CLI pick
	// Provider is the gateway protocol a CLI that speaks several uses:
	// "anthropic" (default) or "openai".
	Provider string
	Brief    string // the office brief, appended to the CLI's system prompt
	// GatewayURL is the model gateway's root (http://127.0.0.1:PORT);
	// each CLI appends its protocol's prefix (/anthropic, /openai/v1).
	GatewayURL string
	// MCPURL is Bullpen's MCP endpoint (http://127.0.0.1:PORT/mcp); ""
	// runs the CLI without it (a bare run, the benchmark's reference).
	MCPURL  string
	Token   string // the per-turn token, for the gateway and MCP
	Session string // the CLI session to resume; "" starts a fresh one
	// Keep stores the session for a later resume (role resume: true);
	// otherwise the CLI is told not to keep it, where it can be.
	Keep     bool
	MaxTurns int // model calls the CLI may make (0: the CLI's default)
}

// Invocation is argv and env of one run.
type Invocation struct {
	Argv []string
	Env  map[string]string
	// PromptPrefix goes before the work packet on stdin, for a CLI that
	// has no way to append to its system prompt from the command line.
	PromptPrefix string
	// Dirs must exist before the run (the caller makes them, as the
	// sandbox user).
	Dirs []string
}

// Install is where a CLI comes from.
type Install struct {
	Package string // npm package, e.g. @anthropic-ai/claude-code
	Version string // pinned version
	Bin     string // the executable, relative to the install directory
	// Files are written into the install directory after npm installed the
	// package (path relative to it → content): what the CLI would
	// otherwise make or fetch at each start. scripts/clis.sh writes the
	// same.
	Files map[string]string
}

// Dir is the install's directory name under the CLIs directory:
// <package>@<version> with "/" replaced by "+" (scripts/clis.sh agrees).
func (i Install) Dir() string {
	return strings.ReplaceAll(i.Package, "/", "+") + "@" + i.Version
}

// Spec is the npm install argument, package@version.
func (i Install) Spec() string { return i.Package + "@" + i.Version }

// EventKind says what an Event is.
type EventKind string

// Event kinds.
const (
	KindSession   EventKind = "session"    // the CLI's session id
	KindToolStart EventKind = "tool_start" // the CLI runs a tool
	KindToolEnd   EventKind = "tool_end"   // its result
	KindDelta     EventKind = "delta"      // text as it streams (ephemeral)
	KindText      EventKind = "text"       // a whole assistant message
	KindFinal     EventKind = "final"      // the run's end; Text is the final answer
)

// ToolClass groups the CLIs' tools the way Bullpen shows them.
type ToolClass string

// Tool classes.
const (
	ClassCommand ToolClass = "command" // a shell command
	ClassFile    ToolClass = "file"    // files read, written or changed
	ClassMCP     ToolClass = "mcp"     // an MCP call (Bullpen's tools: the MCP endpoint records those itself)
	ClassOther   ToolClass = "other"
)

// Event is one thing the CLI did.
type Event struct {
	Kind    EventKind
	CallID  string          // tool events: the CLI's id of the call
	Tool    string          // tool events: the CLI's name (Bash, command, mcp__bullpen__post_message)
	Class   ToolClass       // tool events
	Input   json.RawMessage // tool start: the arguments (a command: {"command": …})
	Output  string          // tool end: the result
	IsError bool            // tool end: the tool failed; final: the run failed
	Text    string          // delta, text, final
	Session string          // session
	// Took is how long a tool ran (tool end), when the CLI says; 0 when
	// it does not, and the time between start and end events counts.
	Took time.Duration
}

// MCPServer is the name the CLIs know Bullpen's MCP server by; its tools
// are mcp__bullpen__<tool> to the model.
const MCPServer = "bullpen"

// All returns every runtime, in the order the hire form lists them.
func All() []Runtime { return []Runtime{ClaudeCode{}, Codex{}, OpenCode{}} }

// Installs returns every runtime that installs from npm: the CLIs and the
// ACP agents that ship ready.
func Installs() []Runtime {
	out := All()
	for _, a := range ACPAgents() {
		out = append(out, ACP{Agent: a})
	}
	return out
}

// ForRole returns the runtime of a role's runtime and command (runtime
// acp runs the command's agent).
func ForRole(name, command string) (Runtime, error) {
	if name == bullpen.RuntimeACP {
		return ParseACP(command)
	}
	return Get(name)
}

// Get returns the runtime named name; builtin and unknown names are an
// EINVALID error naming the choices (acp needs its command: ForRole).
func Get(name string) (Runtime, error) {
	for _, r := range All() {
		if r.Name() == name {
			return r, nil
		}
	}
	return nil, bullpen.Errorf(bullpen.EINVALID, "unknown runtime %q: use %s", name, strings.Join(Names(), ", "))
}

// Names lists the valid role runtimes, builtin first.
func Names() []string {
	out := []string{bullpen.RuntimeBuiltin}
	for _, r := range All() {
		out = append(out, r.Name())
	}
	return append(out, bullpen.RuntimeACP)
}

// Valid reports whether name is a runtime a role may name ("" is builtin).
func Valid(name string) bool { return name == "" || slices.Contains(Names(), name) }

// garbage is the error for a line that is not the CLI's JSON stream.
func garbage(cli string, line []byte) error {
	s := string(line)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return bullpen.Errorf(bullpen.EUNAVAILABLE, "%s printed output that is not its JSON event stream: %q", cli, s)
}

// noResult is the error for a stream that ended without the final event.
func noResult(cli string) error {
	return bullpen.Errorf(bullpen.EUNAVAILABLE, "%s ended without a final result", cli)
}

// jsonString quotes s as a JSON (and TOML basic) string, without HTML
// escaping.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// commandInput is the arguments of a command tool event.
func commandInput(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}
