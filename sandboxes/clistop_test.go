package sandboxes_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/gateway"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// spentTurns refuses every call for the turn's budget and, at the first
// refusal, stops the run as the agents service does.
type spentTurns struct {
	once    sync.Once
	stop    func()
	stopped chan time.Time
}

func (s *spentTurns) Reserve(context.Context, int64, int, int) (gateway.Budget, gateway.Reservation, error) {
	return gateway.Budget{AgentID: 1, Limit: "turn_tokens", Detail: "@robo stopped: 50000 tokens used in one turn (limit 50000)."},
		gateway.Reservation{}, nil
}

func (s *spentTurns) Settle(context.Context, int64, gateway.Reservation, llm.Usage, bool) error {
	return nil
}

func (s *spentTurns) BudgetStopped(context.Context, int64, gateway.Budget) error {
	s.once.Do(func() { s.stopped <- time.Now(); s.stop() })
	return nil
}

type anyTurn struct{ m bullpen.Member }

func (a anyTurn) AuthenticateTurn(context.Context, string) (bullpen.Member, int64, error) {
	return a.m, 42, nil
}

type noModel struct{}

func (noModel) Upstream(context.Context, bullpen.Member) (gateway.Upstream, error) {
	return gateway.Upstream{Kind: gateway.KindAnthropic, BaseURL: "http://127.0.0.1:1", APIKey: "sk-unused"}, nil
}

// retryForever is a "CLI" that ignores the gateway's 429 and its
// x-should-retry: false, retrying every 200 ms, with a child in the
// background (setsid, so not in its process group) that would outlive it.
const retryForever = `setsid sleep 300 & sleep 300 &
while true; do
  python3 -c 'import urllib.request as u
try: u.urlopen(u.Request("http://127.0.0.1:4100/anthropic/v1/messages", data=b"{\"model\":\"m\",\"max_tokens\":5,\"messages\":[]}", headers={"x-api-key": "t", "content-type": "application/json"}))
except Exception as e: print(e)'
  sleep 0.2
done`

// TestRunCLIBudgetStopKillsTree: a CLI in a real sandbox that keeps
// retrying after the gateway's budget 429 is killed, with every process it
// started, within 2 s of the stop.
func TestRunCLIBudgetStopKillsTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	turns := &spentTurns{stop: cancel, stopped: make(chan time.Time, 1)}
	gw := gateway.New(gateway.Config{Auth: anyTurn{bullpen.Member{ID: 1, Handle: "robo", Kind: bullpen.KindAgent}},
		Upstreams: noModel{}, Turns: turns})
	f, w := cliFixture(t, gw)
	run := bullpen.CLIRun{Argv: []string{"sh", "-c", retryForever}, Timeout: 2 * time.Minute}
	p, err := w.RunCLI(ctx, f.robo, bullpen.SandboxSpec{}, run)
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	go io.Copy(io.Discard, p.Stdout())
	var stopped time.Time
	select {
	case stopped = <-turns.stopped:
	case <-time.After(time.Minute):
		t.Fatal("the CLI never reached the gateway")
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(stopped)
	t.Logf("the run and its tree ended %s after the budget stop", took)
	if took > 2*time.Second {
		t.Errorf("the run ended %s after the budget stop, want within 2 s", took)
	}
	in, _ := f.svc.Ensure(context.Background(), f.robo, sandbox.Spec{})
	r, err := f.svc.Manager().Run(context.Background(), in.ID, sandbox.ExecRequest{Cmd: []string{"python3", "-c",
		"import os; me=os.getpid(); print([p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, me)])"}})
	if err != nil || strings.TrimSpace(string(r.Stdout)) != "[]" {
		t.Fatalf("processes left in the sandbox: %s %v", r.Stdout, err)
	}
}
