package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bullpen "github.com/bullpen-hq/bullpen"
)

// sharedDir makes a host directory the sandbox uids can traverse, with an
// executable tool and a world-writable file in it.
func sharedDir(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "sb-mount-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := filepath.Join(base, "tools")
	for _, d := range []string{base, dir} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\necho tool-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("original\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "data.txt"), 0o666); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMountReadOnly: a host directory mounted into a sandbox can be read
// and executed from, and every write fails with EROFS even though the host
// files are world-writable; the host copy is unchanged.
func TestMountReadOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := sharedDir(t)
	in := e.create(Spec{Mounts: []Mount{{HostPath: dir, Path: "/opt/tools"}}})
	if got := e.sh(in.ID, "/opt/tools/tool; cat /opt/tools/data.txt"); got != "tool-ran\noriginal\n" {
		t.Fatalf("read/exec through the mount: %q", got)
	}
	out := e.py(in.ID, `
import errno, os
for op, f in [("write", lambda: open("/opt/tools/data.txt", "w").write("x")),
              ("create", lambda: open("/opt/tools/new", "w")),
              ("unlink", lambda: os.unlink("/opt/tools/tool")),
              ("chmod", lambda: os.chmod("/opt/tools/tool", 0o777)),
              ("mkdir", lambda: os.mkdir("/opt/tools/d"))]:
    try:
        f(); print(op, "WROTE")
    except OSError as e:
        print(op, errno.errorcode[e.errno])
`)
	for _, op := range []string{"write", "create", "unlink", "chmod", "mkdir"} {
		if !strings.Contains(out, op+" EROFS") {
			t.Errorf("%s on the read-only mount: want EROFS, got\n%s", op, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "data.txt")); string(b) != "original\n" {
		t.Fatalf("host file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Fatal("a file appeared on the host")
	}
	// The mount comes back after Stop/Start (a new init binds it again).
	ctx := context.Background()
	if err := e.m.Stop(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Start(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.sh(in.ID, "cat /opt/tools/data.txt"); got != "original\n" {
		t.Fatalf("after restart: %q", got)
	}
}

// TestMountPrivateHostDir: a host directory below a 0700 one (a data dir
// in /root) mounts all the same: the host binds it, not the sandbox.
func TestMountPrivateHostDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(t.TempDir(), "clis") // t.TempDir is 0700
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v"), []byte("1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := e.create(Spec{Mounts: []Mount{{HostPath: dir, Path: "/opt/bullpen/clis"}}})
	if got := e.sh(in.ID, "cat /opt/bullpen/clis/v; touch /opt/bullpen/clis/x 2>&1 || true"); !strings.HasPrefix(got, "1.0\n") || !strings.Contains(got, "Read-only") {
		t.Fatalf("inside: %q", got)
	}
}

// TestMountValidation: bad mounts and bridges are refused with EINVALID
// and nothing is created.
func TestMountValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := sharedDir(t)
	cases := map[string]Spec{
		"relative path":   {Mounts: []Mount{{HostPath: dir, Path: "opt/x"}}},
		"over root":       {Mounts: []Mount{{HostPath: dir, Path: "/"}}},
		"over /usr":       {Mounts: []Mount{{HostPath: dir, Path: "/usr/local/x"}}},
		"over /etc":       {Mounts: []Mount{{HostPath: dir, Path: "/etc"}}},
		"above /proc":     {Mounts: []Mount{{HostPath: dir, Path: "/var"}}},
		"host root":       {Mounts: []Mount{{HostPath: "/", Path: "/opt/x"}}},
		"host relative":   {Mounts: []Mount{{HostPath: "tools", Path: "/opt/x"}}},
		"host missing":    {Mounts: []Mount{{HostPath: dir + "/nope", Path: "/opt/x"}}},
		"host state dir":  {Mounts: []Mount{{HostPath: e.cfg.StateDir, Path: "/opt/x"}}},
		"twice":           {Mounts: []Mount{{HostPath: dir, Path: "/opt/x"}, {HostPath: dir, Path: "/opt/x/"}}},
		"bridge port":     {Bridges: []Bridge{{Port: 0, HostSocket: "/tmp/x.sock"}}},
		"bridge dup":      {Bridges: []Bridge{{Port: 80, HostSocket: "/tmp/x.sock"}, {Port: 80, HostSocket: "/tmp/y.sock"}}},
		"bridge on port":  {Ports: []int{80}, Bridges: []Bridge{{Port: 80, HostSocket: "/tmp/x.sock"}}},
		"bridge relative": {Bridges: []Bridge{{Port: 80, HostSocket: "x.sock"}}},
	}
	for name, sp := range cases {
		_, err := e.m.Create(context.Background(), sp)
		if !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("%s: got %v, want EINVALID", name, err)
		}
	}
	if ids := e.ids(); len(ids) != 0 {
		t.Fatalf("bad specs created sandboxes: %v", ids)
	}
}

// TestAttach: a sandbox made without mounts or bridges gets them by
// Attach (a restart; its files stay), the same again changes nothing, and
// an empty Attach takes them away.
func TestAttach(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := sharedDir(t)
	sock, _ := bridgeServer(t)
	in := e.create(Spec{})
	e.sh(in.ID, "echo kept > /home/sandbox/f")
	ctx := context.Background()
	ms, bs := []Mount{{HostPath: dir, Path: "/opt/tools"}}, []Bridge{{Port: 7777, HostSocket: sock}}
	if err := e.m.Attach(ctx, in.ID, ms, bs); err != nil {
		t.Fatal(err)
	}
	if got := e.sh(in.ID, "cat /home/sandbox/f /opt/tools/data.txt"); got != "kept\noriginal\n" {
		t.Fatalf("after attach: %q", got)
	}
	if got := e.py(in.ID, pyBridge); got != "BRIDGE:ping" {
		t.Fatalf("bridge after attach: %q", got)
	}
	p, err := e.m.Exec(ctx, in.ID, ExecRequest{Cmd: []string{"sleep", "100"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := e.m.Attach(ctx, in.ID, ms, bs); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		t.Fatal("the same attachments again restarted the sandbox")
	default:
	}
	if err := e.m.Attach(ctx, in.ID, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.sh(in.ID, "ls /opt/tools | wc -l"); got != "0\n" {
		t.Fatalf("mount still there: %q", got)
	}
	if err := e.m.Attach(ctx, in.ID, []Mount{{HostPath: dir, Path: "/usr/x"}}, nil); !bullpen.IsCode(err, bullpen.EINVALID) {
		t.Fatal("bad mount accepted")
	}
}
