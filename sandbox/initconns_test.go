package sandbox

import (
	"context"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

func (s *sandbox) connStats() (idle []*net.UnixConn, dials int) {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return append([]*net.UnixConn(nil), s.conns.idle...), s.conns.dials
}

func peerPid(t *testing.T, c *net.UnixConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var cred *unix.Ucred
	var cerr error
	_ = rc.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cerr != nil {
		t.Fatal(cerr)
	}
	return int(cred.Pid)
}

func initPid(t *testing.T, m *Manager, id string) (*sandbox, int) {
	t.Helper()
	s, err := m.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s, s.proc.pid
}

// Warm execs reuse one checked connection per sandbox; a connection is
// never handed to another sandbox, and one that carried a kill is dropped.
func TestExecReusesInitConn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.create(Spec{}), e.create(Spec{})
	for i := 0; i < 3; i++ {
		if out := e.sh(a.ID, "echo a"); out != "a\n" {
			t.Fatalf("a: %q", out)
		}
	}
	e.sh(b.ID, "echo b")
	sa, pa := initPid(t, e.m, a.ID)
	sb, pb := initPid(t, e.m, b.ID)
	idleA, dialsA := sa.connStats()
	idleB, dialsB := sb.connStats()
	if dialsA != 1 || dialsB != 1 || len(idleA) != 1 || len(idleB) != 1 {
		t.Fatalf("dials a=%d b=%d, idle a=%d b=%d; want one connection each, reused", dialsA, dialsB, len(idleA), len(idleB))
	}
	if got := peerPid(t, idleA[0]); got != pa || pa == pb {
		t.Fatalf("a's idle connection goes to pid %d, a's init is %d, b's %d", got, pa, pb)
	}
	if got := peerPid(t, idleB[0]); got != pb {
		t.Fatalf("b's idle connection goes to pid %d, b's init is %d", got, pb)
	}
	// A killed command's connection is closed, not kept.
	p, err := e.m.Exec(context.Background(), a.ID, ExecRequest{Cmd: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if res, err := p.Wait(); err != nil || res.Signal != "SIGKILL" {
		t.Fatalf("killed: %+v %v", res, err)
	}
	p.Close()
	if idle, _ := sa.connStats(); len(idle) != 0 {
		t.Fatalf("%d idle connections after a killed exec, want 0", len(idle))
	}
	if out := e.sh(a.ID, "echo again"); out != "again\n" {
		t.Fatalf("after kill: %q", out)
	}
	if _, dials := sa.connStats(); dials != 2 {
		t.Fatalf("dials %d after the killed exec, want 2", dials)
	}
}

// A kept connection that broke before init read the request (an old init
// that closes after each exec, say) costs a fresh dial, and the command
// still runs exactly once.
func TestExecStaleInitConnRunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(Spec{})
	e.sh(sb.ID, "true")
	s, _ := initPid(t, e.m, sb.ID)
	idle, _ := s.connStats()
	if len(idle) != 1 {
		t.Fatalf("%d idle connections, want 1", len(idle))
	}
	rc, _ := idle[0].SyscallConn()
	_ = rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
	e.sh(sb.ID, "echo once >> /home/sandbox/count")
	if out := e.sh(sb.ID, "cat /home/sandbox/count"); out != "once\n" {
		t.Fatalf("the command ran %d times: %q", strings.Count(out, "once"), out)
	}
	if _, dials := s.connStats(); dials != 2 {
		t.Fatalf("dials %d, want 2 (the stale connection replaced once)", dials)
	}
}

// When init dies, its kept connections are closed and execs fail cleanly
// while the sandbox becomes stopped, as without them.
func TestExecInitConnDeadInit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(Spec{})
	e.sh(sb.ID, "true")
	s, pid := initPid(t, e.m, sb.ID)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	wg.Add(1)
	go func() { // execs racing the death: each fails cleanly or succeeds
		defer wg.Done()
		for i := 0; i < 50; i++ {
			_, err := e.m.Run(context.Background(), sb.ID, ExecRequest{Cmd: []string{"true"}, Timeout: 5 * time.Second})
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	if err := syscallKill(pid); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !bullpen.IsCode(err, bullpen.ECONFLICT) {
			t.Fatalf("exec on a dead init: %v, want a conflict", err)
		}
	}
	waitState(t, e.m, sb.ID, StateStopped)
	_, err := e.m.Run(context.Background(), sb.ID, ExecRequest{Cmd: []string{"true"}})
	wantCode(t, err, bullpen.ECONFLICT)
	deadline := time.Now().Add(5 * time.Second)
	for idle, _ := s.connStats(); len(idle) > 0; idle, _ = s.connStats() {
		if time.Now().After(deadline) {
			t.Fatalf("%d idle connections to a dead init still held", len(idle))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Preconnect leaves a checked connection that the first exec uses; a
// closed Manager closes its kept connections and the next one adopts the
// sandbox and dials afresh.
func TestPreconnect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(Spec{})
	if err := e.m.Preconnect(context.Background(), sb.ID); err != nil {
		t.Fatal(err)
	}
	s, pid := initPid(t, e.m, sb.ID)
	idle, dials := s.connStats()
	if dials != 1 || len(idle) != 1 || peerPid(t, idle[0]) != pid {
		t.Fatalf("after Preconnect: %d dials, %d idle", dials, len(idle))
	}
	if err := e.m.Preconnect(context.Background(), sb.ID); err != nil {
		t.Fatal(err)
	}
	if out := e.sh(sb.ID, "echo first"); out != "first\n" {
		t.Fatalf("first exec: %q", out)
	}
	if _, dials := s.connStats(); dials != 1 {
		t.Fatalf("%d dials, want 1: the first exec should use the preconnected connection", dials)
	}
	e.m.Close()
	deadline := time.Now().Add(5 * time.Second)
	for idle, _ := s.connStats(); len(idle) > 0; idle, _ = s.connStats() {
		if time.Now().After(deadline) {
			t.Fatalf("%d idle connections held after Close", len(idle))
		}
		time.Sleep(10 * time.Millisecond)
	}
	m2, err := New(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m2
	if out := e.sh(sb.ID, "echo adopted"); out != "adopted\n" {
		t.Fatalf("after adoption: %q", out)
	}
	s2, _ := initPid(t, m2, sb.ID)
	if _, dials := s2.connStats(); dials != 1 {
		t.Fatalf("the new Manager dialled %d times, want 1", dials)
	}
}
