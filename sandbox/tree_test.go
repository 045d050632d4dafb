package sandbox

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// escaper starts processes that leave the command's process group and
// session: a setsid'd pair, a double-forked sleeper and a nohup'd one,
// then runs its own ending (what a CLI that forks servers would do).
func escaper(ending string) []string {
	return []string{"/bin/sh", "-c", `
setsid sh -c 'sleep 1000 & sleep 1000' </dev/null >/dev/null 2>&1 &
(setsid sleep 1001 </dev/null >/dev/null 2>&1 &)
nohup sleep 1002 </dev/null >/dev/null 2>&1 &
sleep 0.3
echo started
` + ending}
}

// procsInside counts the processes in the sandbox other than init and the
// counting command itself, as a process inside sees them.
func (e *testEnv) procsInside(id string) (int, string) {
	e.t.Helper()
	out := e.py(id, `
import os
me = os.getpid()
rows = []
for p in os.listdir("/proc"):
    if p.isdigit() and int(p) not in (1, me):
        try:
            rows.append(p + " " + open("/proc/%s/cmdline" % p).read().replace("\0", " "))
        except OSError:
            pass
print(len(rows)); print("\n".join(rows))
`)
	n, _ := strconv.Atoi(strings.SplitN(out, "\n", 2)[0])
	return n, out
}

// TestKillTree: an exec with KillTree leaves no process behind, whether it
// ends by its timeout, by cancellation or by crashing, even though it
// forked setsid'd and double-forked children. Without KillTree the same
// children outlive the command (the control that shows the count works).
func TestKillTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	in := e.create(Spec{})
	ctx := context.Background()

	// Control: a plain exec leaves the escapers running.
	if r, err := e.m.Run(ctx, in.ID, ExecRequest{Cmd: escaper("exit 0"), Timeout: 10 * time.Second}); err != nil || r.ExitCode != 0 {
		t.Fatalf("control run: %v %+v", err, r)
	}
	if n, ps := e.procsInside(in.ID); n < 4 {
		t.Fatalf("control: want the escaped children alive, got %d:\n%s", n, ps)
	}
	e.sh(in.ID, "kill -9 -1 2>/dev/null; true") // uid 1000 kills its own
	waitProcs(t, e, in.ID, 0)

	t.Run("timeout", func(t *testing.T) {
		r, err := e.m.Run(ctx, in.ID, ExecRequest{Cmd: escaper("sleep 1000"), Timeout: time.Second, KillTree: true})
		if err != nil || !r.TimedOut {
			t.Fatalf("run: %v timedOut=%v", err, r.TimedOut)
		}
		assertNoProcs(t, e, in.ID)
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		p, err := e.m.Exec(cctx, in.ID, ExecRequest{Cmd: escaper("sleep 1000"), KillTree: true})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 8)
		if _, err := io.ReadFull(p.Stdout(), buf); err != nil || string(buf) != "started\n" {
			t.Fatalf("read: %q %v", buf, err)
		}
		cancel()
		if _, err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		p.Close()
		assertNoProcs(t, e, in.ID)
	})
	t.Run("crash", func(t *testing.T) {
		r, err := e.m.Run(ctx, in.ID, ExecRequest{Cmd: escaper("kill -SEGV $$"), Timeout: 30 * time.Second, KillTree: true})
		if err != nil || r.Signal == "" {
			t.Fatalf("run: %v %+v", err, r)
		}
		assertNoProcs(t, e, in.ID)
	})
	t.Run("exit", func(t *testing.T) {
		r, err := e.m.Run(ctx, in.ID, ExecRequest{Cmd: escaper("exit 3"), Timeout: 30 * time.Second, KillTree: true})
		if err != nil || r.ExitCode != 3 {
			t.Fatalf("run: %v %+v", err, r)
		}
		assertNoProcs(t, e, in.ID)
	})
}

// assertNoProcs checks at once (no waiting: Wait returned, so the tree
// must be gone already) that only init is left.
func assertNoProcs(t *testing.T, e *testEnv, id string) {
	t.Helper()
	if n, ps := e.procsInside(id); n != 0 {
		t.Fatalf("%d processes left after the exec:\n%s", n, ps)
	}
}

func waitProcs(t *testing.T, e *testEnv, id string, want int) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if n, _ := e.procsInside(id); n == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	n, ps := e.procsInside(id)
	t.Fatalf("want %d processes, have %d:\n%s", want, n, ps)
}

// TestKillStrays: KillStrays on a running KillTree exec kills every
// process it started, escaped ones included (setsid'd, double-forked,
// nohup'd), and leaves the command itself running: a server keeps
// serving while what one turn started through it does not live on.
func TestKillStrays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	in := e.create(Spec{})
	p, err := e.m.Exec(context.Background(), in.ID, ExecRequest{Cmd: escaper("exec sleep 1000"), KillTree: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	buf := make([]byte, 8)
	if _, err := io.ReadFull(p.Stdout(), buf); err != nil || string(buf) != "started\n" {
		t.Fatalf("read: %q %v", buf, err)
	}
	if n, ps := e.procsInside(in.ID); n < 5 {
		t.Fatalf("want the command and its escaped children, got %d:\n%s", n, ps)
	}
	n, err := p.KillStrays()
	if err != nil || n < 4 {
		t.Fatalf("KillStrays: %d killed, %v; want the 4 or more children", n, err)
	}
	// The killed children of the shell that exec'd sleep stay zombies
	// (sleep does not reap): count the live ones.
	live := e.py(in.ID, `
import os
me = os.getpid()
print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)
             and open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[0] != "Z"))
`)
	if strings.TrimSpace(live) != "["+strconv.Itoa(p.Pid())+"]" {
		t.Fatalf("after KillStrays want only the command (pid %d) alive, got %s", p.Pid(), live)
	}
	if n, err := p.KillStrays(); err != nil || n != 0 {
		t.Fatalf("second KillStrays: %d, %v", n, err)
	}
	p.Close()
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	assertNoProcs(t, e, in.ID)
	plain, err := e.m.Exec(context.Background(), in.ID, ExecRequest{Cmd: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.KillStrays(); err == nil {
		t.Fatal("KillStrays on an exec without KillTree did not fail")
	}
}
