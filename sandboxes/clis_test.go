package sandboxes_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/agents/runtime/runtimetest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// serveSocket serves h on a fresh unix socket (as the server serves
// Bullpen to one agent's sandbox) and returns its path.
func serveSocket(t *testing.T, h http.Handler) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cli-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// claudeRun is a claude-code turn's run for the fake gateway.
func claudeRun(prompt string, timeout time.Duration) bullpen.CLIRun {
	rt := runtime.ClaudeCode{}
	inv := rt.Command(runtime.Turn{CLIDir: bullpen.CLIMountDir + "/" + rt.Install().Dir(), Workdir: bullpen.CLIWorkdir,
		Home: bullpen.CLIHomes + "/claude-code", Model: "claude-sonnet-4-5", GatewayURL: "http://127.0.0.1:4100",
		MCPURL: "http://127.0.0.1:4100/mcp", Token: "turn-token", MaxTurns: 4})
	return bullpen.CLIRun{Argv: inv.Argv, Env: inv.Env, Dirs: []string{bullpen.CLIHomes + "/claude-code"},
		Stdin: prompt, Timeout: timeout}
}

func cliFixture(t *testing.T, h http.Handler) (*fixture, *sandboxes.CLIWorkspaces) {
	in := runtimetest.Installer(t, runtime.ClaudeCode{})
	f := newFixture(t, sandboxes.Config{})
	sock := serveSocket(t, h)
	w := f.svc.Workspaces(0).WithCLIs(sandboxes.CLIHost{Dir: in.Dir,
		Socket: func(context.Context, bullpen.Member) (string, error) { return sock, nil }})
	return f, w
}

// TestRunCLIClaudeCode: the real Claude Code runs in the agent's sandbox,
// reaches the model only through the bridge, and its Bash tool writes and
// runs a script that exists in the sandbox and not on the host.
func TestRunCLIClaudeCode(t *testing.T) {
	fake := llmtest.NewFakeAnthropic(llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "Bash", Arguments: []byte(`{"command":"printf 'echo out-of-script\\n' > made.sh && sh made.sh"}`)}}},
		llmtest.Reply{Text: "ran it"}))
	defer fake.Close()
	f, w := cliFixture(t, http.StripPrefix("/anthropic", fake.Config.Handler))
	ctx := context.Background()
	p, err := w.RunCLI(ctx, f.robo, bullpen.SandboxSpec{}, claudeRun("make a script", 2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	var evs []runtime.Event
	perr := runtime.Read(p.Stdout(), runtime.ClaudeCode{}.NewParser(), func(e runtime.Event) { evs = append(evs, e) })
	exit, err := p.Wait()
	if err != nil || perr != nil || exit.Code != 0 {
		t.Fatalf("run: exit %+v, %v, parse %v", exit, err, perr)
	}
	var out string
	for _, e := range evs {
		if e.Kind == runtime.KindToolEnd {
			out += e.Output
		}
	}
	if !strings.Contains(out, "out-of-script") {
		t.Fatalf("command output %q; events %+v", out, evs)
	}
	if reqs := fake.Requests(); len(reqs) != 2 || reqs[0].Header.Get("X-Api-Key") != "turn-token" {
		t.Fatalf("model requests: %d", len(reqs))
	}
	in, err := f.svc.Ensure(ctx, f.robo, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.Manager().Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"cat", bullpen.CLIWorkdir + "/made.sh"}})
	if err != nil || string(r.Stdout) != "echo out-of-script\n" {
		t.Fatalf("script in the sandbox: %q %v", r.Stdout, err)
	}
	for _, p := range []string{bullpen.CLIWorkdir + "/made.sh", "made.sh", "/made.sh"} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("the script is on the host at %s", p)
		}
	}
}

// TestRunCLIHungKilled: a CLI hung on a model that never answers is killed
// at the run's deadline, and nothing it started is left in the sandbox.
func TestRunCLIHungKilled(t *testing.T) {
	fake := llmtest.NewFakeAnthropic(llmtest.Sequence(llmtest.Reply{Text: "never", Delay: time.Hour}))
	defer fake.Close()
	f, w := cliFixture(t, http.StripPrefix("/anthropic", fake.Config.Handler))
	ctx := context.Background()
	p, err := w.RunCLI(ctx, f.robo, bullpen.SandboxSpec{}, claudeRun("hang", 4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	go io.Copy(io.Discard, p.Stdout())
	exit, err := p.Wait()
	if err != nil || !exit.TimedOut {
		t.Fatalf("exit %+v %v: want timed out", exit, err)
	}
	if len(fake.Requests()) == 0 {
		t.Fatal("the CLI never reached the model: the test proves nothing")
	}
	in, _ := f.svc.Ensure(ctx, f.robo, sandbox.Spec{})
	r, err := f.svc.Manager().Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"python3", "-c",
		"import os; me=os.getpid(); print([p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, me)])"}})
	if err != nil || strings.TrimSpace(string(r.Stdout)) != "[]" {
		t.Fatalf("processes left in the sandbox: %s %v", r.Stdout, err)
	}
}
