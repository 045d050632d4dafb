package runtime

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// ClaudeCode is Anthropic's Claude Code (`claude --print`, stream-json).
type ClaudeCode struct{}

// claudeTools are the built-in tools a Claude Code turn gets: shell and
// files. Web tools stay off (the sandbox has no network by default) and
// so do sub-agents, which would multiply the prompt.
const claudeTools = "Bash,Read,Write,Edit,Glob,Grep"

// Name implements Runtime.
func (ClaudeCode) Name() string { return bullpen.RuntimeClaudeCode }

// Install implements Runtime.
func (ClaudeCode) Install() Install {
	return Install{Package: "@anthropic-ai/claude-code", Version: "2.1.328", Bin: "node_modules/.bin/claude"}
}

// Resumable implements Runtime: --resume continues a stored session.
func (ClaudeCode) Resumable() bool { return true }

// Command implements Runtime. The prompt is read from stdin (--print
// with no prompt argument). --bare is not used: it limits Claude Code to
// Bash, Read and Edit whatever --tools says. What --bare kept out is kept
// out one by one instead: settings come only from the agent's own HOME
// (--setting-sources user: no project hooks), no CLAUDE.md discovery and
// no auto-memory, no background traffic; the lean system prompt
// (CLAUDE_CODE_SIMPLE_SYSTEM_PROMPT) keeps Claude Code's own share of
// each request small. Permission mode dontAsk with an allow-list runs the
// allowed tools without prompting (Claude Code refuses
// --dangerously-skip-permissions as root, and the sandbox is the boundary
// anyway).
func (c ClaudeCode) Command(t Turn) Invocation {
	argv := []string{t.CLIDir + "/" + c.Install().Bin, "--print",
		"--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--setting-sources", "user", "--permission-mode", "dontAsk", "--tools", claudeTools}
	if t.MCPURL != "" {
		mcp, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{MCPServer: map[string]any{
			"type": "http", "url": t.MCPURL, "headers": map[string]string{"Authorization": "Bearer " + t.Token}}}})
		argv = append(argv, "--allowedTools", claudeTools+",mcp__"+MCPServer+"__*", "--mcp-config", string(mcp))
	} else {
		argv = append(argv, "--allowedTools", claudeTools)
	}
	argv = append(argv, "--strict-mcp-config")
	if t.Brief != "" {
		argv = append(argv, "--append-system-prompt", t.Brief)
	}
	if t.Model != "" {
		argv = append(argv, "--model", t.Model)
	}
	if t.MaxTurns > 0 {
		argv = append(argv, "--max-turns", strconv.Itoa(t.MaxTurns))
	}
	if t.Session != "" {
		argv = append(argv, "--resume", t.Session)
	}
	if !t.Keep {
		argv = append(argv, "--no-session-persistence")
	}
	return Invocation{Argv: argv, Env: map[string]string{
		"HOME": t.Home, "ANTHROPIC_BASE_URL": t.GatewayURL + "/anthropic", "ANTHROPIC_API_KEY": t.Token,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
		"DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
		"CLAUDE_CODE_SIMPLE_SYSTEM_PROMPT": "1", "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
		"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}
}

// NewParser implements Runtime.
func (ClaudeCode) NewParser() Parser { return &claudeParser{} }

type claudeParser struct{ done bool }

// claudeLine is the union of the stream-json lines Bullpen reads.
type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// Event is an API stream event for type stream_event
	// (--include-partial-messages); other types use the key differently.
	Event   json.RawMessage `json:"event"`
	Result  string          `json:"result"`
	IsError bool            `json:"is_error"`
	Errors  []any           `json:"errors"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (p *claudeParser) Line(line []byte) ([]Event, error) {
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		return nil, garbage("claude-code", line)
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" && l.SessionID != "" {
			return []Event{{Kind: KindSession, Session: l.SessionID}}, nil
		}
	case "stream_event":
		var ev struct {
			Type  string `json:"type"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if json.Unmarshal(l.Event, &ev) == nil && ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			return []Event{{Kind: KindDelta, Text: ev.Delta.Text}}, nil
		}
	case "assistant", "user":
		return claudeBlocks(l.Message.Content), nil
	case "result":
		p.done = true
		ev := Event{Kind: KindFinal, Text: l.Result, IsError: l.IsError || l.Subtype != "success"}
		if ev.IsError && ev.Text == "" {
			ev.Text = "claude-code stopped: " + strings.TrimPrefix(l.Subtype, "error_")
		}
		return []Event{ev}, nil
	}
	return nil, nil
}

func (p *claudeParser) End() error {
	if !p.done {
		return noResult("claude-code")
	}
	return nil
}

// claudeBlocks maps the content blocks of an assistant or user message.
func claudeBlocks(raw json.RawMessage) []Event {
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []Event
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text != "" {
				out = append(out, Event{Kind: KindText, Text: b.Text})
			}
		case "tool_use":
			out = append(out, Event{Kind: KindToolStart, CallID: b.ID, Tool: b.Name, Class: claudeClass(b.Name), Input: b.Input})
		case "tool_result":
			out = append(out, Event{Kind: KindToolEnd, CallID: b.ToolUseID, Output: contentText(b.Content), IsError: b.IsError})
		}
	}
	return out
}

func claudeClass(tool string) ToolClass {
	switch {
	case tool == "Bash":
		return ClassCommand
	case tool == "Write" || tool == "Edit" || tool == "Read" || tool == "Glob" || tool == "Grep" || tool == "NotebookEdit":
		return ClassFile
	case strings.HasPrefix(tool, "mcp__"):
		return ClassMCP
	}
	return ClassOther
}

// contentText flattens a string or an array of {type: text} parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n")
}
