package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
)

// acpCase is one shipped ACP agent: the fake model it meets and the names
// its tools have.
type acpCase struct {
	agent, kind, model string
	name               string // the subtest's, when one agent meets both kinds
	// shell is the shell tool as the model calls it, args its arguments;
	// shown is the tool as Bullpen's events name it; post is Bullpen's
	// post_message as the model calls it.
	shell, shown, post string
	args               map[string]any
	fake               func(h llmtest.Handler) (url string, requests func() []llmtest.CapturedRequest, close func())
}

func fakeAnthropic(h llmtest.Handler) (string, func() []llmtest.CapturedRequest, func()) {
	f := llmtest.NewFakeAnthropic(h)
	return f.URL, f.Requests, f.Close
}

func fakeResponses(h llmtest.Handler) (string, func() []llmtest.CapturedRequest, func()) {
	f := llmtest.NewFakeResponses(h)
	return f.BaseURL(), f.Requests, f.Close
}

func fakeChat(h llmtest.Handler) (string, func() []llmtest.CapturedRequest, func()) {
	f := llmtest.NewFakeOpenAI(h)
	return f.BaseURL(), f.Requests, f.Close
}

// geminiShell is the arguments of Gemini CLI's shell tool.
var geminiShell = map[string]any{"command": scriptCommand, "description": "write and run hello.sh"}

var acpCases = []acpCase{
	{agent: runtime.ACPClaudeCode, kind: "anthropic", model: "claude-sonnet-4-5", fake: fakeAnthropic,
		// terminal/* is offered, so its Bash runs through the client.
		shell: "mcp__acp__Bash", shown: "Bash", post: "mcp__bullpen__post_message",
		args: map[string]any{"command": scriptCommand, "description": "write and run hello.sh", "timeout": 60000}},
	{agent: runtime.ACPCodex, kind: "openai", model: "gpt-5-codex", fake: fakeResponses,
		shell: "exec_command", shown: "command", post: "mcp__bullpen__post_message",
		args: map[string]any{"cmd": scriptCommand}},
	// Gemini CLI speaks the Gemini API, which the gateway translates for
	// either kind of provider. It runs its shell tool itself.
	{agent: runtime.ACPGemini, name: "gemini-on-anthropic", kind: "anthropic", model: "claude-sonnet-4-5", fake: fakeAnthropic,
		shell: "run_shell_command", shown: "command", post: "mcp_bullpen_post_message", args: geminiShell},
	{agent: runtime.ACPGemini, name: "gemini-on-chat", kind: "openai", model: "gpt-4.1", fake: fakeChat,
		shell: "run_shell_command", shown: "command", post: "mcp_bullpen_post_message", args: geminiShell},
}

// label is the case's subtest name.
func (c acpCase) label() string {
	if c.name != "" {
		return c.name
	}
	return c.agent
}

// TestACPEndToEnd: each shipped ACP agent (the real npm packages) as
// runtime acp does what Claude Code and Codex do as CLIs: asked by a human
// to write and run a script, it works in its sandbox, driven by Bullpen's
// ACP client over stdio; reaches the model only through the gateway and
// the office only through MCP; the provider key is never inside.
func TestACPEndToEnd(t *testing.T) {
	for _, c := range acpCases {
		t.Run(c.label(), func(t *testing.T) {
			var o *cliOffice
			var eng bullpen.Member
			p := &probe{}
			url, requests, closeFake := c.fake(cliScript(c.shell, c.args, c.post, func() { o.scanDuringTurn(eng, p) }))
			defer closeFake()
			rt := runtime.ACP{Agent: c.agent}
			o = newCLIOffice(t, c.kind, url, rt)
			eng = o.hire(bullpen.RuntimeACP, c.kind, c.model, func(r *bullpen.Role) { r.Command = c.agent })
			since := o.m.Office.Hub().Last()
			o.say(0, "@engineer please write a script hello.sh in your workspace, run it, and post its output here")
			checkCLITurn(t, o, eng, since, c.shown, p)
			for _, r := range requests() {
				if got := r.Header.Get("X-Api-Key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); got != providerSecret {
					t.Fatalf("the provider got key %q, not the real one", got)
				}
			}
		})
	}
}

// TestACPBudgetStop: an ACP agent whose first model call is over its
// turn's token budget is refused by the gateway and its whole run is
// stopped at once: the turn ends limited, the channel says so, the model
// was never called and nothing is left running in the sandbox.
func TestACPBudgetStop(t *testing.T) {
	for _, c := range acpCases {
		t.Run(c.label(), func(t *testing.T) {
			url, requests, closeFake := c.fake(func(llmtest.CapturedRequest) llmtest.Reply { return llmtest.Reply{Text: "never"} })
			defer closeFake()
			o := newCLIOffice(t, c.kind, url, runtime.ACP{Agent: c.agent})
			eng := o.hire(bullpen.RuntimeACP, c.kind, c.model, func(r *bullpen.Role) {
				r.Command = c.agent
				r.Budgets.MaxTurnTokens = 1000
			})
			since := o.m.Office.Hub().Last()
			o.say(0, "@engineer write a long essay")
			turn, _ := o.waitTurnEnd(eng, since, 3*time.Minute)
			if turn.Error != "limit: "+bullpen.LimitTurnTokens {
				t.Fatalf("turn ended with %q, want the turn_tokens limit", turn.Error)
			}
			if n := len(requests()); n != 0 {
				t.Fatalf("the provider got %d requests over the budget", n)
			}
			stopped := false
			var bodies []string
			for _, ev := range o.events(since) {
				var m bullpen.Message
				if ev.Type == bullpen.EventMessagePosted && json.Unmarshal(ev.Payload, &m) == nil {
					stopped = stopped || strings.Contains(m.Body, "Its CLI run was stopped.")
					bodies = append(bodies, m.Body)
				}
			}
			if !stopped {
				t.Fatalf("no budget notice saying the run was stopped in %q", bodies)
			}
			r := o.inSandbox(eng, "", "python3", "-c",
				"import os; me=os.getpid(); print([open('/proc/%s/cmdline'%p).read() for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, me)])")
			if got := strings.TrimSpace(string(r.Stdout)); got != "[]" {
				t.Fatalf("processes left in the sandbox after the budget stop: %s", got)
			}
		})
	}
}

// TestACPFilesInSandbox: an ACP agent's fs/write_text_file and
// fs/read_text_file are served inside its sandbox, as the sandbox user:
// Claude Code's Write and Read (offered through the client) write a file
// that is in the sandbox's workspace and nowhere on the host, and read it
// back from there.
func TestACPFilesInSandbox(t *testing.T) {
	const path, content = bullpen.CLIWorkdir + "/acp-notes.txt", "written through fs/write_text_file"
	n := 0
	fake := llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply {
		if len(c.Tools) == 0 {
			return llmtest.Reply{Text: "Notes"}
		}
		n++
		var name string
		var args map[string]any
		switch n {
		case 1:
			name, args = "mcp__acp__Write", map[string]any{"file_path": path, "content": content + "\n"}
		case 2:
			name, args = "mcp__acp__Read", map[string]any{"file_path": path}
		case 3:
			name, args = "mcp__bullpen__post_message", map[string]any{"body": "Read back: " + lastToolResult(c)}
		default:
			return llmtest.Reply{Text: "Done."}
		}
		b, _ := json.Marshal(args)
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: name, Arguments: b}}}
	})
	defer fake.Close()
	o := newCLIOffice(t, "anthropic", fake.URL, runtime.ACP{Agent: runtime.ACPClaudeCode})
	eng := o.hire(bullpen.RuntimeACP, "anthropic", "claude-sonnet-4-5", func(r *bullpen.Role) { r.Command = runtime.ACPClaudeCode })
	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer keep a note in your workspace and read it back")
	turn, ev := o.waitTurnEnd(eng, since, 3*time.Minute)
	if ev.Type != bullpen.EventTurnFinished {
		t.Fatalf("turn failed: %s", turn.Error)
	}
	var reply string
	tools := map[string]string{}
	for _, ev := range o.events(since) {
		var m bullpen.Message
		if ev.Type == bullpen.EventMessagePosted && json.Unmarshal(ev.Payload, &m) == nil && m.AuthorID == eng.ID {
			reply += m.Body
		}
		if ev.Type == bullpen.EventToolFinished {
			te, _ := bullpen.ToolOf(ev)
			tools[te.Tool] = te.State
		}
	}
	if !strings.Contains(reply, "Read back:") || !strings.Contains(reply, content) {
		t.Fatalf("the agent's reply %q lacks the file's content", reply)
	}
	if tools["Write"] != "ok" || tools["Read"] != "ok" {
		t.Fatalf("tool events %v, want Write and Read ok", tools)
	}
	if r := o.inSandbox(eng, "", "cat", path); r.ExitCode != 0 || strings.TrimSpace(string(r.Stdout)) != content {
		t.Fatalf("the file in the sandbox: %q %q", r.Stdout, r.Stderr)
	}
	if r := o.inSandbox(eng, "", "stat", "-c", "%U", path); strings.TrimSpace(string(r.Stdout)) == "root" {
		t.Fatalf("the file was written as root, not the sandbox user")
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("the file is on the host at %s", path)
	}
}

// TestACPMisbehavesEndToEnd: runtime acp with a command line of the
// sandbox image that is not an ACP agent ends its turn with a notice that
// says why, through the real server and sandbox.
func TestACPMisbehavesEndToEnd(t *testing.T) {
	cases := []struct{ name, command, notice string }{
		{"garbage", "echo Welcome to my agent", `its output is not ACP JSON-RPC: "Welcome to my agent"`},
		{"exit", "ls /no/such/dir", "acp exited with status 2: ls: cannot access '/no/such/dir'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newCLIOffice(t, "anthropic", "http://127.0.0.1:9")
			eng := o.hire(bullpen.RuntimeACP, "anthropic", "claude-sonnet-4-5", func(r *bullpen.Role) { r.Command = c.command })
			since := o.m.Office.Hub().Last()
			o.say(0, "@engineer do something")
			turn, ev := o.waitTurnEnd(eng, since, time.Minute)
			if ev.Type != bullpen.EventTurnFailed || !strings.Contains(turn.Error, c.notice) {
				t.Fatalf("turn ended %s with %q, want it failed with %q", ev.Type, turn.Error, c.notice)
			}
			notice := false
			for _, ev := range o.events(since) {
				var m bullpen.Message
				if ev.Type == bullpen.EventMessagePosted && json.Unmarshal(ev.Payload, &m) == nil && m.AuthorID == eng.ID {
					notice = notice || strings.Contains(m.Body, c.notice)
				}
			}
			if !notice {
				t.Fatal("no notice in the channel")
			}
		})
	}
}

// TestACPHungKilledAtDeadline: an ACP agent whose terminal runs a
// command that never ends (a command of its own, outside the agent's process
// tree) is killed at the turn deadline with everything it and its
// terminals started: no process is left in the
// sandbox.
func TestACPHungKilledAtDeadline(t *testing.T) {
	n := 0
	fake := llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply {
		if len(c.Tools) == 0 {
			return llmtest.Reply{Text: "Long job"}
		}
		if n++; n == 1 {
			args, _ := json.Marshal(map[string]any{"command": "sleep 3000",
				"description": "start a long job", "timeout": 600000})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "mcp__acp__Bash", Arguments: args}}}
		}
		return llmtest.Reply{Text: "never", Delay: time.Hour}
	})
	defer fake.Close()
	o := newCLIOffice(t, "anthropic", fake.URL, runtime.ACP{Agent: runtime.ACPClaudeCode})
	eng := o.hire(bullpen.RuntimeACP, "anthropic", "claude-sonnet-4-5", func(r *bullpen.Role) {
		r.Command = runtime.ACPClaudeCode
		r.Timeouts.Turn = bullpen.Duration(90 * time.Second) // its start takes long on a loaded machine
	})
	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer start a long job")
	turn, _ := o.waitTurnEnd(eng, since, 3*time.Minute)
	if turn.Error != "limit: "+bullpen.LimitDeadline || n < 1 {
		t.Fatalf("turn ended with %q after %d model calls, want the deadline limit after the terminal started", turn.Error, n)
	}
	started := false
	for _, ev := range o.events(since) {
		if ev.Type == bullpen.EventToolStarted {
			te, _ := bullpen.ToolOf(ev)
			started = started || (te.Tool == "Bash" && strings.Contains(string(te.Arguments), "sleep 3000"))
		}
	}
	if !started {
		t.Fatal("the terminal's command never started")
	}
	r := o.inSandbox(eng, "", "python3", "-c",
		"import os; me=os.getpid(); print([open('/proc/%s/cmdline'%p).read() for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, me)])")
	if got := strings.TrimSpace(string(r.Stdout)); got != "[]" {
		t.Fatalf("processes left in the sandbox after the deadline: %s", got)
	}
}
