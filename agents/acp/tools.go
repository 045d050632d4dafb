package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// mcpPrefix is how the CLIs name Bullpen's MCP tools to the model.
const mcpPrefix = "mcp__" + runtime.MCPServer + "__"

// bullpenTitle finds Bullpen's MCP tool in an agent's title for a call:
// "mcp__bullpen__post_message" (Claude Code), "bullpen/post_message" or
// "Tool: bullpen/post_message" (Codex), "post_message (bullpen MCP
// Server)" (Gemini CLI).
var bullpenTitle = regexp.MustCompile(`(?:^|[\s:])(?:mcp__` + runtime.MCPServer + `__|` + runtime.MCPServer + `[/.])([a-z_]+)\b|^([a-z_]+) \(` + runtime.MCPServer + ` MCP Server\)`)

// toolNameOf names a tool call as Bullpen shows it, and its class:
// Bullpen's own MCP tools as mcp__bullpen__<tool> (the MCP endpoint
// records those), commands, file tools, the rest.
func toolNameOf(meta map[string]any, title string, kind *sdk.ToolKind) (string, runtime.ToolClass) {
	name, named := title, false
	if cc, ok := meta["claudeCode"].(map[string]any); ok {
		if n, ok := cc["toolName"].(string); ok && n != "" {
			name, named = n, true
		}
	}
	if m := bullpenTitle.FindStringSubmatch(name); m != nil {
		return mcpPrefix + m[1] + m[2], runtime.ClassMCP
	}
	// claude-code-acp's own tools routed through the client (fs/*,
	// terminal/*) are mcp__acp__Bash, mcp__acp__Write, …
	name = strings.TrimPrefix(name, "mcp__acp__")
	if name == "" {
		name = "tool"
	}
	if strings.HasPrefix(name, "mcp__") {
		return name, runtime.ClassMCP
	}
	if kind == nil {
		return name, runtime.ClassOther
	}
	switch *kind {
	case sdk.ToolKindExecute:
		if !named {
			name = "command" // the title is the command line itself
		}
		return name, runtime.ClassCommand
	case sdk.ToolKindRead, sdk.ToolKindEdit, sdk.ToolKindDelete, sdk.ToolKindMove:
		return name, runtime.ClassFile
	}
	return name, runtime.ClassOther
}

// rawInput is a call's arguments as JSON.
func rawInput(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// contentText joins a call's text content and diffs.
func contentText(cs []sdk.ToolCallContent) string {
	var parts []string
	for _, c := range cs {
		switch {
		case c.Content != nil && c.Content.Content.Text != nil:
			parts = append(parts, c.Content.Content.Text.Text)
		case c.Diff != nil:
			parts = append(parts, "wrote "+c.Diff.Path)
		}
	}
	return strings.Join(parts, "\n")
}

// terminalOf is the terminal a call's content shows, if any.
func terminalOf(cs []sdk.ToolCallContent) string {
	for _, c := range cs {
		if c.Terminal != nil {
			return c.Terminal.TerminalId
		}
	}
	return ""
}

func jsonOf(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// gated is a reader whose reads wait until open is closed: the SDK's
// connection starts reading at once, and its logger may be set only
// before it does.
type gated struct {
	r    io.Reader
	open chan struct{}
}

func (g gated) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// firstLine keeps the start of the agent's stdout, so that a program
// that is not an ACP agent is named by what it printed.
type firstLine struct {
	mu sync.Mutex
	b  []byte
}

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := 200 - len(f.b); n > 0 {
		f.b = append(f.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// explain adds the agent's first line to err when it is not JSON-RPC.
func (f *firstLine) explain(err error) error {
	f.mu.Lock()
	line, _, _ := strings.Cut(string(f.b), "\n")
	f.mu.Unlock()
	line = strings.TrimSpace(line)
	if err == nil || line == "" || strings.HasPrefix(line, "{") {
		return err
	}
	var be *bullpen.Error
	if errors.As(err, &be) {
		return bullpen.Errorf(be.Code, "%s; its output is not ACP JSON-RPC: %q", be.Message, line)
	}
	return fmt.Errorf("%w; its output is not ACP JSON-RPC: %q", err, line)
}

// discardLogger silences the SDK's own log: what matters reaches the
// turn as events or errors.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
