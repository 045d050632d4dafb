package main

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/client"
	"github.com/bullpen-hq/bullpen/internal/benchkit"
)

// bench is one run against one server.
type bench struct {
	ctx     context.Context
	cfg     config
	srv     *benchkit.Server
	c       *client.Client
	w       *watch
	channel int64
	agents  []bullpen.AgentView
}

// newBench hires the agents and opens the admin's websocket.
func newBench(ctx context.Context, srv *benchkit.Server, cfg config) (*bench, error) {
	c, err := client.New(srv.URL, srv.Token)
	if err != nil {
		return nil, err
	}
	b := &bench{ctx: ctx, cfg: cfg, srv: srv, c: c}
	ch, err := c.ChannelNamed(ctx, "general")
	if err != nil {
		return nil, fmt.Errorf("#general: %w", err)
	}
	b.channel = ch.ID
	for i := range cfg.agents {
		h, err := c.Hire(ctx, bullpen.HireInput{Role: cfg.role, Handle: fmt.Sprintf("idle%02d", i+1)})
		if err != nil {
			return nil, fmt.Errorf("hire: %w", err)
		}
		b.agents = append(b.agents, h.Agent)
	}
	if b.w, err = openWatch(ctx, srv.URL, srv.Token); err != nil {
		return nil, err
	}
	return b, nil
}

// cleanup terminates the sandboxes, so the data directory can go.
func (b *bench) cleanup() {
	if b.w != nil {
		b.w.Close()
	}
	sbs, _ := b.c.Sandboxes(b.ctx, nil, false)
	for _, sb := range sbs {
		_ = b.c.TerminateSandbox(b.ctx, sb.ID)
	}
}

// warmUp wakes every agent once, all at once, so each has run a command
// in its own (new) sandbox, and waits for every turn to end.
func (b *bench) warmUp() error {
	t0 := time.Now()
	left := map[int64]bool{}
	for _, a := range b.agents {
		if _, err := b.c.Post(b.ctx, b.channel, 0, "@"+a.Handle+" please run echo hi"); err != nil {
			return err
		}
		left[a.ID] = true
	}
	deadline := time.After(5 * time.Minute)
	for len(left) > 0 {
		select {
		case a, ok := <-b.w.evs:
			if !ok {
				return fmt.Errorf("websocket: %v", <-b.w.err)
			}
			if t, ok := turnOf(a.ev); ok && t.ended && left[t.AgentID] {
				if t.Error != "" {
					return fmt.Errorf("warm-up turn of agent %d: %s", t.AgentID, t.Error)
				}
				delete(left, t.AgentID)
			}
		case <-deadline:
			return fmt.Errorf("warm-up: %d turns still running after 5 min", len(left))
		}
	}
	fmt.Printf("warm-up: %d agents each ran a command in a new sandbox in %s\n", len(b.agents), time.Since(t0).Round(time.Millisecond))
	return nil
}

// idleResult is what the idle window cost.
type idleResult struct {
	window         time.Duration
	calls          int64
	cpu            time.Duration
	rss0, rss1     int64
	anon1          int64
	running, total int
	sandboxMem     int64
}

// idleWindow leaves the agents alone for cfg.idle and samples the server
// and the model server around it.
func (b *bench) idleWindow(m *model) (idleResult, error) {
	calls0 := m.Calls()
	s0, err := sample(b.srv.Cmd.Process.Pid)
	if err != nil {
		return idleResult{}, err
	}
	fmt.Printf("idle: leaving %d agents alone for %s ...\n", len(b.agents), b.cfg.idle)
	time.Sleep(b.cfg.idle)
	s1, err := sample(b.srv.Cmd.Process.Pid)
	if err != nil {
		return idleResult{}, err
	}
	r := idleResult{window: s1.at.Sub(s0.at), calls: m.Calls() - calls0, cpu: s1.cpu - s0.cpu, rss0: s0.rssBytes, rss1: s1.rssBytes, anon1: s1.anonBytes}
	sbs, err := b.c.Sandboxes(b.ctx, nil, true)
	if err != nil {
		return r, err
	}
	for _, sb := range sbs { // only the agents' workspaces exist here
		r.total++
		if sb.State != "stopped" {
			r.running++
			if sb.Usage != nil {
				r.sandboxMem += sb.Usage.MemoryBytes
			}
		}
	}
	return r, nil
}

func (r idleResult) print() {
	pct := r.cpu.Seconds() / r.window.Seconds() * 100
	fmt.Printf("idle %s: %d model calls; server CPU %.2f s (%.3f%% of one core)\n", r.window.Round(time.Second), r.calls, r.cpu.Seconds(), pct)
	fmt.Printf("  server RSS %.1f MiB at start, %.1f MiB at end (%.1f MiB its own; the rest file pages, mostly the binary's)\n",
		mib(r.rss0), mib(r.rss1), mib(r.anon1))
	fmt.Printf("  agent sandboxes: %d of %d alive, using %.1f MiB\n", r.running, r.total, mib(r.sandboxMem))
	fmt.Printf("figure idle_model_calls %d count\n", r.calls)
	fmt.Printf("figure idle_cpu_seconds %.2f s\n", r.cpu.Seconds())
	fmt.Printf("figure idle_cpu_pct %.3f %%\n", pct)
	fmt.Printf("figure idle_rss_mib %.1f MiB\n", mib(r.rss1))
	fmt.Printf("figure idle_sandbox_mib %.1f MiB\n", mib(r.sandboxMem))
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
