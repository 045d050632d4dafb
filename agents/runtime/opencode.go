package runtime

import (
	_ "embed"
	"encoding/json"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// OpenCode is sst's opencode (`opencode run --format json`).
type OpenCode struct{}

// Name implements Runtime.
func (OpenCode) Name() string { return bullpen.RuntimeOpenCode }

// openCodeConfigDir is opencode's global config directory (under
// XDG_CONFIG_HOME) inside the install: read-only in the sandbox. At each
// start opencode installs its plugin package (@opencode-ai/plugin) with
// npm into every config directory it can write to; a directory it cannot
// write to it leaves alone. With the config in HOME (writable) every
// run tried that install, which in a sandbox without network costs tens
// of seconds. The .gitignore is the file opencode writes there when it is
// missing (it would fail on a read-only directory otherwise).
const openCodeConfigDir = "xdg/opencode"

// openCodeAttach is Bullpen's client of a running opencode server
// (opencode/attach.mjs, run by opencode's binary as Bun), installed with
// the CLI: opencode's own `run --attach` exits as soon as its prompt call
// returns, before the last step's events reach it, so its stream lacks
// the final answer.
//
//go:embed opencode/attach.mjs
var openCodeAttach string

// openCodeAttachFile is where the install holds openCodeAttach.
const openCodeAttachFile = "bullpen/attach.mjs"

// Install implements Runtime.
func (OpenCode) Install() Install {
	return Install{Package: "opencode-ai", Version: "1.18.33", Bin: "node_modules/.bin/opencode",
		Files: map[string]string{openCodeConfigDir + "/.gitignore": "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore",
			openCodeAttachFile: openCodeAttach}}
}

// Resumable implements Runtime: --session continues a session.
func (OpenCode) Resumable() bool { return true }

// Command implements Runtime. opencode reads its whole configuration
// (provider, MCP server, permissions) from OPENCODE_CONFIG_CONTENT; its
// config takes instruction files, not text, so the brief goes before the
// work packet instead of into the system prompt. Its global config
// directory is the read-only one in the install (see openCodeConfigDir);
// the title agent is off (it made a side request to a small model before
// the real one), and so are git snapshots of the workspace at each step,
// the file finder's index and the file watcher (each walks the whole
// workspace, CLI homes included), Claude Code and external skill
// discovery, the default plugins (provider sign-ins), the models
// catalogue fetch, LSP downloads, sharing and updates.
func (o OpenCode) Command(t Turn) Invocation {
	argv := []string{t.CLIDir + "/" + o.Install().Bin, "run", "--format", "json"}
	if t.Session != "" {
		argv = append(argv, "--session", t.Session)
	}
	inv := Invocation{Argv: argv, Env: o.env(t, map[string]string{"OPENCODE_CONFIG_CONTENT": o.config(t)})}
	if t.Brief != "" {
		inv.PromptPrefix = t.Brief + "\n\n"
	}
	return inv
}

// ServeCommand implements Server: `opencode serve` on the sandbox's
// loopback, behind basic auth, with the same configuration a run gets.
func (o OpenCode) ServeCommand(t Turn, port int, password string) Invocation {
	argv := []string{t.CLIDir + "/" + o.Install().Bin, "serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port)}
	return Invocation{Argv: argv, Env: o.env(t, map[string]string{"OPENCODE_CONFIG_CONTENT": o.config(t),
		"OPENCODE_SERVER_PASSWORD": password})}
}

// Ready implements Server: the line opencode prints once it listens.
func (OpenCode) Ready(line string) bool {
	return strings.Contains(line, "server listening on http://")
}

// AttachCommand implements Server: Bullpen's attach client, run by
// opencode's binary as Bun (a tenth of a second, against about one for
// `opencode run --attach`); it prints the stream `opencode run --format
// json` prints. The model calls, tools and MCP client are the server's.
func (o OpenCode) AttachCommand(t Turn, url, password string) Invocation {
	inv := Invocation{Argv: []string{t.CLIDir + "/" + o.Install().Bin, t.CLIDir + "/" + openCodeAttachFile},
		Env: map[string]string{"HOME": t.Home, "BUN_BE_BUN": "1", "OC_URL": url, "OC_PASSWORD": password, "OC_SESSION": t.Session}}
	if t.Brief != "" {
		inv.PromptPrefix = t.Brief + "\n\n"
	}
	return inv
}

// config is opencode's whole configuration for t (provider, MCP server,
// permissions), as OPENCODE_CONFIG_CONTENT.
func (OpenCode) config(t Turn) string {
	kind, base := "anthropic", t.GatewayURL+"/anthropic/v1"
	if t.Provider == "openai" {
		kind, base = "openai", t.GatewayURL+"/openai/v1"
	}
	model := t.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	cfg := map[string]any{
		"model":      kind + "/" + model,
		"provider":   map[string]any{kind: map[string]any{"options": map[string]any{"baseURL": base, "apiKey": t.Token}}},
		"permission": map[string]any{"bash": "allow", "edit": "allow", "webfetch": "deny"},
		"agent":      map[string]any{"title": map[string]any{"disable": true}},
		"autoupdate": false, "share": "disabled", "snapshot": false,
	}
	if t.MCPURL != "" {
		cfg["mcp"] = map[string]any{MCPServer: map[string]any{"type": "remote", "url": t.MCPURL,
			"headers": map[string]string{"Authorization": "Bearer " + t.Token}}}
	}
	content, _ := json.Marshal(cfg)
	return string(content)
}

// env is the environment of every opencode process, plus extra.
func (o OpenCode) env(t Turn, extra map[string]string) map[string]string {
	env := map[string]string{"HOME": t.Home,
		"XDG_CONFIG_HOME":             t.CLIDir + "/" + path.Dir(openCodeConfigDir),
		"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "true", "OPENCODE_DISABLE_MODELS_FETCH": "true",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_FFF": "1",
		"OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1", "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// NewParser implements Runtime.
func (OpenCode) NewParser() Parser { return &openCodeParser{} }

type openCodeParser struct {
	session string
	last    string
	done    bool
}

type openCodeLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      struct {
		Tool   string `json:"tool"`
		CallID string `json:"callID"`
		Text   string `json:"text"`
		Reason string `json:"reason"`
		State  struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Output string          `json:"output"`
			Error  string          `json:"error"`
			Time   struct {
				Start int64 `json:"start"` // Unix ms
				End   int64 `json:"end"`
			} `json:"time"`
		} `json:"state"`
	} `json:"part"`
	Error json.RawMessage `json:"error"`
}

func (p *openCodeParser) Line(line []byte) ([]Event, error) {
	var l openCodeLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		return nil, garbage("opencode", line)
	}
	var out []Event
	if l.SessionID != "" && p.session == "" {
		p.session = l.SessionID
		out = append(out, Event{Kind: KindSession, Session: l.SessionID})
	}
	switch l.Type {
	case "text":
		p.last = l.Part.Text
		out = append(out, Event{Kind: KindDelta, Text: l.Part.Text}, Event{Kind: KindText, Text: l.Part.Text})
	case "tool_use":
		out = append(out, openCodeTool(l)...)
	case "step_finish":
		if l.Part.Reason != "tool-calls" {
			p.done = true
			out = append(out, Event{Kind: KindFinal, Text: p.last})
		}
	case "error":
		p.done = true
		out = append(out, Event{Kind: KindFinal, IsError: true, Text: "opencode: " + errorText(l.Error)})
	}
	return out, nil
}

// openCodeTool reports a finished tool part as its start and its end.
func openCodeTool(l openCodeLine) []Event {
	name, class := l.Part.Tool, ClassOther
	switch name {
	case "bash":
		class = ClassCommand
	case "read", "write", "edit", "glob", "grep", "patch":
		class = ClassFile
	default:
		if len(name) > len(MCPServer)+1 && name[:len(MCPServer)+1] == MCPServer+"_" {
			name, class = "mcp__"+MCPServer+"__"+name[len(MCPServer)+1:], ClassMCP
		}
	}
	st := l.Part.State
	end := Event{Kind: KindToolEnd, CallID: l.Part.CallID, Tool: name, Class: class, Output: st.Output,
		IsError: st.Status == "error"}
	if st.Error != "" {
		end.Output = st.Error
	}
	// opencode reports a tool part once, finished: its own times are the
	// only measure of how long the tool ran.
	if st.Time.Start > 0 && st.Time.End >= st.Time.Start {
		end.Took = time.Duration(st.Time.End-st.Time.Start) * time.Millisecond
	}
	return []Event{{Kind: KindToolStart, CallID: l.Part.CallID, Tool: name, Class: class, Input: st.Input}, end}
}

func errorText(raw json.RawMessage) string {
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return string(raw)
	}
	for _, s := range []string{e.Data.Message, e.Message, e.Name} {
		if s != "" {
			return s
		}
	}
	return string(raw)
}

func (p *openCodeParser) End() error {
	if !p.done {
		return noResult("opencode")
	}
	return nil
}
