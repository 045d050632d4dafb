package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/view"
)

// scriptCommand writes hello.sh in the workspace and runs it.
const scriptCommand = `printf 'echo hello from the script\n' > hello.sh && sh hello.sh`

// cliScript scripts a CLI's model: run scriptCommand with the CLI's shell
// tool, then post what it printed with Bullpen's post_message (the MCP tool
// as the CLI names it), then end. While the CLI waits on its second call,
// during runs (the isolation probe).
func cliScript(shell string, shellArgs map[string]any, post string, during func()) llmtest.Handler {
	n := 0
	return func(c llmtest.CapturedRequest) llmtest.Reply {
		if len(c.Tools) == 0 {
			return llmtest.Reply{Text: "Script run"} // a title or other side request
		}
		n++
		switch n {
		case 1:
			args, _ := json.Marshal(shellArgs)
			return llmtest.Reply{Text: "Writing the script.", ToolCalls: []llm.ToolCall{{Name: shell, Arguments: args}}}
		case 2:
			if during != nil {
				during()
			}
			out := lastToolResult(c)
			if i := strings.Index(out, "hello from the script"); i >= 0 {
				out = "hello from the script"
			}
			args, _ := json.Marshal(map[string]string{"body": "The script printed: " + out})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: post, Arguments: args}}}
		}
		return llmtest.Reply{Text: "Done."}
	}
}

// checkCLITurn checks what both CLIs' end-to-end tests must show.
func checkCLITurn(t *testing.T, o *cliOffice, eng bullpen.Member, since int64, shellTool string, p *probe) {
	turn, ev := o.waitTurnEnd(eng, since, 3*time.Minute)
	if ev.Type != bullpen.EventTurnFinished {
		t.Fatalf("turn failed: %s", turn.Error)
	}
	// 1. The reply is in the channel as the agent, posted through MCP.
	var reply *bullpen.Message
	var mcpPost, command bool
	for _, ev := range o.events(since) {
		switch ev.Type {
		case bullpen.EventMessagePosted:
			var m bullpen.Message
			json.Unmarshal(ev.Payload, &m)
			if m.AuthorID == eng.ID && strings.Contains(m.Body, "The script printed: hello from the script") {
				reply = &m
			}
			if m.AuthorID == eng.ID && strings.Contains(m.Body, "Done.") {
				t.Errorf("the CLI's final text was posted although it replied through MCP: %q", m.Body)
			}
		case bullpen.EventToolFinished:
			te, _ := bullpen.ToolOf(ev)
			mcpPost = mcpPost || (te.Tool == bullpen.ToolPostMessage && te.State == "ok" && te.TurnID == turn.TurnID)
		case bullpen.EventToolStarted:
			te, _ := bullpen.ToolOf(ev)
			// 2. Events show the CLI's commands.
			command = command || (te.Tool == shellTool && strings.Contains(string(te.Arguments), "hello.sh") && te.TurnID == turn.TurnID)
		}
	}
	if reply == nil || !mcpPost {
		t.Fatalf("no reply through MCP post_message (reply %v, tool event %v)", reply, mcpPost)
	}
	if !command {
		t.Fatalf("no tool event for the CLI's %s command", shellTool)
	}
	// 3. The script exists in the sandbox's filesystem, not on the host.
	if r := o.inSandbox(eng, "", "cat", bullpen.CLIWorkdir+"/hello.sh"); r.ExitCode != 0 || !strings.Contains(string(r.Stdout), "echo hello from the script") {
		t.Fatalf("hello.sh in the sandbox: %q %q", r.Stdout, r.Stderr)
	}
	wd, _ := os.Getwd()
	for _, p := range []string{bullpen.CLIWorkdir + "/hello.sh", filepath.Join(wd, "hello.sh"), "/root/hello.sh", "/tmp/hello.sh"} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("hello.sh is on the host at %s", p)
		}
	}
	// 4. The turn record has the usage the gateway counted.
	if turn.Usage == nil || turn.Usage.InputTokens < 1000 || turn.Usage.OutputTokens == 0 || turn.Steps < 3 {
		t.Fatalf("turn usage %+v steps %d", turn.Usage, turn.Steps)
	}
	// 5. The turn inspector shows the CLI turn like a built-in one: its
	// model calls as the gateway forwarded them, and its tool calls.
	var d view.TurnDetail
	o.api.do("GET", fmt.Sprintf("/turns/%d", turn.TurnID), nil, http.StatusOK, &d)
	gw := 0
	for _, mc := range d.ModelCalls {
		if mc.Via == bullpen.ViaGateway && mc.Status == http.StatusOK && mc.RequestBytes > 0 && mc.ResponseBytes > 0 {
			gw++
		}
	}
	if gw < 2 || len(d.Turn.ToolCalls) == 0 {
		t.Fatalf("inspector of CLI turn %d: %d gateway calls of %d, %d tool calls", turn.TurnID, gw, len(d.ModelCalls), len(d.Turn.ToolCalls))
	}
	checkIsolation(t, o, eng, p)
}

// checkIsolation: during the turn the provider key was nowhere in the
// sandbox (files, any process's environ or cmdline) while the turn token
// was (the scan sees the CLI), and the token worked; after the turn it is
// dead. For a CLI server (opencode) the credential the scan finds is the
// server's standing secret: it works during the turn, for the turn, and
// is refused after it, while the server still runs with it.
func checkIsolation(t *testing.T, o *cliOffice, eng bullpen.Member, p *probe) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		t.Fatal("the isolation probe did not run during the turn")
	}
	if p.leaks != "" {
		t.Fatalf("the provider key is visible inside the sandbox:\n%s", p.leaks)
	}
	standing := len(p.token) == 64 && strings.Trim(p.token, "0123456789abcdef") == "" // a CLI server's secret
	if !strings.HasPrefix(p.token, bullpen.TokenPrefix) && !standing || p.mcpStatus != http.StatusOK {
		t.Fatalf("the scan found turn token %q (mcp status %d): it must see the CLI's env", p.token, p.mcpStatus)
	}
	if st := o.socketMCPStatus(eng, p.token); st != http.StatusUnauthorized {
		t.Fatalf("the turn token after the turn: status %d, want 401", st)
	}
}

// TestClaudeCodeEndToEnd: a human asks @engineer (runtime claude-code, the
// real CLI from npm) to write a script, run it and post the output. The
// CLI runs in the agent's sandbox, reaches the model only through the
// gateway (which holds the real key) and the office only through MCP.
func TestClaudeCodeEndToEnd(t *testing.T) {
	var o *cliOffice
	var eng bullpen.Member
	p := &probe{}
	fake := llmtest.NewFakeAnthropic(cliScript("Bash", map[string]any{"command": scriptCommand, "description": "write and run hello.sh"},
		"mcp__bullpen__post_message", func() { o.scanDuringTurn(eng, p) }))
	defer fake.Close()
	o = newCLIOffice(t, "anthropic", fake.URL, runtime.ClaudeCode{})
	eng = o.hire(bullpen.RuntimeClaudeCode, "anthropic", "claude-sonnet-4-5", nil)
	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer please write a script hello.sh in your workspace, run it, and post its output here")
	checkCLITurn(t, o, eng, since, "Bash", p)
	// Claude Code is offered its shell and every file tool (--bare cut
	// them to Bash, Read and Edit).
	offered := map[string]bool{}
	for _, tool := range fake.Requests()[0].Tools {
		offered[tool.Name] = true
	}
	for _, want := range []string{"Bash", "Read", "Write", "Edit", "Glob", "Grep", "mcp__bullpen__post_message"} {
		if !offered[want] {
			t.Errorf("claude-code was not offered %s (offered %v)", want, offered)
		}
	}
	for _, r := range fake.Requests() {
		if r.Header.Get("X-Api-Key") != providerSecret {
			t.Fatalf("the provider got key %q, not the real one", r.Header.Get("X-Api-Key"))
		}
	}
}

// TestCodexEndToEnd: the same with the real Codex CLI, the fake speaking
// the OpenAI Responses API.
func TestCodexEndToEnd(t *testing.T) {
	var o *cliOffice
	var eng bullpen.Member
	p := &probe{}
	fake := llmtest.NewFakeResponses(cliScript("exec_command", map[string]any{"cmd": scriptCommand},
		"mcp__bullpen__post_message", func() { o.scanDuringTurn(eng, p) }))
	defer fake.Close()
	o = newCLIOffice(t, "openai", fake.BaseURL(), runtime.Codex{})
	eng = o.hire(bullpen.RuntimeCodex, "openai", "gpt-5-codex", nil)
	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer please write a script hello.sh in your workspace, run it, and post its output here")
	checkCLITurn(t, o, eng, since, "command", p)
	for _, r := range fake.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+providerSecret {
			t.Fatalf("the provider got %q, not the real key", r.Header.Get("Authorization"))
		}
	}
}

// TestCLIHungKilledAtDeadline: a Claude Code whose model never answers is
// killed at the turn deadline with everything it started (a background
// sleeper it forked out of its session included); the channel is told and
// no process is left in the sandbox.
func TestCLIHungKilledAtDeadline(t *testing.T) {
	n := 0
	fake := llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply {
		if n++; n == 1 {
			args, _ := json.Marshal(map[string]string{"command": "setsid sleep 3000 >/dev/null 2>&1 < /dev/null & echo started"})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "Bash", Arguments: args}}}
		}
		return llmtest.Reply{Text: "never", Delay: time.Hour}
	})
	defer fake.Close()
	o := newCLIOffice(t, "anthropic", fake.URL, runtime.ClaudeCode{})
	eng := o.hire(bullpen.RuntimeClaudeCode, "anthropic", "claude-sonnet-4-5", func(r *bullpen.Role) {
		r.Timeouts.Turn = bullpen.Duration(10 * time.Second)
	})
	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer start a long job")
	turn, _ := o.waitTurnEnd(eng, since, 2*time.Minute)
	if turn.Error != "limit: "+bullpen.LimitDeadline || n < 2 {
		t.Fatalf("turn ended with %q after %d model calls, want the deadline limit while waiting", turn.Error, n)
	}
	notice := false
	for _, ev := range o.events(since) {
		var m bullpen.Message
		if ev.Type == bullpen.EventMessagePosted && json.Unmarshal(ev.Payload, &m) == nil {
			notice = notice || strings.Contains(m.Body, "used the whole turn deadline")
		}
	}
	if !notice {
		t.Fatal("no deadline notice in the channel")
	}
	r := o.inSandbox(eng, "", "python3", "-c",
		"import os; me=os.getpid(); print([open('/proc/%s/cmdline'%p).read() for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, me)])")
	if got := strings.TrimSpace(string(r.Stdout)); got != "[]" {
		t.Fatalf("processes left in the sandbox after the deadline: %s", got)
	}
}

// TestOpenCodeEndToEnd: the third runtime, the real opencode from npm,
// on the Anthropic protocol through the gateway, does the same.
func TestOpenCodeEndToEnd(t *testing.T) {
	var o *cliOffice
	var eng bullpen.Member
	p := &probe{}
	fake := llmtest.NewFakeAnthropic(cliScript("bash", map[string]any{"command": scriptCommand, "description": "write and run hello.sh"},
		"bullpen_post_message", func() { o.scanDuringTurn(eng, p) }))
	defer fake.Close()
	o = newCLIOffice(t, "anthropic", fake.URL, runtime.OpenCode{})
	eng = o.hire(bullpen.RuntimeOpenCode, "anthropic", "claude-sonnet-4-5", nil)
	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer please write a script hello.sh in your workspace, run it, and post its output here")
	checkCLITurn(t, o, eng, since, "bash", p)
	// Its server stays for the next turn (checkCLITurn found the server's
	// secret refused once the turn ended, while the server holds it).
	r := o.inSandbox(eng, "", "python3", "-c",
		"import os; print(sum(1 for p in os.listdir('/proc') if p.isdigit() and b'opencode\\x00serve' in open('/proc/%s/cmdline'%p,'rb').read()))")
	if strings.TrimSpace(string(r.Stdout)) != "1" {
		t.Fatalf("opencode servers in the sandbox after the turn: %q %q, want 1", r.Stdout, r.Stderr)
	}
	// opencode neither asked for a session title nor npm-installed its
	// plugin package into a config directory (both cost tens of seconds
	// before its first real model call, each run).
	for _, r := range fake.Requests() {
		if strings.Contains(string(r.Raw), "Generate a title") {
			t.Errorf("opencode made a title request: %.200s", r.Raw)
		}
	}
	home := bullpen.CLIHomes + "/" + bullpen.RuntimeOpenCode
	if r := o.inSandbox(eng, "", "sh", "-c", "ls -a "+home+"/.config/opencode "+home+"/.npm 2>/dev/null; true"); strings.Contains(string(r.Stdout), "node_modules") ||
		strings.Contains(string(r.Stdout), "package") || strings.Contains(string(r.Stdout), "_cacache") || strings.Contains(string(r.Stdout), "_logs") {
		t.Errorf("opencode tried an npm install in its HOME: %s", r.Stdout)
	}
}

// fakeClaude installs a "claude-code" that is a shell script, so that the
// real server and sandbox meet a CLI that misbehaves.
func fakeClaude(t *testing.T, script string) string {
	dir := t.TempDir()
	rt := runtime.ClaudeCode{}
	bin := filepath.Join(dir, rt.Install().Dir(), rt.Install().Bin)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rt.Install().Dir(), ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCLIMisbehavesEndToEnd: a CLI that prints garbage, or exits non-zero,
// ends its turn with a notice that says so, through the real server and
// sandbox; the turn token is revoked either way.
func TestCLIMisbehavesEndToEnd(t *testing.T) {
	cases := []struct{ name, script, notice string }{
		{"garbage", "echo 'Welcome to Claude!'; exit 0\n", "printed output that is not its JSON event stream"},
		{"exit", "cat >/dev/null; echo 'error: invalid API key configuration' >&2; exit 2\n", "claude-code exited with status 2: error: invalid API key configuration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("needs root (sandboxes)")
			}
			o := startCLIOffice(t, "anthropic", "http://127.0.0.1:9", fakeClaude(t, c.script))
			eng := o.hire(bullpen.RuntimeClaudeCode, "anthropic", "claude-sonnet-4-5", nil)
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

// TestOpenCodeServerKeepsNothing: the real opencode, run as a server
// across turns. A turn's command that escapes into the background
// (setsid, stdio closed) does not outlive the turn, while the server,
// which ran it, does; the next turn is served by the same server.
func TestOpenCodeServerKeepsNothing(t *testing.T) {
	var mu sync.Mutex
	n := 0
	fake := llmtest.NewFakeAnthropic(func(c llmtest.CapturedRequest) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 1 {
			args, _ := json.Marshal(map[string]string{"command": "setsid sleep 3000 >/dev/null 2>&1 < /dev/null & echo started",
				"description": "start a long job"})
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "bash", Arguments: args}}}
		}
		return llmtest.Reply{Text: fmt.Sprintf("answer %d", n)}
	})
	defer fake.Close()
	o := newCLIOffice(t, "anthropic", fake.URL, runtime.OpenCode{})
	eng := o.hire(bullpen.RuntimeOpenCode, "anthropic", "claude-sonnet-4-5", nil)
	procs := func() string { // the live processes but init and the probe, by pid and command
		r := o.inSandbox(eng, "", "python3", "-c", `
import os
me = os.getpid()
for p in sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)):
    try:
        if open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[0] != "Z":
            print(p, open("/proc/%d/cmdline" % p).read().replace("\0", " ").strip())
    except OSError:
        pass
`)
		return strings.TrimSpace(string(r.Stdout))
	}
	var servers []string
	for k := 1; k <= 2; k++ {
		since := o.m.Office.Hub().Last()
		o.say(0, fmt.Sprintf("@engineer job %d", k))
		if turn, ev := o.waitTurnEnd(eng, since, 4*time.Minute); ev.Type != bullpen.EventTurnFinished {
			t.Fatalf("turn %d failed: %s", k, turn.Error)
		}
		left := procs()
		if strings.Contains(left, "sleep 3000") || strings.Count(left, "\n") != 0 || !strings.Contains(left, "opencode serve") {
			t.Fatalf("after turn %d want the opencode server alone, got:\n%s", k, left)
		}
		servers = append(servers, left)
	}
	if servers[0] != servers[1] {
		t.Fatalf("the second turn was not served by the first turn's server: %q then %q", servers[0], servers[1])
	}
}
