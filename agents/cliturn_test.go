package agents

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// fakeCLIs plays a CLI run: the stdout a script gives, then an exit.
type fakeCLIs struct {
	mu      sync.Mutex
	runs    []bullpen.CLIRun
	stdout  []byte
	stderr  string
	exit    bullpen.CLIExit
	hang    bool          // run until killed or the deadline
	linger  bool          // print stdout, then keep running until killed or the deadline
	started chan struct{} // signalled when a run starts (hang)
	ensured []string      // EnsureCLI calls
}

func (f *fakeCLIs) EnsureCLI(_ context.Context, rt runtime.Runtime) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ensured = append(f.ensured, rt.Name())
	return nil
}

func (f *fakeCLIs) RunCLI(ctx context.Context, _ bullpen.Member, _ bullpen.SandboxSpec, run bullpen.CLIRun) (bullpen.CLIProcess, error) {
	f.mu.Lock()
	f.runs = append(f.runs, run)
	f.mu.Unlock()
	p := &fakeProc{f: f, ctx: ctx, killed: make(chan struct{})}
	if f.hang || f.linger {
		pr, pw := io.Pipe()
		p.out = pr
		if f.linger {
			p.out = io.MultiReader(bytes.NewReader(f.stdout), pr)
		}
		go func() {
			select {
			case <-ctx.Done():
			case <-p.killed:
				if f.linger { // as a sandbox process's Close cuts its output
					pw.CloseWithError(io.ErrClosedPipe)
					return
				}
			}
			pw.Close()
		}()
		if f.started != nil {
			f.started <- struct{}{}
		}
	} else {
		p.out = bytes.NewReader(f.stdout)
	}
	return p, nil
}

func (f *fakeCLIs) runCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.runs)
}

type fakeProc struct {
	f        *fakeCLIs
	ctx      context.Context
	out      io.Reader
	killed   chan struct{}
	killOnce sync.Once
}

func (p *fakeProc) Stdout() io.Reader { return p.out }
func (p *fakeProc) Stderr() io.Reader { return strings.NewReader(p.f.stderr) }
func (p *fakeProc) Close() error {
	p.killOnce.Do(func() { close(p.killed) })
	return nil
}
func (p *fakeProc) Wait() (bullpen.CLIExit, error) {
	if !p.f.hang && !p.f.linger {
		return p.f.exit, nil
	}
	select {
	case <-p.ctx.Done():
		return bullpen.CLIExit{Code: 137, Signal: "killed", TimedOut: true}, nil
	case <-p.killed:
		return bullpen.CLIExit{Code: 137, Signal: "killed"}, nil
	}
}

// fakeTokens records minted and revoked turn tokens.
type fakeTokens struct {
	mu      sync.Mutex
	minted  map[int64]time.Duration
	revoked map[int64]bool
}

func (t *fakeTokens) MintTurnToken(_ context.Context, _, turnID int64, ttl time.Duration) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.minted[turnID] = ttl
	return "turn-secret", nil
}

func (t *fakeTokens) RevokeTurnTokens(_ context.Context, turnID int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.revoked[turnID] = true
	return nil
}

func newCLIHarness(t *testing.T, d string, f *fakeCLIs, runtimeName string, turn time.Duration) (*harness, *fakeTokens, bullpen.Member) {
	tok := &fakeTokens{minted: map[int64]time.Duration{}, revoked: map[int64]bool{}}
	h := newHarness(t, d, scriptedOnly(), func(c *Config) { c.CLIs, c.TurnTokens = f, tok })
	role, err := h.svc.cat.Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	role.Runtime, role.Timeouts.Turn = runtimeName, bullpen.Duration(turn)
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role})
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	return h, tok, hired.Agent.Member
}

func recordedStream(t *testing.T, name string) []byte {
	b, err := os.ReadFile("runtime/testdata/" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCLITurnRecorded: a turn of a claude-code agent runs the CLI once with
// the work packet on stdin, the brief, the per-turn token in its env and
// the turn deadline; the CLI's shell command becomes tool events with its
// result (Bullpen's own MCP call does not: the endpoint records it); the
// turn finishes and its token is revoked.
func TestCLITurnRecorded(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			f := &fakeCLIs{stdout: recordedStream(t, "claude-code")}
			h, tok, eng := newCLIHarness(t, d, f, bullpen.RuntimeClaudeCode, time.Minute)
			since := h.off.Hub().Last()
			h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" write hello.sh, run it and post the output")
			h.waitIdle()
			if f.runCount() != 1 {
				t.Fatalf("%d CLI runs, want 1", f.runCount())
			}
			run := f.runs[0]
			argv := strings.Join(run.Argv, " ")
			if !strings.Contains(run.Stdin, "write hello.sh") || !strings.Contains(argv, "--append-system-prompt") ||
				!strings.Contains(argv, "@"+eng.Handle) || run.Env["ANTHROPIC_API_KEY"] != "turn-secret" ||
				run.Timeout <= 0 || run.Timeout > time.Minute {
				t.Fatalf("run: stdin %q argv %q env %v timeout %s", run.Stdin, argv, run.Env, run.Timeout)
			}
			var started, finished []bullpen.ToolEvent
			var turn bullpen.TurnEvent
			for _, ev := range h.events(since) {
				switch ev.Type {
				case bullpen.EventToolStarted:
					te, _ := bullpen.ToolOf(ev)
					started = append(started, te)
				case bullpen.EventToolFinished:
					te, _ := bullpen.ToolOf(ev)
					finished = append(finished, te)
				case bullpen.EventTurnFinished, bullpen.EventTurnFailed:
					turn, _ = bullpen.TurnOf(ev)
					if ev.Type == bullpen.EventTurnFailed {
						t.Fatalf("turn failed: %s", turn.Error)
					}
				}
			}
			f.mu.Lock()
			ensured := strings.Join(f.ensured, ",")
			f.mu.Unlock()
			if strings.Count(ensured, "claude-code") < 2 { // at hire (in the background) and at the turn
				t.Errorf("EnsureCLI calls: %q", ensured)
			}
			if len(started) != 1 || started[0].Tool != "Bash" || !strings.Contains(string(started[0].Arguments), "hello.sh") {
				t.Fatalf("tool starts: %+v", started)
			}
			if len(finished) != 1 || finished[0].State != "ok" || !strings.Contains(finished[0].Result, "hello from the script") {
				t.Fatalf("tool ends: %+v", finished)
			}
			if turn.TurnID == 0 || tok.minted[turn.TurnID] == 0 || !tok.revoked[turn.TurnID] {
				t.Fatalf("token of turn %d: minted %v revoked %v", turn.TurnID, tok.minted, tok.revoked)
			}
			for _, m := range h.messages(since) {
				if strings.Contains(m, "Posted the output.") {
					t.Errorf("the final text was posted although the CLI posted through MCP: %q", m)
				}
			}
		})
	}
}

// TestCLITurnFailures: garbage on stdout, a non-zero exit and a hung CLI
// each end the turn with a visible, specific notice.
func TestCLITurnFailures(t *testing.T) {
	d := storetest.Dialects(t)[0]
	cases := []struct {
		name   string
		f      *fakeCLIs
		notice string
	}{
		{"garbage", &fakeCLIs{stdout: []byte("Welcome to the CLI!\n")}, "printed output that is not its JSON event stream"},
		{"exit", &fakeCLIs{stdout: nil, stderr: "fatal: config broken\n", exit: bullpen.CLIExit{Code: 3}}, "claude-code exited with status 3: fatal: config broken"},
		{"no result", &fakeCLIs{stdout: []byte(`{"type":"system","subtype":"init","session_id":"s"}` + "\n")}, "ended without a final result"},
		{"hung", &fakeCLIs{hang: true}, "used the whole turn deadline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, tok, eng := newCLIHarness(t, d, c.f, bullpen.RuntimeClaudeCode, 2*time.Second)
			since := h.off.Hub().Last()
			h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" go")
			h.waitIdle()
			msgs := strings.Join(h.messages(since), "\n")
			if !strings.Contains(msgs, c.notice) {
				t.Fatalf("want a notice with %q, messages:\n%s", c.notice, msgs)
			}
			if len(tok.revoked) != 1 {
				t.Fatalf("token not revoked: %v", tok.revoked)
			}
		})
	}
}

// TestCLITurnFinalTextPosted: a CLI that answers in text without calling
// post_message gets its answer posted, as the builtin loop does.
func TestCLITurnFinalTextPosted(t *testing.T) {
	d := storetest.Dialects(t)[0]
	stream := `{"type":"thread.started","thread_id":"t1"}
{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"All done: 42."}}
{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}
`
	f := &fakeCLIs{stdout: []byte(stream)}
	h, _, eng := newCLIHarness(t, d, f, bullpen.RuntimeCodex, time.Minute)
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" answer")
	h.waitIdle()
	if got := strings.Join(h.messages(since), "\n"); !strings.Contains(got, "@"+eng.Handle+": All done: 42.") {
		t.Fatalf("messages:\n%s", got)
	}
}

// TestCLITurnNotRerunAfterCrash: a server that dies while the CLI runs
// does not start it again for the same turn after the restart; the
// channel is told, and the wake is answered.
func TestCLITurnNotRerunAfterCrash(t *testing.T) {
	d := storetest.Dialects(t)[0]
	f := &fakeCLIs{hang: true, started: make(chan struct{}, 1)}
	h, tok, eng := newCLIHarness(t, d, f, bullpen.RuntimeClaudeCode, time.Minute)
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" long job")
	<-f.started
	h.close() // the crash
	h.open(scriptedOnly(), func(c *Config) { c.CLIs, c.TurnTokens = f, tok })
	h.start()
	h.waitIdle()
	if n := f.runCount(); n != 1 {
		t.Fatalf("the CLI ran %d times, want once", n)
	}
	if got := strings.Join(h.messages(since), "\n"); !strings.Contains(got, "interrupted by a server restart") {
		t.Fatalf("messages:\n%s", got)
	}
}

// cliModel is the office's provider in these tests: a CLI turn never
// calls it (the CLI calls the gateway), so any call fails the test.
type cliModel struct{}

func (cliModel) Name() string { return "scripted" }
func (cliModel) Complete(context.Context, llm.Request, func(string)) (llm.Response, error) {
	panic("a CLI turn called the builtin model")
}

func scriptedOnly() map[string]llm.Provider { return map[string]llm.Provider{"scripted": cliModel{}} }

// TestCLITurnResume: with resume: true, the session id the CLI reported is
// stored and the next turn resumes it; a fresh role never resumes.
func TestCLITurnResume(t *testing.T) {
	d := storetest.Dialects(t)[0]
	stream := recordedStream(t, "claude-code")
	tok := &fakeTokens{minted: map[int64]time.Duration{}, revoked: map[int64]bool{}}
	f := &fakeCLIs{stdout: stream}
	h := newHarness(t, d, scriptedOnly(), func(c *Config) { c.CLIs, c.TurnTokens = f, tok })
	role, _ := h.svc.cat.Role("starter/engineer")
	role.Runtime, role.Resume = bullpen.RuntimeClaudeCode, true
	hired, err := h.svc.Hire(context.Background(), h.admin, bullpen.HireInput{Spec: &role})
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	for i := 0; i < 2; i++ {
		h.post(h.admin, h.general.ID, 0, "@"+hired.Agent.Handle+" next")
		h.waitIdle()
	}
	if f.runCount() != 2 {
		t.Fatalf("%d runs", f.runCount())
	}
	first, second := strings.Join(f.runs[0].Argv, " "), strings.Join(f.runs[1].Argv, " ")
	const sess = "b2e2b8b2-d740-45c0-9e9e-e2c8b4387ee5" // in the recorded stream
	if strings.Contains(first, "--resume") || strings.Contains(first, "--no-session-persistence") ||
		!strings.Contains(second, "--resume "+sess) {
		t.Fatalf("first run %q\nsecond run %q", first, second)
	}
}

// TestCLIBudgetStopKillsRun: when the gateway refuses a CLI turn a model
// call for its budget, the CLI's run is killed at once (a CLI that retries
// a 429 for minutes does not keep the turn running), the turn ends as
// limited within 2 s, and the notice says the budget stopped it.
func TestCLIBudgetStopKillsRun(t *testing.T) {
	d := storetest.Dialects(t)[0]
	f := &fakeCLIs{hang: true, started: make(chan struct{}, 1)}
	h, _, eng := newCLIHarness(t, d, f, bullpen.RuntimeClaudeCode, time.Minute)
	ctx := context.Background()
	since := h.off.Hub().Last()
	h.post(h.admin, h.general.ID, 0, "@"+eng.Handle+" spend it all")
	<-f.started
	turns, err := h.db.Turns(ctx, eng.ID, 1)
	if err != nil || len(turns) != 1 || turns[0].State != bullpen.TurnRunning {
		t.Fatalf("running turn: %+v %v", turns, err)
	}
	detail := "@" + eng.Handle + " stopped: 120500 tokens used in one turn (limit 120000)."
	stopped := time.Now()
	if err := h.svc.BudgetStopped(ctx, turns[0].ID, gateway.Budget{Limit: bullpen.LimitTurnTokens, Detail: detail}); err != nil {
		t.Fatal(err)
	}
	var turn bullpen.Turn
	for {
		turn, _ = h.db.Turn(ctx, turns[0].ID)
		if turn.State != bullpen.TurnRunning || time.Since(stopped) > 10*time.Second {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(stopped)
	if turn.State != bullpen.TurnDone || turn.Error != "limit: "+bullpen.LimitTurnTokens || took > 2*time.Second {
		t.Fatalf("turn %s %q %s after the budget stop; want done, limit: %s, within 2 s", turn.State, turn.Error, took, bullpen.LimitTurnTokens)
	}
	h.waitIdle()
	msgs := strings.Join(h.messages(since), "\n")
	if !strings.Contains(msgs, detail+" Its CLI run was stopped.") || strings.Contains(msgs, "deadline") {
		t.Fatalf("want the budget notice saying the run was stopped, messages:\n%s", msgs)
	}
}
