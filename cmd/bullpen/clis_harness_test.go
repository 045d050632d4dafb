package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/agents/runtime/runtimetest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/view"
)

// providerSecret is the "real" provider key the gateway holds; it must
// never be visible inside a sandbox.
const providerSecret = "sk-prov-7f3a9c1e5b2d4086REALKEY"

// cliOffice is the whole program with real sandboxes, the real agent CLIs
// from the shared install, and a fake provider behind the gateway.
type cliOffice struct {
	t   testing.TB
	m   *Main
	api apiClient
	me  bullpen.Member
}

// newCLIOffice starts Main with the provider of kind at baseURL (the fake)
// and providerSecret as its key.
func newCLIOffice(t testing.TB, kind, baseURL string, rts ...runtime.Runtime) *cliOffice {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("agent CLI end-to-end tests need root (sandboxes)")
		}
		t.Skip("agent CLI end-to-end tests need root (sandboxes)")
	}
	// The data dir's CLIs are the shared install: make test installs once.
	return startCLIOffice(t, kind, baseURL, runtimetest.Installer(t, rts...).Dir)
}

// startCLIOffice starts the office with clis as its installed CLIs.
func startCLIOffice(t testing.TB, kind, baseURL, clis string) *cliOffice {
	t.Helper()
	data := t.TempDir()
	if err := os.Symlink(clis, filepath.Join(data, "clis")); err != nil {
		t.Fatal(err)
	}
	env := "BULLPEN_ANTHROPIC"
	if kind == "openai" {
		env = "BULLPEN_OPENAI"
	}
	t.Setenv(env+"_API_KEY", providerSecret)
	t.Setenv(env+"_BASE_URL", baseURL)
	t.Setenv("BULLPEN_PROVIDER", kind)
	var out strings.Builder
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags("serve", []string{"--data", data, "--addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		if m.Sandboxes != nil {
			m.Sandboxes.Manager().TerminateAll(context.Background())
		}
		m.Close(context.Background())
	})
	if m.Sandboxes == nil {
		t.Fatal("the server started without sandboxes")
	}
	o := &cliOffice{t: t, m: m, api: apiClient{t: t, base: m.URL() + "api/v1", token: tokenRE.FindString(out.String())}}
	o.api.do("GET", "/me", nil, http.StatusOK, &o.me)
	return o
}

// hire hires the starter engineer with runtime rt on the provider kind.
func (o *cliOffice) hire(rt, kind, model string, mut func(*bullpen.Role)) bullpen.Member {
	o.t.Helper()
	role, err := o.m.Agents.Catalog().Role("starter/engineer")
	if err != nil {
		o.t.Fatal(err)
	}
	role.Runtime, role.Provider, role.Model = rt, kind, model
	if mut != nil {
		mut(&role)
	}
	var h view.Hired
	o.api.do("POST", "/agents", map[string]any{"spec": role}, http.StatusCreated, &h)
	return h.Agent.Member
}

// say posts as the admin in #general and returns the message.
func (o *cliOffice) say(thread int64, body string) bullpen.Message {
	o.t.Helper()
	ch, err := o.m.Office.ChannelByName(context.Background(), o.me, bullpen.GeneralChannel)
	if err != nil {
		o.t.Fatal(err)
	}
	var msg bullpen.Message
	o.api.do("POST", "/channels/"+itoa64(ch.ID)+"/messages", map[string]any{"body": body, "thread_id": thread}, http.StatusCreated, &msg)
	return msg
}

// events returns the stored events after since.
func (o *cliOffice) events(since int64) []bullpen.Event {
	evs, err := o.m.DB.EventsAfter(context.Background(), since, 100000)
	if err != nil {
		o.t.Fatal(err)
	}
	return evs
}

// waitTurnEnd waits for the agent's turn after since to end and returns
// its event.
func (o *cliOffice) waitTurnEnd(agent bullpen.Member, since int64, within time.Duration) (bullpen.TurnEvent, bullpen.Event) {
	o.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, ev := range o.events(since) {
			if ev.Type != bullpen.EventTurnFinished && ev.Type != bullpen.EventTurnFailed {
				continue
			}
			if te, err := bullpen.TurnOf(ev); err == nil && te.AgentID == agent.ID {
				return te, ev
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	o.t.Fatalf("@%s's turn did not end within %s", agent.Handle, within)
	return bullpen.TurnEvent{}, bullpen.Event{}
}

// workspace is the agent's sandbox id.
func (o *cliOffice) workspace(agent bullpen.Member) string {
	o.t.Helper()
	in, err := o.m.Sandboxes.Ensure(context.Background(), agent, sandbox.Spec{})
	if err != nil {
		o.t.Fatal(err)
	}
	return in.ID
}

// inSandbox runs a command in the agent's sandbox, stdin given.
func (o *cliOffice) inSandbox(agent bullpen.Member, stdin string, cmd ...string) sandbox.RunResult {
	o.t.Helper()
	r, err := o.m.Sandboxes.Manager().Run(context.Background(), o.workspace(agent),
		sandbox.ExecRequest{Cmd: cmd, Stdin: strings.NewReader(stdin), Timeout: 2 * time.Minute})
	if err != nil {
		o.t.Fatal(err)
	}
	return r
}

// pyScan reads a secret on stdin and prints every file of the sandbox's
// tree and every process's environ and cmdline that contains it, as an
// attacker inside would look; "ENV:" lines give the Bullpen tokens (bp_…)
// found in processes' environments: the CLI's turn token. Left out: /proc,
// /sys, /dev, and the read-only binds of host programs (/usr and the
// installed CLIs, which exist before any key is configured). A CLI
// server's standing secret (opencode's config apiKey, 64 hex digits) is
// an "ENV:" line too: it stands for the running turn's token.
const pyScan = `
import os, re, sys
secret = sys.stdin.read().encode()
hits = []
for root, dirs, files in os.walk("/"):
    if root == "/":
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr")]
    if root == "/opt/bullpen":
        dirs[:] = [d for d in dirs if d != "clis"]
    for f in files:
        p = os.path.join(root, f)
        try:
            if not os.path.isfile(p) or os.path.islink(p):
                continue
            with open(p, "rb") as fh:
                if secret in fh.read():
                    hits.append("FILE " + p)
        except OSError:
            pass
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    for what in ("environ", "cmdline"):
        try:
            data = open("/proc/%s/%s" % (pid, what), "rb").read()
        except OSError:
            continue
        if secret in data:
            hits.append("PROC %s %s" % (pid, what))
        if what == "environ":
            for tok in re.findall(rb"bp_[a-z2-7]{20,}", data) + re.findall(rb'"apiKey":"([0-9a-f]{64})"', data):
                print("ENV:" + tok.decode())
print("\n".join(hits))
`

// probe is what a scan during the turn saw.
type probe struct {
	mu        sync.Mutex
	done      bool
	leaks     string // where the provider key was found
	token     string // the turn token as the CLI's env has it
	mcpStatus int    // /mcp answered the token during the turn
}

// scanDuringTurn scans the sandbox for the provider key while the CLI
// runs (it waits on the model), and checks that its turn token works.
func (o *cliOffice) scanDuringTurn(agent bullpen.Member, p *probe) {
	o.scanWith(agent, p, "python3", "-c", pyScan)
}

// scanWith is scanDuringTurn with scan, a command that reads the secret
// on stdin and prints what pyScan prints.
func (o *cliOffice) scanWith(agent bullpen.Member, p *probe, scan ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	r := o.inSandbox(agent, providerSecret, scan...)
	for _, line := range strings.Split(strings.TrimSpace(string(r.Stdout)), "\n") {
		if tok, ok := strings.CutPrefix(line, "ENV:"); ok {
			p.token = tok
		} else if line != "" {
			p.leaks += line + "\n"
		}
	}
	p.mcpStatus = o.socketMCPStatus(agent, p.token)
}

// mcpInit is an MCP initialize request.
const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`

// socketMCPStatus is the HTTP status /mcp on agent's socket (where its
// sandbox's bridge leads; a turn token works nowhere else) gives token
// for an initialize.
func (o *cliOffice) socketMCPStatus(agent bullpen.Member, token string) int {
	path, err := o.m.sockets.Socket(context.Background(), agent)
	if err != nil {
		o.t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	req, _ := http.NewRequest("POST", "http://sandbox/mcp", strings.NewReader(mcpInit))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// lastToolResult is the content of the latest tool result a CLI sent.
func lastToolResult(c llmtest.CapturedRequest) string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "tool" {
			return c.Messages[i].Content
		}
	}
	return ""
}

func itoa64(n int64) string { b, _ := json.Marshal(n); return string(b) }
