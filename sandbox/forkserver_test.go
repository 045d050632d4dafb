package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ppidOf is the parent pid of pid (field 4 of /proc/pid/stat).
func ppidOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("stat of %d: %v", pid, err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, _ := strconv.Atoi(f[1])
	return n
}

// initPid is the host pid of sandbox id's init.
func (e *testEnv) initPid(id string) int {
	e.t.Helper()
	s, err := e.m.lookup(id)
	if err != nil {
		e.t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meta.InitPid
}

// gone waits until pid no longer exists (or is a zombie) and fails after a
// few seconds.
func gone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs", what, pid)
		}
	}
}

// Pooled and cold-started inits are the fork-server's children, not this
// process's; Close ends the fork-server. With either init binary: the
// fork-server is the init binary in a mode of its own.
func TestForkServerStartsInits(t *testing.T) {
	for name, path := range initModes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			forkServerStartsInits(t, newEnv(t, poolOn, func(c *Config) { c.InitPath = path }))
		})
	}
}

func forkServerStartsInits(t *testing.T, e *testEnv) {
	fs := e.m.fs.pid()
	if fs == 0 || fs == os.Getpid() {
		t.Fatalf("fork-server pid %d (error %v)", fs, e.m.ForkServerError())
	}
	pooled := e.pooled()
	if len(pooled) != DefaultInitPool {
		t.Fatalf("pooled %v", pooled)
	}
	for id, pid := range pooled {
		if pp := ppidOf(t, pid); pp != fs {
			t.Errorf("pooled %s: parent %d, want the fork-server %d (this process: %d)", id, pp, fs, os.Getpid())
		}
	}
	// Empty the pool (two creates) so that the third starts cold.
	var ids []string
	for range DefaultInitPool + 1 {
		in := e.create(Spec{})
		ids = append(ids, in.ID)
	}
	cold := ids[DefaultInitPool]
	if _, ok := pooled[cold]; ok {
		t.Fatalf("third create %s was pooled", cold)
	}
	for _, id := range ids {
		if pp := ppidOf(t, e.initPid(id)); pp != fs {
			t.Errorf("sandbox %s: init's parent %d, want the fork-server %d", id, pp, fs)
		}
		if out := e.sh(id, "echo hi"); out != "hi\n" {
			t.Errorf("sandbox %s: %q", id, out)
		}
	}
	// The fork-server reaps what it started: a stopped init leaves no zombie.
	pid := e.initPid(cold)
	if err := e.m.Stop(t.Context(), cold); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stopped init %d not reaped", pid)
		}
	}
	if err := e.m.TerminateAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.m.Close()
	for _, id := range ids {
		e.checkGone(id)
	}
	e.m = nil // closed: nothing left for newEnv's cleanup
	if _, err := os.Stat("/proc/" + strconv.Itoa(fs)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("fork-server %d left after Close: %v", fs, err)
	}
}

// A killed fork-server is restarted; when it cannot be, the Manager clones
// inits itself. Sandboxes keep working either way.
func TestForkServerKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.InitPool = new(0) })
	first := e.m.fs.pid()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gone(t, first, "killed fork-server")
	a := e.create(Spec{})
	second := e.m.fs.pid()
	if second == 0 || second == first || e.m.ForkServerError() != nil {
		t.Fatalf("fork-server after a kill: pid %d (was %d), error %v", second, first, e.m.ForkServerError())
	}
	if pp := ppidOf(t, e.initPid(a.ID)); pp != second {
		t.Errorf("init's parent %d, want the restarted fork-server %d", pp, second)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(first)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("killed fork-server %d not reaped: %v", first, err)
	}
	// Kill it again and make its restart fail: the create falls back.
	e.m.fs.mu.Lock()
	e.m.fs.path = "/nonexistent/" + InitBinaryName
	e.m.fs.mu.Unlock()
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gone(t, second, "killed fork-server")
	b := e.create(Spec{})
	if err := e.m.ForkServerError(); !errors.Is(err, errForkServerOff) {
		t.Errorf("ForkServerError after a failed restart: %v", err)
	}
	if pp := ppidOf(t, e.initPid(b.ID)); pp != os.Getpid() {
		t.Errorf("fallback init's parent %d, want this process %d", pp, os.Getpid())
	}
	for _, id := range []string{a.ID, b.ID} {
		if out := e.sh(id, "echo hi"); out != "hi\n" {
			t.Errorf("sandbox %s: %q", id, out)
		}
	}
	if pid := e.m.fs.pid(); pid != 0 {
		t.Errorf("fork-server %d runs while off", pid)
	}
}

// A malformed request gets an error answer, starts nothing, and the
// fork-server goes on serving.
func TestForkServerBadRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.InitPool = new(0) })
	fs := e.m.fs
	pid := fs.pid()
	fs.mu.Lock()
	// One fd instead of four.
	_, _, fail, err := fs.request([]byte("100000\x001\x00x\x00"), []int{int(os.Stdin.Fd())})
	fs.mu.Unlock()
	if err == nil || fail != forkOK || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("bad request: %v (fail %d)", err, fail)
	}
	in := e.create(Spec{})
	if out := e.sh(in.ID, "echo hi"); out != "hi\n" || fs.pid() != pid {
		t.Fatalf("after a bad request: %q, fork-server %d (was %d)", out, fs.pid(), pid)
	}
}
