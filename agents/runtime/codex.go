package runtime

import (
	"encoding/json"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// Codex is OpenAI's Codex CLI (`codex exec --json`).
type Codex struct{}

// codexTokenEnv carries the per-turn token to Codex's model provider and
// its MCP client (both read it from the environment, not argv).
const codexTokenEnv = "BULLPEN_TURN_TOKEN"

// Name implements Runtime.
func (Codex) Name() string { return bullpen.RuntimeCodex }

// Install implements Runtime. The bin is npm's launcher, which runs the
// platform's native binary under the host's Node.
func (Codex) Install() Install {
	return Install{Package: "@openai/codex", Version: "0.169.0", Bin: "node_modules/.bin/codex"}
}

// Resumable implements Runtime: `codex exec resume <id>`.
func (Codex) Resumable() bool { return true }

// Command implements Runtime. Codex's own sandbox (bubblewrap) cannot
// nest in Bullpen's, which is the boundary: danger-full-access turns it
// off, and approval policy never: nobody is there to approve.
func (c Codex) Command(t Turn) Invocation {
	provider := `{name="bullpen",base_url=` + jsonString(t.GatewayURL+"/openai/v1") +
		`,wire_api="responses",env_key="` + codexTokenEnv + `"}`
	argv := []string{t.CLIDir + "/" + c.Install().Bin, "-a", "never", "-s", "danger-full-access", "exec",
		"-C", t.Workdir, "--skip-git-repo-check", "--color", "never", "--json",
		"-c", "model_provider=bullpen", "-c", "model_providers.bullpen=" + provider}
	if t.MCPURL != "" {
		argv = append(argv, "-c", "mcp_servers."+MCPServer+".url="+jsonString(t.MCPURL),
			"-c", "mcp_servers."+MCPServer+".bearer_token_env_var="+jsonString(codexTokenEnv))
	}
	if t.Brief != "" {
		argv = append(argv, "-c", "developer_instructions="+jsonString(t.Brief))
	}
	if t.Model != "" {
		argv = append(argv, "--model", t.Model)
	}
	if !t.Keep {
		argv = append(argv, "--ephemeral")
	}
	if t.Session != "" {
		argv = append(argv, "resume", t.Session, "-")
	} else {
		argv = append(argv, "-")
	}
	return Invocation{Argv: argv, Dirs: []string{t.Home + "/codex"}, Env: map[string]string{
		"HOME": t.Home, "CODEX_HOME": t.Home + "/codex", codexTokenEnv: t.Token}}
}

// NewParser implements Runtime.
func (Codex) NewParser() Parser { return &codexParser{} }

type codexParser struct {
	done bool
	last string // the latest agent message: the final answer
}

type codexLine struct {
	Type     string    `json:"type"`
	ThreadID string    `json:"thread_id"`
	Item     codexItem `json:"item"`
	Error    struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           *struct {
		Content json.RawMessage `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Changes json.RawMessage `json:"changes"`
	Message string          `json:"message"`
}

func (p *codexParser) Line(line []byte) ([]Event, error) {
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		return nil, garbage("codex", line)
	}
	switch l.Type {
	case "thread.started":
		return []Event{{Kind: KindSession, Session: l.ThreadID}}, nil
	case "item.started":
		return codexStart(l.Item), nil
	case "item.completed":
		if l.Item.Type == "agent_message" {
			p.last = l.Item.Text
			return []Event{{Kind: KindDelta, Text: l.Item.Text}, {Kind: KindText, Text: l.Item.Text}}, nil
		}
		return codexEnd(l.Item), nil
	case "turn.completed":
		p.done = true
		return []Event{{Kind: KindFinal, Text: p.last}}, nil
	case "turn.failed":
		p.done = true
		return []Event{{Kind: KindFinal, IsError: true, Text: "codex: " + l.Error.Message}}, nil
	case "error":
		p.done = true
		return []Event{{Kind: KindFinal, IsError: true, Text: "codex: " + l.Message}}, nil
	}
	return nil, nil
}

func (p *codexParser) End() error {
	if !p.done {
		return noResult("codex")
	}
	return nil
}

// codexTool names and classifies a tool item; ok is false for items that
// are not tool calls (reasoning, messages, warnings).
func codexTool(it codexItem) (ev Event, ok bool) {
	ev = Event{CallID: it.ID}
	switch it.Type {
	case "command_execution":
		ev.Tool, ev.Class, ev.Input = "command", ClassCommand, commandInput(it.Command)
	case "mcp_tool_call":
		ev.Tool, ev.Class, ev.Input = "mcp__"+it.Server+"__"+it.Tool, ClassMCP, it.Arguments
	case "file_change":
		ev.Tool, ev.Class, ev.Input = "file_change", ClassFile, it.Changes
	case "web_search":
		ev.Tool, ev.Class = "web_search", ClassOther
	default:
		return ev, false
	}
	return ev, true
}

func codexStart(it codexItem) []Event {
	ev, ok := codexTool(it)
	if !ok {
		return nil
	}
	ev.Kind = KindToolStart
	return []Event{ev}
}

// codexEnd reports a finished tool item; one that never had an
// item.started (file changes) gets its start too.
func codexEnd(it codexItem) []Event {
	ev, ok := codexTool(it)
	if !ok {
		return nil
	}
	start := ev
	start.Kind = KindToolStart
	ev.Kind = KindToolEnd
	ev.Input = nil
	switch it.Type {
	case "command_execution":
		ev.Output = it.AggregatedOutput
		ev.IsError = it.ExitCode == nil || *it.ExitCode != 0
	case "mcp_tool_call":
		if it.Result != nil {
			ev.Output = contentText(it.Result.Content)
		}
		if it.Error != nil {
			ev.Output, ev.IsError = it.Error.Message, true
		}
	default:
		ev.Output = strings.TrimSpace(it.Status)
		ev.IsError = it.Status == "failed"
	}
	if it.Type == "file_change" {
		return []Event{start, ev}
	}
	return []Event{ev}
}
