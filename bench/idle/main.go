// Command idle (bench/idle) measures what idle agents cost and how fast a
// woken agent gets to work, against the real server (bin/bullpen on
// loopback, real sandboxes, the built-in loop against a scripted
// OpenAI-compatible model on loopback):
//
//  1. it hires -agents agents (a real role, starter/engineer), wakes each
//     once so that each has its sandbox workspace, then leaves them idle
//     for -idle and prints the model calls made meanwhile (counted at the
//     model server; must be 0), the server's own CPU time over the window
//     (/proc/PID/stat: user+system of the server process) and its resident
//     memory (/proc/PID/status), and the memory of the agents' sandboxes
//     still alive (they are stopped after -sandbox-idle without use). The
//     admin's websocket stays open through the window, as a dashboard's
//     would, and the sandboxes' idle stops fall inside it;
//  2. it wakes -wakes of them with an @mention, first with the sandbox
//     stopped for idleness, then again with it running, and prints the
//     median time from the message post to the first output of the
//     agent's first tool call (`echo hi`), seen on the admin's websocket.
//
// It exits 1 when an idle agent made a model call or a wake failed.
//
//	make build && go run ./bench/idle            # -idle 10m
//	go run ./bench/idle -idle 30s -wakes 10      # short
//
// -model-delay makes the scripted model take as long as a real one to
// answer: the wake figures then show the sandbox start hidden behind it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/bullpen-hq/bullpen/internal/benchkit"
)

// config is the bench's flags.
type config struct {
	bin         string
	agents      int
	idle        time.Duration
	sandboxIdle time.Duration
	wakes       int
	role        string
	modelDelay  time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/bullpen", "the server binary (make build)")
	flag.IntVar(&c.agents, "agents", 50, "agents hired and left idle")
	flag.DurationVar(&c.idle, "idle", 10*time.Minute, "how long the agents are left idle")
	flag.DurationVar(&c.sandboxIdle, "sandbox-idle", 0, "the server's --agent-sandbox-idle (0: a third of -idle, at most 1m)")
	flag.IntVar(&c.wakes, "wakes", 20, "wakes measured in each case (at most -agents)")
	flag.StringVar(&c.role, "role", "starter/engineer", "the role hired")
	flag.DurationVar(&c.modelDelay, "model-delay", 0, "the fake model's time to first byte of each answer (0: at once)")
	flag.Parse()
	if c.sandboxIdle == 0 {
		c.sandboxIdle = max(time.Second, min(time.Minute, c.idle/3).Truncate(time.Second))
	}
	c.wakes = min(c.wakes, c.agents)
	ok, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "idlebench:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run reports false when a figure breaks a hard rule (a model call by an
// idle agent).
func run(c config) (bool, error) {
	if c.sandboxIdle >= c.idle {
		return false, fmt.Errorf("-sandbox-idle %s must be shorter than -idle %s, so that the sandboxes stop for idleness", c.sandboxIdle, c.idle)
	}
	m := newModel(c.modelDelay)
	defer m.Close()
	srv, stop, err := startServer(c.bin, m.fake.BaseURL(), c.sandboxIdle)
	if err != nil {
		return false, err
	}
	defer stop()
	b, err := newBench(context.Background(), srv, c)
	if err != nil {
		return false, err
	}
	defer b.cleanup()
	fmt.Printf("server %s (pid %d); %d agents (%s); sandboxes stop after %s idle; model answers after %s; load average %s\n",
		srv.URL, srv.Cmd.Process.Pid, c.agents, c.role, c.sandboxIdle, c.modelDelay, benchkit.LoadAvg())
	if err := b.warmUp(); err != nil {
		return false, err
	}
	idle, err := b.idleWindow(m)
	if err != nil {
		return false, err
	}
	idle.print()
	wk, err := b.measureWakes()
	if err != nil {
		return false, err
	}
	wk.print()
	fmt.Printf("load average at the end %s\n", benchkit.LoadAvg())
	if err := idle.verdict(); err != nil {
		fmt.Fprintln(os.Stderr, "idlebench: FAIL:", err)
		return false, nil
	}
	return true, nil
}

// verdict is the hard rule of the idle window: an idle agent calls no model.
func (r idleResult) verdict() error {
	if r.calls > 0 {
		return fmt.Errorf("%d model calls while the agents were idle", r.calls)
	}
	return nil
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
