package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/sandboxes"
	"github.com/bullpen-hq/bullpen/view"
)

// socketOffice is the whole program with real sandboxes and a model that
// holds every call until the test ends, so that agents' turns stay
// running and their turn tokens alive. No agent CLI is installed: the
// tests run their own processes in the agent's CLI sandbox (its bridge
// to the agent's socket attached), as a CLI or an attacker there would.
type socketOffice struct {
	*cliOffice
	clis *sandboxes.CLIWorkspaces
}

func newSocketOffice(t *testing.T) *socketOffice {
	t.Helper()
	if !canRunSandboxes() {
		t.Skip("needs root and a writable /run (sandboxes, agent sockets)")
	}
	hold := make(chan struct{})
	fake := llmtest.NewFakeAnthropic(func(llmtest.CapturedRequest) llmtest.Reply {
		<-hold
		return llmtest.Reply{Text: "released"}
	})
	t.Cleanup(fake.Close)
	o := startCLIOffice(t, "anthropic", fake.URL, t.TempDir())
	t.Cleanup(func() { close(hold) }) // before the office closes
	ws := o.m.Sandboxes.Workspaces(time.Hour)
	return &socketOffice{cliOffice: o, clis: ws.WithCLIs(sandboxes.CLIHost{Dir: runtime.InstallerIn(o.m.DataDir).Dir, Socket: o.m.sockets.Socket})}
}

// hireBuiltin hires a built-in engineer and returns it and its own
// (permanent) token.
func (o *socketOffice) hireBuiltin(handle string) (bullpen.Member, string) {
	o.t.Helper()
	role, err := o.m.Agents.Catalog().Role("starter/engineer")
	if err != nil {
		o.t.Fatal(err)
	}
	role.Handle, role.Runtime, role.Provider = handle, bullpen.RuntimeBuiltin, "anthropic"
	var h view.Hired
	o.api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, &h)
	return h.Agent.Member, h.Token
}

// turnToken wakes agent, waits for its turn to run (it waits on the held
// model) and mints a token for that turn, as a CLI turn does.
func (o *socketOffice) turnToken(agent bullpen.Member) string {
	o.t.Helper()
	o.say(0, "@"+agent.Handle+" please hold")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var turns struct{ Items []bullpen.Turn }
		o.api.do("GET", "/agents/"+itoa64(agent.ID)+"/turns", nil, http.StatusOK, &turns)
		for _, tu := range turns.Items {
			if tu.State == bullpen.TurnRunning {
				tok, err := o.m.Office.MintTurnToken(context.Background(), agent.ID, tu.ID, time.Hour)
				if err != nil {
					o.t.Fatal(err)
				}
				return tok
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	o.t.Fatalf("@%s's turn did not start", agent.Handle)
	return ""
}

// runInside runs python3 with script in agent's CLI sandbox, args after
// it, and returns the process's stdout lines as they come and a wait
// func giving its stderr and exit code.
func (o *socketOffice) runInside(agent bullpen.Member, script string, args ...string) (<-chan string, func() (string, int)) {
	o.t.Helper()
	return o.runArgv(agent, append([]string{"python3", "-c", script}, args...))
}

// runArgv runs argv in agent's CLI sandbox, as runInside does.
func (o *socketOffice) runArgv(agent bullpen.Member, argv []string) (<-chan string, func() (string, int)) {
	o.t.Helper()
	p, err := o.clis.RunCLI(context.Background(), agent, bullpen.SandboxSpec{}, bullpen.CLIRun{
		Argv: argv, Timeout: 5 * time.Minute})
	if err != nil {
		o.t.Fatal(err)
	}
	lines := make(chan string, 100)
	errc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(p.Stdout())
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	go func() { b, _ := io.ReadAll(p.Stderr()); errc <- string(b) }()
	return lines, func() (string, int) {
		ex, err := p.Wait()
		if err != nil {
			o.t.Fatal(err)
		}
		return strings.TrimSpace(<-errc), ex.Code
	}
}

func canRunSandboxes() bool {
	if os.Geteuid() != 0 {
		return false
	}
	ln, err := net.Listen("unix", "/run/.bullpen-probe.sock")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
