package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Disks made ahead of time become sandboxes' disks, are made again, and
// nothing of them is left after Close or after a process that died.
func TestReadyDisks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.DefaultDiskBytes = 48 << 20 })
	waitReady := func(m *Manager) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); len(m.ready) < readyDisks; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d disks ready", len(m.ready), readyDisks)
			}
		}
	}
	waitReady(e.m)
	before, _ := os.ReadDir(e.m.readyDir)
	in := e.create(Spec{})
	s, _ := e.m.lookup(in.ID)
	var mounted bool
	inNS(t, e.m, func() { mounted = isMounted(filepath.Join(s.dir, "disk")) })
	if !mounted {
		t.Fatal("sandbox disk not mounted")
	}
	taken := 0
	for _, en := range before {
		if _, err := os.Stat(filepath.Join(e.m.readyDir, en.Name())); os.IsNotExist(err) {
			taken++
		}
	}
	if taken != 1 {
		t.Fatalf("%d ready disks taken by one create, want 1", taken)
	}
	e.sh(in.ID, "echo ok > /home/sandbox/f")
	waitReady(e.m) // refilled

	// A second Manager that is never closed, as if the process died: the
	// next New on its state dir clears its ready disks.
	cfg := e.cfg
	cfg.StateDir = t.TempDir()
	m2, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(m2)
	close(m2.stop) // stop refilling, without Close's cleanup
	m2.wg.Wait()
	m2.init.close()
	var dead []string
	for len(m2.ready) > 0 {
		dead = append(dead, <-m2.ready)
	}
	m3, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mi := nsMountinfo(t, m3) // the dead Manager's namespace, joined
	for _, n := range dead {
		if _, err := os.Stat(filepath.Join(m3.readyDir, n)); err == nil || strings.Contains(mi, n) {
			t.Errorf("ready disk %s of the dead Manager left", n)
		}
	}
	m3.Close()
	if mi := nsMountinfo(t, m3); strings.Contains(mi, cfg.StateDir) {
		t.Fatalf("mounts left under %s after Close", cfg.StateDir)
	}
	if ents, _ := os.ReadDir(m3.readyDir); len(ents) != 0 {
		t.Fatalf("%d ready disks left after Close", len(ents))
	}
}
