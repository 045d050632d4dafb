// Package acp drives an agent that speaks the Agent Client Protocol (ACP)
// for one turn: Bullpen is the ACP client, the agent runs inside the
// agent's sandbox and the two talk JSON-RPC over the run's stdin and
// stdout, across the sandbox boundary. The turn is one session:
// initialize, session/new (cwd the workspace, Bullpen's MCP server with
// the turn token), session/prompt with the work packet. The agent's
// session/update notifications become runtime events (tool calls, text
// deltas, the final answer); its session/request_permission is answered by
// the role's policy; its fs/* and terminal/* requests are served inside
// the sandbox, as the sandbox user, by commands the Sandbox starts.
//
// The package knows nothing of the office: package agents runs the turn
// and turns the events into Bullpen's.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// Sandbox starts a command in the agent's sandbox as its user, its whole
// process tree killed by Close or when ctx ends (package agents hands its
// CLI runner over).
type Sandbox interface {
	Start(ctx context.Context, run bullpen.CLIRun) (bullpen.CLIProcess, error)
}

// Permit decides a permission request of the agent: true allows the tool
// call once. Nil allows every call (the sandbox is the boundary).
type Permit func(ctx context.Context, p Permission) (bool, string)

// Permission is what the agent asks to do.
type Permission struct {
	Tool  string       // the tool's name as the agent calls it
	Kind  sdk.ToolKind // read, edit, execute, fetch, …
	Input string       // its arguments, as JSON
}

// Turn is one turn's session.
type Turn struct {
	Cwd    string // the workspace inside the sandbox
	Prompt string // the office brief and work packet
	// MCPURL is Bullpen's MCP endpoint as the agent reaches it; Token
	// goes in its Authorization header.
	MCPURL, Token string
	Sandbox       Sandbox
	Permit        Permit
	Emit          func(runtime.Event)
}

// clientName is how Bullpen introduces itself in initialize.
const clientName = "bullpen"

// initTimeout bounds the agent's start, up to its answer to initialize:
// a program that is not an ACP agent (lines on stdout that are not
// JSON-RPC are skipped) fails then, not at the turn's deadline.
const initTimeout = 2 * time.Minute

// Run drives one turn over the agent's stdin and stdout and returns when
// the prompt ended, after the final event was emitted; stdin is closed
// (the agent exits at EOF). An agent that dies, answers out of protocol or
// fails a request ends it with an error naming what failed.
func Run(ctx context.Context, stdin io.WriteCloser, stdout io.Reader, t Turn) error {
	defer stdin.Close()
	var emitMu sync.Mutex // updates and the run's own events, one at a time
	emit := t.Emit
	t.Emit = func(ev runtime.Event) { emitMu.Lock(); defer emitMu.Unlock(); emit(ev) }
	c := &client{t: t, tools: map[sdk.ToolCallId]*toolCall{}, terms: newTerminals(t.Sandbox)}
	defer c.terms.closeAll()
	open := make(chan struct{})
	head := &firstLine{}
	conn := sdk.NewClientSideConnection(c, stdin, gated{io.TeeReader(stdout, head), open})
	conn.SetLogger(discardLogger())
	close(open)
	// A write to an agent that is gone fails rather than blocks.
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-conn.Done():
			_ = stdin.Close()
		case <-ended:
		}
	}()
	ictx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	init, err := conn.Initialize(ictx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo: &sdk.Implementation{Name: clientName, Version: "1"},
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
			Terminal: true}})
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", initTimeout)
	}
	if err != nil {
		return head.explain(failed("initialize", err))
	}
	mcp := []sdk.McpServer{}
	if t.MCPURL != "" {
		if !init.AgentCapabilities.McpCapabilities.Http {
			return bullpen.Errorf(bullpen.EUNAVAILABLE, "acp: the agent cannot reach MCP servers over HTTP (its initialize offers no mcpCapabilities.http), so it cannot reach the office")
		}
		mcp = append(mcp, sdk.McpServer{Http: &sdk.McpServerHttpInline{Type: "http", Name: runtime.MCPServer, Url: t.MCPURL,
			Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer " + t.Token}}}})
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: t.Cwd, McpServers: mcp})
	if err != nil {
		return head.explain(failed("session/new", err))
	}
	t.Emit(runtime.Event{Kind: runtime.KindSession, Session: string(sess.SessionId)})
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(t.Prompt)}})
	if err != nil {
		return head.explain(failed("session/prompt", err))
	}
	c.final(res.StopReason)
	return nil
}

// failed words a request that did not succeed.
func failed(method string, err error) error {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return bullpen.Errorf(bullpen.EUNAVAILABLE, "acp: the agent answered %s with error %d: %s", method, re.Code, clip(re.Message, 300))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("acp: %s: %w", method, err)
	}
	return bullpen.Errorf(bullpen.EUNAVAILABLE, "acp: %s: the agent ended the connection (%v)", method, err)
}

// client is Bullpen's side of the connection.
type client struct {
	t     Turn
	mu    sync.Mutex
	text  strings.Builder // the agent's message since its last tool call
	tools map[sdk.ToolCallId]*toolCall
	terms *terminals
}

// toolCall is a call the agent started and has not ended. Its start is
// emitted once its arguments are known (agents that stream the model's
// call report it before its input): with an update that carries them,
// when it runs, or with its end.
type toolCall struct {
	name, terminal string
	title          string
	class          runtime.ToolClass
	input          any
	started        bool
}

// final emits the run's end: the last message is the answer; a refusal
// or a cancelled prompt is a failed run.
func (c *client) final(stop sdk.StopReason) {
	c.mu.Lock()
	text := strings.TrimSpace(c.text.String())
	c.mu.Unlock()
	ev := runtime.Event{Kind: runtime.KindFinal, Text: text}
	switch stop {
	case sdk.StopReasonRefusal, sdk.StopReasonCancelled:
		ev.IsError = true
		ev.Text = fmt.Sprintf("the agent stopped its turn (%s)", stop)
		if text != "" {
			ev.Text += ": " + clip(text, 400)
		}
	}
	c.t.Emit(ev)
}

// RequestPermission follows the turn's policy: the first option of the
// kind decided (allow or reject, once before always).
func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	name, _ := toolNameOf(p.ToolCall.Meta, deref(p.ToolCall.Title), nil)
	perm := Permission{Tool: name, Input: jsonOf(p.ToolCall.RawInput)}
	if p.ToolCall.Kind != nil {
		perm.Kind = *p.ToolCall.Kind
	}
	allow := true
	if c.t.Permit != nil {
		allow, _ = c.t.Permit(ctx, perm)
	}
	want := []sdk.PermissionOptionKind{sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways}
	if allow {
		want = []sdk.PermissionOptionKind{sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways}
	}
	if allow {
		c.permitted(ctx, p.ToolCall)
	}
	for _, k := range want {
		for _, o := range p.Options {
			if o.Kind == k {
				return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
			}
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
}

// permitted notes an allowed call as running: an agent may ask before
// it reports the call (Gemini CLI reports a call it asked for only when
// it ends). A request is handled as it arrives, maybe before the
// agent's notifications sent ahead of it, so the answer's text is not
// reset here but at the call's end, a notification in order.
func (c *client) permitted(ctx context.Context, tc sdk.ToolCallUpdate) {
	kind := sdk.ToolKindOther
	if tc.Kind != nil {
		kind = *tc.Kind
	}
	c.begin(tc.ToolCallId, tc.Meta, deref(tc.Title), kind, tc.RawInput, tc.Content, false)
	running := sdk.ToolCallStatusInProgress
	c.progress(ctx, tc.ToolCallId, tc.RawInput, &running, tc.Content, nil)
}

// SessionUpdate turns the agent's progress into events.
func (c *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		if tb := u.AgentMessageChunk.Content.Text; tb != nil && tb.Text != "" {
			c.mu.Lock()
			c.text.WriteString(tb.Text)
			c.mu.Unlock()
			c.t.Emit(runtime.Event{Kind: runtime.KindDelta, Text: tb.Text})
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		c.begin(tc.ToolCallId, tc.Meta, tc.Title, tc.Kind, tc.RawInput, tc.Content, true)
		c.progress(ctx, tc.ToolCallId, tc.RawInput, &tc.Status, tc.Content, tc.RawOutput) // reported again: its input may be whole now
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		c.progress(ctx, tu.ToolCallId, tu.RawInput, tu.Status, tu.Content, tu.RawOutput)
	}
	return nil
}

// begin notes a tool call the agent reported; a call reported twice is
// one call. reset starts the answer anew: it is the message after the
// last call.
func (c *client) begin(id sdk.ToolCallId, meta map[string]any, title string, kind sdk.ToolKind, input any, content []sdk.ToolCallContent, reset bool) {
	name, class := toolNameOf(meta, title, &kind)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tools[id]; ok {
		return
	}
	c.tools[id] = &toolCall{name: name, title: title, class: class, input: input, terminal: terminalOf(content)}
	if reset {
		c.text.Reset()
	}
}

// progress takes an update of a call: new arguments, a terminal, its
// running or its end.
func (c *client) progress(ctx context.Context, id sdk.ToolCallId, input any, status *sdk.ToolCallStatus, content []sdk.ToolCallContent, raw any) {
	c.mu.Lock()
	tc := c.tools[id]
	if tc == nil {
		c.mu.Unlock()
		return
	}
	if tc.terminal == "" {
		tc.terminal = terminalOf(content)
	}
	if !empty(input) {
		tc.input = input
	}
	st := sdk.ToolCallStatus("")
	if status != nil {
		st = *status
	}
	start := !tc.started && (!empty(tc.input) || st != "" && st != sdk.ToolCallStatusPending)
	tc.started = tc.started || start
	in := tc.input
	c.mu.Unlock()
	if start {
		if empty(in) {
			in = titleInput(tc)
		}
		c.t.Emit(runtime.Event{Kind: runtime.KindToolStart, CallID: string(id), Tool: tc.name, Class: tc.class, Input: rawInput(in)})
	}
	if st == sdk.ToolCallStatusCompleted || st == sdk.ToolCallStatusFailed {
		c.end(ctx, id, st == sdk.ToolCallStatusFailed, content, raw)
	}
}

// titleInput stands for the arguments of a call that runs without them
// (Gemini CLI sends none): its title, which for a command is the command
// line.
func titleInput(tc *toolCall) any {
	switch {
	case tc.title == "":
		return nil
	case tc.class == runtime.ClassCommand:
		return map[string]any{"command": tc.title}
	}
	return map[string]any{"title": tc.title}
}

// empty reports whether a call's arguments are not known yet.
func empty(v any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// end emits a tool call's end with its output: its text content, else
// its terminal's output, else its raw output.
func (c *client) end(ctx context.Context, id sdk.ToolCallId, isErr bool, content []sdk.ToolCallContent, raw any) {
	c.mu.Lock()
	tc, ok := c.tools[id]
	delete(c.tools, id)
	if ok {
		c.text.Reset() // the answer is the message after the last call
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	out := contentText(content)
	if out == "" && tc.terminal != "" {
		out = c.terms.output(tc.terminal)
	}
	if out == "" && raw != nil {
		out = jsonOf(raw)
	}
	c.t.Emit(runtime.Event{Kind: runtime.KindToolEnd, CallID: string(id), Output: out, IsError: isErr})
}
