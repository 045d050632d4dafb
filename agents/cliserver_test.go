package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// serverCLIs plays opencode as a server: a serve run says it listens and
// runs until killed; an attach run prints the recorded stream and exits
// with the next of exits (0 when none is left). A run of `opencode run`
// (the one-shot fallback) plays the same stream.
type serverCLIs struct {
	fakeCLIs
	mu      sync.Mutex
	serves  []*serverProc
	attach  []bullpen.CLIRun
	oneShot []bullpen.CLIRun
	exits   []int
}

type serverProc struct {
	run    bullpen.CLIRun
	out    *io.PipeReader
	killed chan struct{}
	once   sync.Once
}

func (p *serverProc) Stdout() io.Reader { return p.out }
func (p *serverProc) Stderr() io.Reader { return strings.NewReader("") }
func (p *serverProc) Close() error {
	p.once.Do(func() { close(p.killed) })
	return nil
}
func (p *serverProc) Wait() (bullpen.CLIExit, error) {
	<-p.killed
	return bullpen.CLIExit{Code: 137, Signal: "killed"}, nil
}
func (p *serverProc) dead() bool {
	select {
	case <-p.killed:
		return true
	default:
		return false
	}
}

func (f *serverCLIs) RunCLI(ctx context.Context, agent bullpen.Member, spec bullpen.SandboxSpec, run bullpen.CLIRun) (bullpen.CLIProcess, error) {
	argv := strings.Join(run.Argv, " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case strings.Contains(argv, " serve "):
		pr, pw := io.Pipe()
		p := &serverProc{run: run, out: pr, killed: make(chan struct{})}
		go func() {
			_, _ = pw.Write([]byte("opencode server listening on http://127.0.0.1:" + run.Argv[len(run.Argv)-1] + "\n"))
			select {
			case <-p.killed:
			case <-ctx.Done():
				p.Close()
			}
			pw.Close()
		}()
		f.serves = append(f.serves, p)
		return p, nil
	case strings.Contains(argv, "attach.mjs"):
		f.attach = append(f.attach, run)
		exit := 0
		if len(f.exits) > 0 {
			exit, f.exits = f.exits[0], f.exits[1:]
		}
		return &fakeProc{f: &fakeCLIs{exit: bullpen.CLIExit{Code: exit}, stderr: "boom"}, ctx: ctx, out: bytes.NewReader(f.stdout),
			killed: make(chan struct{})}, nil
	default:
		f.oneShot = append(f.oneShot, run)
		return &fakeProc{f: &fakeCLIs{}, ctx: ctx, out: bytes.NewReader(f.stdout), killed: make(chan struct{})}, nil
	}
}

// fakeLender records lends; refuse makes Lend fail.
type fakeLender struct {
	mu      sync.Mutex
	lends   []lendCall
	held    int
	overlap bool
	refuse  bool
}

type lendCall struct{ secret, token string }

func (l *fakeLender) Lend(_ int64, secret, token string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refuse {
		return nil, errors.New("refused")
	}
	if l.held > 0 {
		l.overlap = true
	}
	l.held++
	l.lends = append(l.lends, lendCall{secret, token})
	var once sync.Once
	return func() { once.Do(func() { l.mu.Lock(); l.held--; l.mu.Unlock() }) }, nil
}

func newServerHarness(t *testing.T, f *serverCLIs, l *fakeLender) (*harness, bullpen.Member) {
	t.Helper()
	f.stdout = recordedStream(t, "opencode")
	tok := &fakeTokens{minted: map[int64]time.Duration{}, revoked: map[int64]bool{}}
	h := newHarness(t, storetest.Dialects(t)[0], scriptedOnly(), func(c *Config) { c.CLIs, c.TurnTokens, c.CLILender = f, tok, l })
	role, err := h.svc.cat.Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	role.Runtime, role.Timeouts.Turn = bullpen.RuntimeOpenCode, bullpen.Duration(time.Minute)
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role})
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	return h, hired.Agent.Member
}

func (h *harness) turnOK(t *testing.T, agent bullpen.Member, say string) bullpen.TurnEvent {
	t.Helper()
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@"+agent.Handle+" "+say)
	h.waitIdle()
	for _, ev := range h.events(since) {
		if ev.Type == bullpen.EventTurnFinished || ev.Type == bullpen.EventTurnFailed {
			te, _ := bullpen.TurnOf(ev)
			return te
		}
	}
	t.Fatalf("no turn ended after %q", say)
	return bullpen.TurnEvent{}
}

// TestCLIServerServesTurns: an opencode agent's first turn starts its
// server (with a standing secret, not the turn's token, in its config)
// and runs attached to it; the next turn reuses it. Each turn lends its
// own token to the secret and gives it back when it ends.
func TestCLIServerServesTurns(t *testing.T) {
	f, l := &serverCLIs{}, &fakeLender{}
	h, eng := newServerHarness(t, f, l)
	for i, say := range []string{"first", "second"} {
		if te := h.turnOK(t, eng, say); te.Error != "" {
			t.Fatalf("turn %d failed: %s", i+1, te.Error)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(f.serves) != 1 || len(f.attach) != 2 || len(f.oneShot) != 0 {
		t.Fatalf("%d server starts, %d attached runs, %d one-shot runs; want 1, 2, 0", len(f.serves), len(f.attach), len(f.oneShot))
	}
	srv := f.serves[0]
	var cfg struct {
		Provider map[string]struct {
			Options struct {
				APIKey string `json:"apiKey"`
			} `json:"options"`
		} `json:"provider"`
		MCP map[string]struct {
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal([]byte(srv.run.Env["OPENCODE_CONFIG_CONTENT"]), &cfg); err != nil {
		t.Fatal(err)
	}
	secret := cfg.Provider["anthropic"].Options.APIKey
	if len(secret) < 32 || secret == "turn-secret" || cfg.MCP["bullpen"].Headers["Authorization"] != "Bearer "+secret {
		t.Fatalf("the server's credential: key %q, MCP header %q; want a standing secret", secret, cfg.MCP["bullpen"].Headers["Authorization"])
	}
	if srv.dead() {
		t.Fatal("the server was killed after clean turns")
	}
	if len(l.lends) != 2 || l.held != 0 || l.overlap {
		t.Fatalf("lends %d (held %d, overlap %v); want 2 given back", len(l.lends), l.held, l.overlap)
	}
	for i, c := range l.lends {
		if c.secret != secret || c.token != "turn-secret" {
			t.Fatalf("lend %d: %+v", i, c)
		}
	}
	for i, run := range f.attach {
		if run.Env["OC_PASSWORD"] != srv.run.Env["OPENCODE_SERVER_PASSWORD"] || run.Env["OC_PASSWORD"] == "" ||
			!strings.HasSuffix(run.Env["OC_URL"], ":"+srv.run.Argv[len(srv.run.Argv)-1]) || strings.Contains(strings.Join(run.Argv, " "), "turn-secret") {
			t.Fatalf("attached run %d: argv %q env %v", i, run.Argv, run.Env)
		}
		if _, ok := run.Env["OPENCODE_CONFIG_CONTENT"]; ok {
			t.Fatalf("attached run %d carries a config (and a credential)", i)
		}
	}
	if !strings.Contains(f.attach[1].Stdin, "second") {
		t.Fatalf("second run's stdin: %q", f.attach[1].Stdin)
	}
}

// TestCLIServerStoppedAfterBadTurn: a turn that does not end cleanly
// stops the server with everything it started (nothing of that turn runs
// on into the next), and the next turn starts a fresh one; so does an
// edit of what the server was started with.
func TestCLIServerStoppedAfterBadTurn(t *testing.T) {
	f, l := &serverCLIs{exits: []int{0, 3}}, &fakeLender{}
	h, eng := newServerHarness(t, f, l)
	h.turnOK(t, eng, "one")
	if te := h.turnOK(t, eng, "two"); te.Error == "" {
		t.Fatal("turn two succeeded; its run exited 3")
	}
	f.mu.Lock()
	first := f.serves[0]
	f.mu.Unlock()
	if !first.dead() {
		t.Fatal("the server outlived a failed turn")
	}
	h.turnOK(t, eng, "three")
	model := "claude-opus-4-1"
	if _, err := h.svc.Update(context.Background(), h.admin, eng.ID, bullpen.AgentUpdate{Model: &model}); err != nil {
		t.Fatal(err)
	}
	h.turnOK(t, eng, "four")
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.serves) != 3 || !f.serves[1].dead() || f.serves[2].dead() {
		t.Fatalf("%d server starts; want 3 (after the failure and after the edit), the last one alive", len(f.serves))
	}
	if !strings.Contains(f.serves[2].run.Env["OPENCODE_CONFIG_CONTENT"], model) {
		t.Fatalf("the restarted server's config lacks the new model")
	}
	if l.held != 0 {
		t.Fatalf("%d lends still held", l.held)
	}
}

// TestCLIServerFallsBack: when the server cannot serve (here the lend is
// refused), the turn runs the CLI once, as before, and answers.
func TestCLIServerFallsBack(t *testing.T) {
	f, l := &serverCLIs{}, &fakeLender{refuse: true}
	h, eng := newServerHarness(t, f, l)
	if te := h.turnOK(t, eng, "go"); te.Error != "" {
		t.Fatalf("turn failed: %s", te.Error)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.oneShot) != 1 || len(f.attach) != 0 || len(f.serves) != 0 {
		t.Fatalf("%d one-shot, %d attached, %d servers; want 1, 0, 0", len(f.oneShot), len(f.attach), len(f.serves))
	}
	if f.oneShot[0].Env["OPENCODE_CONFIG_CONTENT"] == "" || !strings.Contains(strings.Join(f.oneShot[0].Argv, " "), " run ") {
		t.Fatalf("one-shot run: %q", f.oneShot[0].Argv)
	}
}
