package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loopsBacking lists the loop devices whose backing file is img.
func loopsBacking(t *testing.T, img string) []string {
	t.Helper()
	devs, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var out []string
	for _, d := range devs {
		b, err := os.ReadFile(d)
		if err == nil && strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == img {
			out = append(out, d)
		}
	}
	return out
}

// Stop releases a sandbox's mounts and its loop device; the file API
// mounts a stopped sandbox's root on demand, and Start boots on the kept
// files with its host binds.
func TestStopReleasesMounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	shared := t.TempDir()
	if err := os.WriteFile(filepath.Join(shared, "host.txt"), []byte("from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := e.create(Spec{Mounts: []Mount{{HostPath: shared, Path: "/opt/shared"}}})
	e.sh(in.ID, "echo kept > /home/sandbox/f")
	s, _ := e.m.lookup(in.ID)
	img, disk := filepath.Join(s.dir, "disk.img"), filepath.Join(s.dir, "disk")
	mounted := func() (root, d bool) {
		inNS(t, e.m, func() { root, d = isMounted(s.rootfs), isMounted(disk) })
		return
	}
	if r, d := mounted(); !r || !d || len(loopsBacking(t, img)) != 1 {
		t.Fatalf("running: root mounted %v, disk mounted %v, loop devices %v", r, d, loopsBacking(t, img))
	}
	if err := e.m.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if r, d := mounted(); r || d {
		t.Fatalf("stopped: root mounted %v, disk mounted %v", r, d)
	}
	if l := loopsBacking(t, img); len(l) != 0 {
		t.Fatalf("stopped: loop devices still back its disk: %v", l)
	}
	for p, want := range map[string]string{"/home/sandbox/f": "kept\n"} {
		rc, err := e.m.ReadFile(ctx, in.ID, p)
		if err != nil {
			t.Fatalf("read %s while stopped: %v", p, err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != want {
			t.Fatalf("read %s while stopped: %q, want %q", p, b, want)
		}
	}
	if err := e.m.WriteFile(ctx, in.ID, "/home/sandbox/offline", strings.NewReader("w"), 0o644); err != nil {
		t.Fatalf("write while stopped: %v", err)
	}
	if err := e.m.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if out := e.sh(in.ID, "cat /home/sandbox/f /home/sandbox/offline /opt/shared/host.txt"); out != "kept\nwfrom the host" {
		t.Fatalf("after start: %q", out)
	}
	// Stopped and never read: a snapshot mounts it too.
	if err := e.m.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Snapshot(ctx, in.ID, "stopped-snap"); err != nil {
		t.Fatalf("snapshot while stopped: %v", err)
	}
	if err := e.m.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if l := loopsBacking(t, img); len(l) != 0 {
		t.Fatalf("terminated: loop devices still back its disk: %v", l)
	}
}
