package acp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// fakeAgent is an ACP agent in Go: prompt scripts what it does in its
// turn with the connection back to the client.
type fakeAgent struct {
	conn     *sdk.AgentSideConnection
	noHTTP   bool // its initialize offers no MCP over HTTP
	prompt   func(ctx context.Context, c *sdk.AgentSideConnection, id sdk.SessionId) (sdk.StopReason, error)
	mu       sync.Mutex
	sessions []sdk.NewSessionRequest
	prompts  []string
}

func (a *fakeAgent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (a *fakeAgent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	r := sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber}
	r.AgentCapabilities.McpCapabilities.Http = !a.noHTTP
	return r, nil
}

func (a *fakeAgent) Cancel(context.Context, sdk.CancelNotification) error { return nil }
func (a *fakeAgent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, nil
}
func (a *fakeAgent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, nil
}
func (a *fakeAgent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, nil
}
func (a *fakeAgent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, nil
}
func (a *fakeAgent) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, nil
}

func (a *fakeAgent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions = append(a.sessions, p)
	return sdk.NewSessionResponse{SessionId: "s1"}, nil
}

func (a *fakeAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	a.mu.Lock()
	for _, b := range p.Prompt {
		if b.Text != nil {
			a.prompts = append(a.prompts, b.Text.Text)
		}
	}
	a.mu.Unlock()
	stop, err := a.prompt(ctx, a.conn, p.SessionId)
	return sdk.PromptResponse{StopReason: stop}, err
}

// hostSandbox stands in for the agent's sandbox: it runs commands on the
// host in dir (the sandbox's own tests are end to end, in cmd/bullpen).
type hostSandbox struct {
	dir  string
	mu   sync.Mutex
	runs [][]string
}

func (h *hostSandbox) Start(ctx context.Context, run bullpen.CLIRun) (bullpen.CLIProcess, error) {
	h.mu.Lock()
	h.runs = append(h.runs, run.Argv)
	h.mu.Unlock()
	cmd := exec.Command(run.Argv[0], run.Argv[1:]...)
	cmd.Dir = h.dir
	for k, v := range run.Env {
		cmd.Env = append(cmd.Environ(), k+"="+v)
	}
	cmd.Stdin = run.Input
	out, _ := cmd.StdoutPipe()
	errp, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &hostProc{cmd: cmd, out: out, err: errp}, nil
}

type hostProc struct {
	cmd      *exec.Cmd
	out, err io.Reader
}

func (p *hostProc) Stdout() io.Reader { return p.out }
func (p *hostProc) Stderr() io.Reader { return p.err }
func (p *hostProc) Close() error      { return p.cmd.Process.Kill() }
func (p *hostProc) Wait() (bullpen.CLIExit, error) {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() < 0 {
			return bullpen.CLIExit{Code: -1, Signal: "killed"}, nil
		}
		return bullpen.CLIExit{Code: ee.ExitCode()}, nil
	}
	return bullpen.CLIExit{}, err
}

// session runs one turn of agent through Run and returns its events.
func session(t *testing.T, agent *fakeAgent, turn Turn) ([]runtime.Event, error) {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	open := make(chan struct{})
	agent.conn = sdk.NewAgentSideConnection(agent, fromAgentW, gated{toAgentR, open})
	agent.conn.SetLogger(discardLogger())
	close(open)
	if turn.Cwd == "" {
		turn.Cwd = "/home/sandbox"
	}
	var mu sync.Mutex
	var evs []runtime.Event
	turn.Emit = func(ev runtime.Event) { mu.Lock(); evs = append(evs, ev); mu.Unlock() }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := Run(ctx, toAgentW, fromAgentR, turn)
	_ = fromAgentW.Close()
	mu.Lock()
	defer mu.Unlock()
	return evs, err
}

func text(s string) sdk.SessionUpdate { return sdk.UpdateAgentMessageText(s) }

// TestRunTurnsUpdatesIntoEvents: the session gets the prompt, the
// workspace and Bullpen's MCP server with the turn token; the agent's
// updates become deltas, tool calls (started once their arguments are
// known, Bullpen's own MCP tools named as the CLIs name them) and the
// final answer, the message after the last call.
func TestRunTurnsUpdatesIntoEvents(t *testing.T) {
	execute := sdk.ToolKindExecute
	a := &fakeAgent{prompt: func(ctx context.Context, c *sdk.AgentSideConnection, id sdk.SessionId) (sdk.StopReason, error) {
		send := func(u sdk.SessionUpdate) { _ = c.SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}) }
		send(text("Let me run it."))
		// Reported first without its input (streaming), then with it.
		send(sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "t1", Title: "sh hello.sh", Kind: execute,
			Status: sdk.ToolCallStatusPending, RawInput: map[string]any{}}})
		send(sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "t1", Title: "sh hello.sh", Kind: execute,
			Status: sdk.ToolCallStatusPending, RawInput: map[string]any{"command": "sh hello.sh"}}})
		done := sdk.ToolCallStatusCompleted
		send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "t1", Status: &done,
			Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("hello"))}}})
		send(sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "t2", Title: "Tool: bullpen/post_message",
			Status: sdk.ToolCallStatusInProgress, RawInput: map[string]any{"body": "hi"}}})
		failed := sdk.ToolCallStatusFailed
		send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "t2", Status: &failed, RawOutput: "denied"}})
		send(text("All "))
		send(text("done."))
		return sdk.StopReasonEndTurn, nil
	}}
	evs, err := session(t, a, Turn{Cwd: "/home/sandbox", Prompt: "brief\n\npacket", MCPURL: "http://127.0.0.1:4100/mcp", Token: "bp_turn"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.sessions) != 1 || a.sessions[0].Cwd != "/home/sandbox" || len(a.sessions[0].McpServers) != 1 {
		t.Fatalf("session/new: %+v", a.sessions)
	}
	if h := a.sessions[0].McpServers[0].Http; h == nil || h.Name != "bullpen" || h.Url != "http://127.0.0.1:4100/mcp" ||
		len(h.Headers) != 1 || h.Headers[0].Value != "Bearer bp_turn" {
		t.Fatalf("MCP server: %+v", a.sessions[0].McpServers[0])
	}
	if len(a.prompts) != 1 || a.prompts[0] != "brief\n\npacket" {
		t.Fatalf("prompt: %q", a.prompts)
	}
	var got []string
	for _, ev := range evs {
		s := string(ev.Kind) + ":" + ev.Tool + ev.Text + ev.Output
		if ev.Kind == runtime.KindToolStart {
			s += " " + string(ev.Class) + " " + string(ev.Input)
		}
		if ev.IsError {
			s += " (error)"
		}
		got = append(got, s)
	}
	want := []string{"session:", "delta:Let me run it.",
		`tool_start:command command {"command":"sh hello.sh"}`, "tool_end:hello",
		`tool_start:mcp__bullpen__post_message mcp {"body":"hi"}`, "tool_end:denied (error)",
		"delta:All ", "delta:done.", "final:All done."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRunCallsReportedLate: an agent that asks permission for a call
// before reporting it, and sends no arguments (Gemini CLI reports such a
// call only when it ends), gets its call started when allowed, with its
// title for arguments; a refused call never starts.
func TestRunCallsReportedLate(t *testing.T) {
	execute, other := sdk.ToolKindExecute, sdk.ToolKindOther
	a := &fakeAgent{prompt: func(ctx context.Context, c *sdk.AgentSideConnection, id sdk.SessionId) (sdk.StopReason, error) {
		send := func(u sdk.SessionUpdate) { _ = c.SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}) }
		ask := func(call, title string, kind *sdk.ToolKind) {
			opts := []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, OptionId: "once"}, {Kind: sdk.PermissionOptionKindRejectOnce, OptionId: "no"}}
			_, _ = c.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: id, Options: opts,
				ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(call), Title: &title, Kind: kind}})
		}
		done := sdk.ToolCallStatusCompleted
		send(text("Writing the script."))
		ask("g1", "sh hello.sh", &execute)
		send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "g1", Status: &done,
			Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("hello"))}}})
		ask("g2", "rm -rf /", &execute) // refused: it never runs, and Gemini CLI says no more of it
		ask("g3", "post_message (bullpen MCP Server)", &other)
		send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "g3", Status: &done}})
		send(text("Done."))
		return sdk.StopReasonEndTurn, nil
	}}
	var asked []string
	evs, err := session(t, a, Turn{Prompt: "x", Permit: func(_ context.Context, p Permission) (bool, string) {
		asked = append(asked, p.Tool)
		return len(asked) != 2, "" // the second request is refused
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		if ev.Kind == runtime.KindToolStart {
			got = append(got, "start:"+ev.Tool+" "+string(ev.Input))
		} else if ev.Kind != runtime.KindDelta && ev.Kind != runtime.KindSession {
			got = append(got, string(ev.Kind)+":"+ev.Text+ev.Output)
		}
	}
	// The client handles a request as it arrives, the notifications in
	// their order: a call's start may come before earlier calls' ends.
	want := []string{`start:command {"command":"sh hello.sh"}`, `start:mcp__bullpen__post_message {"title":"post_message (bullpen MCP Server)"}`,
		"tool_end:", "tool_end:hello", "final:Done."}
	sort.Strings(got[:len(got)-1])
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRunFailures: an agent that refuses, cannot reach MCP over HTTP,
// answers the prompt with an error or dies ends the run with an error or
// a failed final event that says so.
func TestRunFailures(t *testing.T) {
	refuse := &fakeAgent{prompt: func(context.Context, *sdk.AgentSideConnection, sdk.SessionId) (sdk.StopReason, error) {
		return sdk.StopReasonRefusal, nil
	}}
	evs, err := session(t, refuse, Turn{Prompt: "x"})
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Kind != runtime.KindFinal || !evs[len(evs)-1].IsError ||
		!strings.Contains(evs[len(evs)-1].Text, "refusal") {
		t.Fatalf("refusal: %v %+v", err, evs)
	}
	noHTTP := &fakeAgent{noHTTP: true}
	if _, err := session(t, noHTTP, Turn{Prompt: "x", MCPURL: "http://127.0.0.1:4100/mcp"}); err == nil || !strings.Contains(err.Error(), "mcpCapabilities.http") {
		t.Fatalf("no MCP over HTTP: %v", err)
	}
	broken := &fakeAgent{prompt: func(context.Context, *sdk.AgentSideConnection, sdk.SessionId) (sdk.StopReason, error) {
		return "", errors.New("model exploded")
	}}
	if _, err := session(t, broken, Turn{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "session/prompt") {
		t.Fatalf("prompt error: %v", err)
	}
	// An agent that prints garbage and exits.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = Run(ctx, nopCloser{io.Discard}, strings.NewReader("Welcome!\n"), Turn{Prompt: "x", Emit: func(runtime.Event) {}})
	if err == nil || !strings.Contains(err.Error(), "initialize") || !strings.Contains(err.Error(), `not ACP JSON-RPC: "Welcome!"`) {
		t.Fatalf("garbage: %v", err)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestPermissionFollowsPolicy: the agent's permission requests get the
// option the policy decides; no policy allows.
func TestPermissionFollowsPolicy(t *testing.T) {
	execute, edit := sdk.ToolKindExecute, sdk.ToolKindEdit
	var outcomes []string
	a := &fakeAgent{prompt: func(ctx context.Context, c *sdk.AgentSideConnection, id sdk.SessionId) (sdk.StopReason, error) {
		opts := []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowAlways, OptionId: "always"},
			{Kind: sdk.PermissionOptionKindAllowOnce, OptionId: "once"}, {Kind: sdk.PermissionOptionKindRejectOnce, OptionId: "no"}}
		for _, k := range []*sdk.ToolKind{&execute, &edit} {
			r, err := c.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: id, Options: opts,
				ToolCall: sdk.ToolCallUpdate{ToolCallId: "p", Kind: k, RawInput: map[string]any{"command": "rm -rf /"}}})
			if err != nil {
				return "", err
			}
			outcomes = append(outcomes, string(r.Outcome.Selected.OptionId))
		}
		return sdk.StopReasonEndTurn, nil
	}}
	var asked []Permission
	permit := func(_ context.Context, p Permission) (bool, string) {
		asked = append(asked, p)
		return p.Kind != sdk.ToolKindExecute, "no commands"
	}
	if _, err := session(t, a, Turn{Prompt: "x", Permit: permit}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(outcomes, ",") != "no,once" || len(asked) != 2 || !strings.Contains(asked[0].Input, "rm -rf") {
		t.Fatalf("outcomes %v, asked %+v", outcomes, asked)
	}
	outcomes = nil
	if _, err := session(t, a, Turn{Prompt: "x"}); err != nil || strings.Join(outcomes, ",") != "once,once" {
		t.Fatalf("without a policy: %v %v", err, outcomes)
	}
}

// TestFilesAndTerminalsThroughSandbox: fs/* and terminal/* are served by
// commands the Sandbox starts (never the client's own file system): a
// written file reads back, with line and limit; a terminal's command runs,
// its output is kept up to its limit from the end, and it can be waited
// for, killed and released; a file that is not there is an error.
func TestFilesAndTerminalsThroughSandbox(t *testing.T) {
	sb := &hostSandbox{dir: t.TempDir()}
	path := filepath.Join(sb.dir, "sub", "notes.txt")
	var got []string
	a := &fakeAgent{prompt: func(ctx context.Context, c *sdk.AgentSideConnection, id sdk.SessionId) (sdk.StopReason, error) {
		if _, err := c.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: id, Path: path, Content: "one\ntwo\nthree\n"}); err != nil {
			return "", err
		}
		line, limit := 2, 1
		r, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: id, Path: path, Line: &line, Limit: &limit})
		if err != nil {
			return "", err
		}
		got = append(got, r.Content)
		if _, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: id, Path: path + ".missing"}); err == nil {
			got = append(got, "missing file read")
		}
		lim := 4
		term, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: id, Command: "printf 'abcdefgh'; exit 3", OutputByteLimit: &lim})
		if err != nil {
			return "", err
		}
		w, err := c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: id, TerminalId: term.TerminalId})
		if err != nil || w.ExitCode == nil {
			return "", errors.Join(err, errors.New("no exit code"))
		}
		out, err := c.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: id, TerminalId: term.TerminalId})
		if err != nil {
			return "", err
		}
		got = append(got, out.Output, string(rune('0'+*w.ExitCode)), map[bool]string{true: "cut", false: "whole"}[out.Truncated])
		sleeper, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: id, Command: "sleep", Args: []string{"30"}})
		if err != nil {
			return "", err
		}
		if _, err := c.KillTerminal(ctx, sdk.KillTerminalRequest{SessionId: id, TerminalId: sleeper.TerminalId}); err != nil {
			return "", err
		}
		ks, err := c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: id, TerminalId: sleeper.TerminalId})
		if err != nil || ks.Signal == nil {
			return "", errors.Join(err, errors.New("the killed terminal has no signal"))
		}
		if _, err := c.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: id, TerminalId: sleeper.TerminalId}); err != nil {
			return "", err
		}
		if _, err := c.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: id, TerminalId: sleeper.TerminalId}); err == nil {
			got = append(got, "released terminal still there")
		}
		return sdk.StopReasonEndTurn, nil
	}}
	if _, err := session(t, a, Turn{Prompt: "x", Sandbox: sb}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, []byte("one\ntwo\nthree\n")) {
		t.Fatalf("written file: %q %v", b, err)
	}
	if strings.Join(got, "|") != "two\n|efgh|3|cut" {
		t.Fatalf("got %q", got)
	}
	if len(sb.runs) < 5 {
		t.Fatalf("the sandbox ran %d commands, want every fs and terminal request: %q", len(sb.runs), sb.runs)
	}
}
