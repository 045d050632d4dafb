package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fdmMounted reports whether dir is mounted with favordynmods in m's
// mount namespace.
func fdmMounted(t *testing.T, m *Manager, dir string) bool {
	t.Helper()
	for _, line := range strings.Split(nsMountinfo(t, m), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			return strings.Contains(line, "favordynmods")
		}
	}
	return false
}

// The Manager switches the cgroup migration lock to favordynmods for its
// life and leaves no mount behind at Close; DefaultCgroupLock keeps the
// host as it is.
func TestCgroupLockMode(t *testing.T) {
	e := newEnv(t)
	dir := e.m.fdmDir
	if dir == "" {
		t.Skip("this host cannot mount a cgroup v1 hierarchy with favordynmods")
	}
	if !fdmMounted(t, e.m, dir) {
		t.Fatalf("%s is not mounted with favordynmods", dir)
	}
	in := e.create(Spec{})
	if out := e.sh(in.ID, "echo ok"); out != "ok\n" {
		t.Fatalf("echo = %q", out)
	}
	if err := e.m.TerminateAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if fdmMounted(t, e.m, dir) || isMounted(dir) {
		t.Errorf("%s still mounted after Close", dir)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s left after Close", dir)
	}

	off := newEnv(t, func(c *Config) { c.DefaultCgroupLock = true })
	if off.m.fdmDir != "" {
		t.Errorf("DefaultCgroupLock: the Manager mounted %s", off.m.fdmDir)
	}
}

// List does not wait for a create in progress (which holds the
// sandbox's lock throughout), nor show it.
func TestListSkipsCreating(t *testing.T) {
	e := newEnv(t)
	live := e.create(Spec{})
	s := &sandbox{id: "sb_creating", meta: meta{ID: "sb_creating", State: stateCreating}}
	s.creating.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	e.m.mu.Lock()
	e.m.sbs[s.id] = s
	e.m.mu.Unlock()
	defer func() {
		e.m.mu.Lock()
		delete(e.m.sbs, s.id)
		e.m.mu.Unlock()
	}()
	list, err := e.m.List(t.Context(), nil) // with s.mu held, this would hang before
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != live.ID {
		t.Errorf("List = %v, want only %s", list, live.ID)
	}
}

// A create waits for a free provisioning slot; one whose context ends
// while it waits fails and leaves nothing behind.
func TestCreateWaitsForSlot(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxParallelCreates = 1 })
	e.m.createSem <- struct{}{} // the one slot, taken
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.m.Create(ctx, Spec{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create with every slot taken and its context cancelled = %v, want context.Canceled", err)
	}
	e.m.mu.Lock()
	n := len(e.m.sbs)
	e.m.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sandboxes known after the failed create, want 0", n)
	}
	<-e.m.createSem
	in := e.create(Spec{})
	if out := e.sh(in.ID, "echo ok"); out != "ok\n" {
		t.Fatalf("echo = %q", out)
	}
	if len(e.m.createSem) != 0 {
		t.Errorf("slot still taken after the create")
	}
}

// Ready disks (made ahead, with their layer directories) are never shared:
// what one sandbox writes is not in the next one's, alive or terminated,
// and each sandbox's disk is its own loop device.
func TestReadyDisksNotShared(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.DefaultDiskBytes = 48 << 20 })
	for deadline := time.Now().Add(20 * time.Second); len(e.m.ready) < readyDisks; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d disks ready", len(e.m.ready), readyDisks)
		}
	}
	a := e.create(Spec{})
	e.sh(a.ID, "echo a > /home/sandbox/mine; echo a > /tmp/mine")
	b := e.create(Spec{})
	if out := e.sh(b.ID, "ls /home/sandbox/mine /tmp/mine 2>&1; true"); !strings.Contains(out, "No such file") || strings.Contains(out, "\n/") {
		t.Errorf("b sees a's files: %q", out)
	}
	if e.devOf(a.ID) == e.devOf(b.ID) {
		t.Errorf("a and b share the disk device %s", e.devOf(a.ID))
	}
	if err := e.m.Terminate(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	c := e.create(Spec{})
	if out := e.sh(c.ID, "cat /home/sandbox/mine 2>&1; true"); !strings.Contains(out, "No such file") {
		t.Errorf("c sees terminated a's file: %q", out)
	}
	if out := e.sh(c.ID, "stat -c %u:%g /home/sandbox; touch /home/sandbox/ok && echo writable"); !strings.Contains(out, "1000:1000\nwritable") {
		t.Errorf("c's home on a ready disk: %q", out)
	}
}

// devOf is the device of the mount holding sandbox id's disk.
func (e *testEnv) devOf(id string) string {
	e.t.Helper()
	s, err := e.m.lookup(id)
	if err != nil {
		e.t.Fatal(err)
	}
	var st unix.Stat_t
	var err2 error
	inNS(e.t, e.m, func() { err2 = unix.Stat(filepath.Join(s.dir, "disk"), &st) })
	if err2 != nil {
		e.t.Fatal(err2)
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
}
