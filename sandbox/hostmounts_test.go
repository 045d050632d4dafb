package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// hostMountLines counts the lines of the host's mount table (this
// goroutine's thread is in the host's mount namespace) and those of them
// that are the test's: a mount point beginning with one of roots, or
// naming one of ids. Other processes on the host may mount meanwhile; the test's own
// lines are what it checks.
func hostMountLines(t *testing.T, roots []string, ids []string) (total, own int) {
	t.Helper()
	return mountLines(t, "/proc/thread-self/mountinfo", roots, ids)
}

func mountLines(t *testing.T, file string, roots []string, ids []string) (total, own int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		total++
		fs := strings.Fields(line)
		if len(fs) < 5 {
			continue
		}
		mp := unescapeMount(fs[4])
		mine := false
		for _, r := range roots {
			mine = mine || strings.HasPrefix(mp, r)
		}
		for _, id := range ids {
			mine = mine || strings.Contains(line, id)
		}
		if mine {
			own++
		}
	}
	return total, own
}

// A Manager leaves the host's mount table as it found it but for the one
// or two lines that keep its mount namespace: 100 sandboxes, half of them
// running and half stopped, with Spec.Mounts binds, add nothing to it, and
// once they are gone and the Manager closed, neither do those lines. A
// later Manager on the same state dir finds a stopped sandbox's files.
func TestHostMountTableFlat(t *testing.T) {
	needRoot(t)
	t.Parallel()
	state, shared := t.TempDir(), t.TempDir()
	sum := sha256.Sum256([]byte(state))
	// The state dir, and the run dir with its siblings (runDir.mnt, ...).
	roots := []string{state + "/", "/run/bullpen-sandbox/" + hex.EncodeToString(sum[:6])}
	total0, own0 := hostMountLines(t, roots, nil)
	e := newEnv(t, func(c *Config) { c.StateDir = state })
	if e.m.runDir != roots[1] {
		t.Fatalf("run dir %s, want %s", e.m.runDir, roots[1])
	}
	ctx := context.Background()
	const n = 100
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			in, err := e.m.Create(ctx, Spec{Mounts: []Mount{{HostPath: shared, Path: "/opt/shared"}}})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = in.ID
			if i%2 == 1 {
				if err := e.m.Stop(ctx, in.ID); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("create/stop: %v", err)
	}
	if got := e.sh(ids[0], "echo hi > /home/sandbox/f; ls /opt/shared >/dev/null && echo ok"); got != "ok\n" {
		t.Fatalf("sandbox: %q", got)
	}
	if err := e.m.WriteFile(ctx, ids[1], "/home/sandbox/kept", strings.NewReader("kept"), 0o644); err != nil {
		t.Fatalf("write to a stopped sandbox: %v", err)
	}
	total, own := hostMountLines(t, roots, ids)
	t.Logf("host mount table: %d lines before, %d with %d sandboxes (%d of them the test's: %d before)", total0, total, n, own, own0)
	if own-own0 > 2 {
		t.Errorf("host mount table: %d lines of the test's with %d sandboxes running and stopped, %d before: want at most +2", own, n, own0)
	}
	// So does the process's own view (its main thread's, in /proc/<pid>):
	// the namespace's threads are others.
	if _, own := mountLines(t, "/proc/self/mountinfo", roots, ids); own-own0 > 2 {
		t.Errorf("/proc/self/mountinfo: %d lines of the test's: the main thread is in the Manager's namespace", own)
	}
	// The sandboxes' mounts are in the Manager's own namespace.
	mi, err := e.m.mnt.mountinfo()
	if err != nil {
		t.Fatal(err)
	}
	if inNS := len(e.m.ownMounts(mi)); inNS < 2*n {
		t.Errorf("mount namespace: %d mounts of the Manager's, want at least %d", inNS, 2*n)
	}

	// Closed with sandboxes left: the namespace stays (a later New joins
	// it), still no more than two lines.
	e.m.Close()
	if _, own := hostMountLines(t, roots, ids); own-own0 > 2 {
		t.Errorf("host mount table after Close: %d lines of the test's, %d before", own, own0)
	}
	m2, err := New(ctx, e.cfg)
	if err != nil {
		t.Fatalf("New again: %v", err)
	}
	e.m = m2
	rc, err := m2.ReadFile(ctx, ids[1], "/home/sandbox/kept")
	if err != nil {
		t.Fatalf("stopped sandbox's file after New: %v", err)
	}
	b := make([]byte, 16)
	k, _ := rc.Read(b)
	rc.Close()
	if string(b[:k]) != "kept" {
		t.Fatalf("stopped sandbox's file after New: %q", b[:k])
	}
	if err := m2.Start(ctx, ids[1]); err != nil {
		t.Fatalf("Start after New: %v", err)
	}
	if got := e.sh(ids[1], "cat /home/sandbox/kept"); got != "kept" {
		t.Fatalf("restarted sandbox: %q", got)
	}
	if err := m2.TerminateAll(ctx); err != nil {
		t.Fatalf("TerminateAll: %v", err)
	}
	m2.Close()
	e.m = nil
	if _, own := hostMountLines(t, roots, ids); own != own0 {
		t.Errorf("host mount table after the last sandbox and Close: %d lines of the test's, %d before", own, own0)
	}
}

// nsMountinfo is the mount table of m's mount namespace, also after m
// closed ("" once the namespace is gone).
func nsMountinfo(t testing.TB, m *Manager) string {
	t.Helper()
	if mi, err := m.mnt.mountinfo(); err == nil {
		return mi
	}
	for _, f := range []string{m.runDir + ".ns/mnt", m.runDir + ".mnt"} {
		fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		n := &mountNS{fd: fd}
		mi, err := n.mountinfo()
		n.close(false)
		if err == nil {
			return mi
		}
	}
	return ""
}

// inNS runs fn on a thread in m's mount namespace.
func inNS(t testing.TB, m *Manager, fn func()) {
	t.Helper()
	if err := m.mnt.do(func() error { fn(); return nil }); err != nil {
		t.Fatal(err)
	}
}

// Under a run dir on a shared mount, the bind that keeps the namespace is
// made in a private bind of its own, so it reaches no peer of that mount
// (a copy there would keep the namespace alive for good); nothing of the
// sandboxes reaches a peer either. (The empty private bind itself does:
// a mount made under a shared one always propagates.)
func TestMountNamespaceSharedRunDir(t *testing.T) {
	needRoot(t)
	t.Parallel()
	run := "/run/bullpen-test-shared-" + itoa(os.Getpid())
	peer := run + "-peer"
	for _, d := range []string{run, peer} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount("tmpfs", run, "tmpfs", 0, "mode=711"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Unmount(peer, unix.MNT_DETACH)
		_ = unix.Unmount(run, unix.MNT_DETACH)
		os.Remove(peer)
		os.Remove(run)
	})
	if err := unix.Mount("", run, "", unix.MS_SHARED, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(run, peer, "", unix.MS_BIND, ""); err != nil { // a peer
		t.Fatal(err)
	}
	_, own0 := hostMountLines(t, []string{run + "/"}, nil)
	e := newEnv(t, func(c *Config) { c.RunDir = run })
	if e.m.mnt.holder == "" {
		t.Fatalf("no private holder for the namespace under a shared run dir")
	}
	in := e.create(Spec{})
	if out := e.sh(in.ID, "echo ok"); out != "ok\n" {
		t.Fatalf("sandbox: %q", out)
	}
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], peer+"/") &&
			(strings.Contains(l, " - nsfs ") || strings.Contains(l, in.ID) || strings.Count(f[4], "/") > strings.Count(peer, "/")+1) {
			t.Errorf("a mount of the Manager's reached a peer of the run dir's mount: %s", l)
		}
	}
	if _, own := hostMountLines(t, []string{run + "/"}, []string{in.ID}); own-own0 > 2 {
		t.Errorf("host mount table: %d lines of the test's, %d before", own, own0)
	}
	if err := e.m.TerminateAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.m.Close()
	e.m = nil
	if _, own := hostMountLines(t, []string{run + "/", peer + "/"}, nil); own != own0 {
		t.Errorf("host mount table after Close: %d lines of the test's, %d before", own, own0)
	}
}

// A host mount made after the Manager started is bound into a sandbox as
// the host sees it, also where mounts do not propagate into the
// Manager's namespace (a host whose mounts are private).
func TestMountLateHostMount(t *testing.T) {
	needRoot(t)
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	if err := unix.Mount("late", dir, "tmpfs", 0, "mode=755"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/late.txt", []byte("on the late mount\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := e.create(Spec{Mounts: []Mount{{HostPath: dir, Path: "/opt/late"}}})
	if out := e.sh(in.ID, "cat /opt/late/late.txt"); out != "on the late mount\n" {
		t.Fatalf("sandbox sees %q", out)
	}
}

// Mounts a Manager of an earlier version left in the host's namespace
// (under the state and run dirs) move into the new namespace: gone from
// the host's table, still there for the Manager.
func TestMountsOfAnEarlierVersionMoved(t *testing.T) {
	needRoot(t)
	t.Parallel()
	state := t.TempDir()
	old := state + "/images/old" // not a sandbox: restore would reap that
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("old", old, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(old, unix.MNT_DETACH) })
	if err := os.WriteFile(old+"/kept", []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.StateDir = state })
	if _, own := hostMountLines(t, []string{state + "/"}, nil); own != 0 {
		t.Errorf("%d mounts left under the state dir in the host's table", own)
	}
	var b []byte
	inNS(t, e.m, func() { b, _ = os.ReadFile(old + "/kept") })
	if string(b) != "kept" {
		t.Errorf("the earlier mount in the Manager's namespace: %q", b)
	}
	inNS(t, e.m, func() { _ = unix.Unmount(old, unix.MNT_DETACH) })
}
