package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

func TestLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	in := e.create(Spec{Name: "life", Tags: map[string]string{"team": "a", "kind": "x"},
		Env:     map[string]string{"FOO": "bar"},
		Secrets: []Secret{{Name: "TOKEN", Value: "s3cret-env"}, {Name: "KEY", Value: "s3cret-file", File: "/run/secrets/key"}},
		CPU:     0.5, MemoryBytes: 128 << 20, Pids: 100})
	if !strings.HasPrefix(in.ID, "sb_") || len(in.ID) != 19 || in.State != StateRunning {
		t.Fatalf("bad info %+v", in)
	}
	// Secrets never come back through Get/List.
	got, err := e.m.Get(ctx, "life")
	if err != nil || got.ID != in.ID {
		t.Fatalf("Get by name: %v %+v", err, got)
	}
	list, _ := e.m.List(ctx, map[string]string{"team": "a"})
	other, _ := e.m.List(ctx, map[string]string{"team": "b"})
	if len(list) != 1 || len(other) != 0 {
		t.Fatalf("List by tags: %d %d", len(list), len(other))
	}
	b, _ := json.Marshal([]any{got, list})
	if bytes.Contains(b, []byte("s3cret")) {
		t.Fatalf("secret value leaked in Info: %s", b)
	}
	out := e.sh(in.ID, `echo "$FOO $TOKEN"; cat /run/secrets/key; stat -c '%u %a' /run/secrets/key; hostname`)
	if out != "bar s3cret-env\ns3cret-file1000 400\nlife\n" {
		t.Fatalf("env/secrets: %q", out)
	}
	// Duplicate names conflict.
	if _, err := e.m.Create(ctx, Spec{Name: "life"}); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Fatalf("duplicate name: %v", err)
	}
	// Pause: exec refused, files and stats still work, memory kept.
	e.sh(in.ID, "echo kept > /tmp/state")
	if err := e.m.Pause(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Exec(ctx, in.ID, ExecRequest{Cmd: []string{"true"}}); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Fatalf("exec while paused: %v", err)
	}
	if _, err := e.m.Stat(ctx, in.ID, "/tmp/state"); err != nil {
		t.Fatalf("stat while paused: %v", err)
	}
	if u, err := e.m.Stats(ctx, in.ID); err != nil || u.MemoryBytes <= 0 || u.Pids < 1 {
		t.Fatalf("stats while paused: %+v %v", u, err)
	}
	wantCode(t, e.m.Pause(ctx, in.ID), bullpen.ECONFLICT)
	if err := e.m.Resume(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.m.Resume(ctx, in.ID), bullpen.ECONFLICT)
	// Stop keeps files; Start boots again with env and secrets.
	if err := e.m.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if g, _ := e.m.Get(ctx, in.ID); g.State != StateStopped {
		t.Fatalf("state after stop %s", g.State)
	}
	if _, err := e.m.Exec(ctx, in.ID, ExecRequest{Cmd: []string{"true"}}); !bullpen.IsCode(err, bullpen.ECONFLICT) {
		t.Fatalf("exec while stopped: %v", err)
	}
	if u, err := e.m.Stats(ctx, in.ID); err != nil || u.Pids != 0 {
		t.Fatalf("stats while stopped: %+v %v", u, err)
	}
	if err := e.m.WriteFile(ctx, in.ID, "/tmp/offline", strings.NewReader("w"), 0o600); err != nil {
		t.Fatalf("write while stopped: %v", err)
	}
	if err := e.m.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if out := e.sh(in.ID, "cat /tmp/state /tmp/offline; echo $TOKEN"); out != "kept\nws3cret-env\n" {
		t.Fatalf("after restart: %q", out)
	}
	if err := e.m.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	e.checkGone(in.ID)
	if g, err := e.m.Get(ctx, in.ID); err != nil || g.State != StateTerminated {
		t.Fatalf("Get after terminate: %+v %v", g, err)
	}
	wantCode(t, e.m.Terminate(ctx, in.ID), bullpen.ENOTFOUND)
	if l, _ := e.m.List(ctx, nil); len(l) != 0 {
		t.Fatalf("terminated sandbox listed")
	}
	want := "created started exec_started exec_finished"
	if evs := strings.Join(e.eventTypes(in.ID), " "); !strings.HasPrefix(evs, want) ||
		!strings.Contains(evs, "paused") || !strings.Contains(evs, "resumed") ||
		!strings.Contains(evs, "stopped started") || !strings.HasSuffix(evs, "terminated") {
		t.Fatalf("events: %s", evs)
	}
}

func TestExec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.create(Spec{}).ID

	// Streaming: the first line arrives while the command still runs, and
	// stdout and stderr are separate.
	p, err := e.m.Exec(ctx, id, ExecRequest{Cmd: []string{"sh", "-c", "echo one; echo err1 >&2; sleep 3; echo two"}})
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	errDone := make(chan struct{})
	go func() { io.Copy(&errOut, p.Stderr()); close(errDone) }()
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	select {
	case <-p.done:
		t.Fatal("first line arrived only after the command exited")
	default:
	}
	if err != nil || line != "one\n" {
		t.Fatalf("first line %q: %v", line, err)
	}
	res, err := p.Wait()
	<-errDone
	if err != nil || res.Code != 0 || errOut.String() != "err1\n" {
		t.Fatalf("wait: %+v %v stderr=%q", res, err, errOut.String())
	}
	p.Close()

	// Stdin, exit codes, workdir, env.
	r, err := e.m.Run(ctx, id, ExecRequest{Cmd: []string{"sh", "-c", "cat; pwd; echo $X; exit 3"},
		Stdin: strings.NewReader("input\n"), Workdir: "/tmp", Env: map[string]string{"X": "y"}})
	if err != nil || r.ExitCode != 3 || string(r.Stdout) != "input\n/tmp\ny\n" {
		t.Fatalf("run: %+v %v", r, err)
	}
	// Per-exec timeout.
	r, err = e.m.Run(ctx, id, ExecRequest{Cmd: []string{"sleep", "30"}, Timeout: 300 * time.Millisecond})
	if err != nil || !r.TimedOut || r.Signal != "SIGKILL" || r.Duration > 5*time.Second {
		t.Fatalf("timeout: %+v %v", r, err)
	}
	// Kill, and ctx cancellation.
	p, err = e.m.Exec(ctx, id, ExecRequest{Cmd: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Kill()
	if res, _ := p.Wait(); res.Signal != "SIGKILL" {
		t.Fatalf("kill: %+v", res)
	}
	p.Close()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	r, err = e.m.Run(cctx, id, ExecRequest{Cmd: []string{"sleep", "30"}})
	cancel()
	if err == nil || r.Signal != "SIGKILL" {
		t.Fatalf("ctx cancel: %+v %v", r, err)
	}
	// Unknown command.
	_, err = e.m.Exec(ctx, id, ExecRequest{Cmd: []string{"no-such-command"}})
	wantCode(t, err, bullpen.EINVALID)
	// Many concurrent execs.
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := e.m.Run(ctx, id, ExecRequest{Cmd: []string{"sh", "-c", "echo $((" + itoa(i) + "*2))"}})
			if err != nil || strings.TrimSpace(string(r.Stdout)) != itoa(i*2) {
				errs <- string(r.Stdout) + " " + errString(err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for s := range errs {
		t.Errorf("concurrent exec: %s", s)
	}
	// Output larger than pipe buffers, in both streams.
	r = e.run(id, "sh", "-c", "head -c 3000000 /dev/zero; head -c 1000000 /dev/zero >&2")
	if len(r.Stdout) != 3000000 || len(r.Stderr) != 1000000 {
		t.Fatalf("big output: %d %d", len(r.Stdout), len(r.Stderr))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRunOutputCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.RunOutputLimit = 1000 })
	id := e.create(Spec{}).ID
	r := e.run(id, "sh", "-c", "head -c 100000 /dev/zero; echo done >&2")
	if len(r.Stdout) != 1000 || !r.Truncated || string(r.Stderr) != "done\n" || r.ExitCode != 0 {
		t.Fatalf("cap: %d %v %q", len(r.Stdout), r.Truncated, r.Stderr)
	}
}

func TestStatsAndLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.create(Spec{CPU: 0.5, MemoryBytes: 100 << 20, Pids: 50}).ID
	e.run(id, "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	u, err := e.m.Stats(ctx, id)
	if err != nil || u.CPUSeconds <= 0.05 || u.MemoryBytes <= 0 || u.Pids < 1 {
		t.Fatalf("stats %+v %v", u, err)
	}
	// The limits are in place in the cgroups.
	if e.m.cg.v2 {
		t.Skip("limit file check written for cgroup v1")
	}
	read := func(ctrl, f string) string {
		b, _ := os.ReadFile(e.m.cg.dir(ctrl, id) + "/" + f)
		return strings.TrimSpace(string(b))
	}
	if read("memory", "memory.limit_in_bytes") != "104857600" || read("pids", "user/pids.max") != "50" ||
		read("cpu", "cpu.cfs_quota_us") != "50000" {
		t.Fatalf("limits: %s %s %s", read("memory", "memory.limit_in_bytes"), read("pids", "user/pids.max"), read("cpu", "cpu.cfs_quota_us"))
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.create(Spec{Timeout: time.Second})
	if a.ExpiresAt.IsZero() {
		t.Fatal("no ExpiresAt")
	}
	b := e.create(Spec{IdleTimeout: time.Second})
	c := e.create(Spec{IdleTimeout: time.Second, IdleAction: IdlePause})
	// Activity postpones the idle timeout; a running exec counts.
	p, err := e.m.Exec(ctx, c.ID, ExecRequest{Cmd: []string{"sleep", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ga, _ := e.m.Get(ctx, a.ID)
		gb, _ := e.m.Get(ctx, b.ID)
		if ga.State == StateTerminated && gb.State == StateStopped {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if g, _ := e.m.Get(ctx, a.ID); g.State != StateTerminated {
		t.Fatalf("timeout: state %s", g.State)
	}
	e.checkGone(a.ID)
	if g, _ := e.m.Get(ctx, b.ID); g.State != StateStopped {
		t.Fatalf("idle: state %s", g.State)
	}
	if g, _ := e.m.Get(ctx, c.ID); g.State != StateRunning {
		t.Fatalf("idle with running exec: state %s", g.State)
	}
	p.Wait()
	p.Close()
	waitState(t, e.m, c.ID, StatePaused)
	if !strings.Contains(strings.Join(e.eventTypes(a.ID), " "), "timed_out terminated") {
		t.Fatalf("events %v", e.eventTypes(a.ID))
	}
}

func TestCrashAndRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	run := e.create(Spec{Name: "keep", Ports: []int{8080}})
	stopped := e.create(Spec{})
	crash := e.create(Spec{})
	e.sh(run.ID, "echo persisted > /home/sandbox/f")
	e.sh(stopped.ID, "echo s > /home/sandbox/f")
	if err := e.m.Stop(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	// An init that dies is noticed: the sandbox becomes stopped.
	s, _ := e.m.lookup(crash.ID)
	s.mu.Lock()
	pid := s.proc.pid
	s.mu.Unlock()
	if err := syscallKill(pid); err != nil {
		t.Fatal(err)
	}
	waitState(t, e.m, crash.ID, StateStopped)
	// The state changes under the sandbox's lock; its events are emitted
	// just after, outside it.
	evs := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if evs = strings.Join(e.eventTypes(crash.ID), " "); strings.Contains(evs, "crashed") {
			break
		}
	}
	if !strings.Contains(evs, "crashed") {
		t.Fatalf("events %s", evs)
	}
	if err := e.m.Start(ctx, crash.ID); err != nil {
		t.Fatal(err)
	}
	// Restart: a new Manager re-adopts the running sandboxes and keeps
	// the stopped one.
	e.m.Close()
	m2, err := New(ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m2
	if g, err := m2.Get(ctx, "keep"); err != nil || g.State != StateRunning || len(g.Ports) != 1 {
		t.Fatalf("adopted: %+v %v", g, err)
	}
	if out := e.sh(run.ID, "cat /home/sandbox/f"); out != "persisted\n" {
		t.Fatalf("adopted exec: %q", out)
	}
	if g, _ := m2.Get(ctx, stopped.ID); g.State != StateStopped {
		t.Fatalf("stopped after restart: %s", g.State)
	}
	if err := m2.Start(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	if out := e.sh(stopped.ID, "cat /home/sandbox/f"); out != "s\n" {
		t.Fatalf("restarted: %q", out)
	}
	// A Manager with RestartReap removes everything.
	m2.Close()
	cfg := e.cfg
	cfg.OnRestart = RestartReap
	m3, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m3
	if l, _ := m3.List(ctx, nil); len(l) != 0 {
		t.Fatalf("reap left %d sandboxes", len(l))
	}
	for _, id := range []string{run.ID, stopped.ID, crash.ID} {
		e.checkGone(id)
	}
}

func waitState(t *testing.T, m *Manager, id string, want State) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if g, _ := m.Get(context.Background(), id); g.State == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	g, _ := m.Get(context.Background(), id)
	t.Fatalf("state %s, want %s", g.State, want)
}
