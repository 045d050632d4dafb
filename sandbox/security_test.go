package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// py runs a python3 snippet in the sandbox and returns its stdout.
func (e *testEnv) py(id, code string) string {
	e.t.Helper()
	r := e.run(id, "python3", "-c", code)
	if r.ExitCode != 0 {
		e.t.Fatalf("python: exit %d: %s", r.ExitCode, r.Stderr)
	}
	return strings.TrimSpace(string(r.Stdout))
}

const pySyscall = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *args):
    r = libc.syscall(nr, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
`

// TestSecurityIsolation runs the isolation suite with each init binary.
func TestSecurityIsolation(t *testing.T) {
	t.Parallel()
	for name, path := range initModes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			securityIsolation(t, path)
		})
	}
}

func securityIsolation(t *testing.T, initPath string) {
	e := newEnv(t, func(c *Config) { c.InitPath = initPath })
	if e.m.InitPath() != initPath {
		t.Fatalf("init %q, want %q", e.m.InitPath(), initPath)
	}
	// A host "data dir" with a secret in it.
	dataDir := t.TempDir()
	secretPath := filepath.Join(dataDir, "server-secret.txt")
	if err := os.WriteFile(secretPath, []byte("host-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := e.create(Spec{}).ID

	t.Run("host files invisible", func(t *testing.T) {
		r := e.run(id, "sh", "-c", "cat /etc/shadow; cat "+secretPath+"; ls /work /root /home; cat /proc/1/environ")
		if r.ExitCode == 0 || strings.Contains(string(r.Stdout), "host-secret") || strings.Contains(string(r.Stdout), "root:") {
			t.Fatalf("host files visible: %+v %s", r, r.Stdout)
		}
		if out := e.sh(id, "ls /home; ls / | tr '\\n' ' '"); !strings.HasPrefix(out, "sandbox\n") || strings.Contains(out, "work") {
			t.Fatalf("listing: %q", out)
		}
	})
	t.Run("base image read-only", func(t *testing.T) {
		before, _ := os.ReadFile("/usr/bin/env")
		r := e.run(id, "sh", "-c", "echo x > /usr/bin/env; touch /usr/evil; echo x >> /etc/passwd; rm -f /bin/sh")
		if r.ExitCode == 0 {
			t.Fatalf("wrote to base: %s", r.Stderr)
		}
		after, _ := os.ReadFile("/usr/bin/env")
		if string(before) != string(after) {
			t.Fatal("host /usr/bin/env changed")
		}
		if _, err := os.Stat("/usr/evil"); err == nil {
			t.Fatal("host /usr/evil created")
		}
		if !strings.Contains(string(r.Stderr), "Read-only file system") {
			t.Fatalf("stderr: %s", r.Stderr)
		}
	})
	t.Run("processes", func(t *testing.T) {
		out := e.sh(id, "ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '")
		for _, f := range strings.Fields(out) {
			if len(f) > 3 {
				t.Fatalf("/proc shows pid %s: %s", f, out)
			}
		}
		r := e.run(id, "sh", "-c", fmt.Sprintf("kill -0 %d", os.Getpid()))
		if r.ExitCode == 0 {
			t.Fatal("kill -0 of a host pid succeeded")
		}
		// init (pid 1) is not signalable either.
		r = e.run(id, "sh", "-c", "kill -9 1; kill -0 1")
		if r.ExitCode == 0 && !strings.Contains(string(r.Stderr), "not permitted") {
			t.Fatalf("signal init: %+v", r)
		}
		e.sh(id, "true") // still alive
	})
	t.Run("privileges", func(t *testing.T) {
		out := e.sh(id, "grep -E '^(CapEff|CapPrm|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\\t' ' '")
		for _, want := range []string{"CapPrm: 0000000000000000", "CapEff: 0000000000000000", "NoNewPrivs: 1", "Seccomp: 2"} {
			if !strings.Contains(out, want) {
				t.Fatalf("missing %q in %s", want, out)
			}
		}
	})
	t.Run("mount, modules, ptrace, namespaces", func(t *testing.T) {
		out := e.py(id, pySyscall+`
import subprocess
print("mount", sc(165, b"none", b"/tmp", b"tmpfs", 0, 0))
print("finit_module", sc(313, 0, b"", 0))
print("init_module", sc(175, 0, 0, b""))
print("delete_module", sc(176, b"ext4", 0))
p = subprocess.Popen(["sleep", "5"])
print("ptrace_child", sc(101, 16, p.pid, 0, 0))
print("ptrace_init", sc(101, 16, 1, 0, 0))
print("unshare_user", sc(272, 0x10000000))
print("unshare_net", sc(272, 0x40000000))
print("setns", sc(308, 0, 0))
print("bpf", sc(321, 0, 0, 0))
print("keyctl", sc(250, 0, 0, 0))
print("reboot", sc(169, 0xfee1dead, 672274793, 0x4321fedc, 0))
p.kill()
`)
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, " ok") {
				t.Errorf("syscall allowed: %s", line)
			}
		}
		if r := e.run(id, "unshare", "-Ur", "true"); r.ExitCode == 0 {
			t.Error("unshare -Ur worked")
		}
		if r := e.run(id, "mount", "-t", "proc", "proc", "/tmp"); r.ExitCode == 0 {
			t.Error("mount worked")
		}
		t.Log(out)
	})
	t.Run("no network", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("LEAK"))
				c.Close()
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		out := e.py(id, fmt.Sprintf(`
import socket
for addr in [("127.0.0.1", %d), ("10.0.0.1", 80), ("192.0.2.1", 53)]:
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect(addr); print("connected", addr, s.recv(10))
    except OSError as e:
        print("blocked", addr, e.errno)
print(open("/proc/net/dev").read().count(":"))
`, port))
		if strings.Contains(out, "connected") || !strings.HasSuffix(out, "\n1") {
			t.Fatalf("network reachable: %s", out)
		}
	})
}

func TestSecurityResourceLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	t.Run("fork bomb", func(t *testing.T) {
		id := e.create(Spec{Pids: 40}).ID
		r, err := e.m.Run(ctx, id, ExecRequest{Cmd: []string{"sh", "-c", "b() { b | b & }; b; sleep 2"}, Timeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		u, _ := e.m.Stats(ctx, id)
		if u.Pids > 40 {
			t.Fatalf("pids %d over limit", u.Pids)
		}
		e.sh(id, "true")
		_ = r
	})
	t.Run("memory bomb", func(t *testing.T) {
		id := e.create(Spec{MemoryBytes: 96 << 20}).ID
		r := e.run(id, "python3", "-c", "x = []\nwhile True: x.append(bytearray(16 << 20))")
		if r.ExitCode == 0 || r.Signal != "SIGKILL" {
			t.Fatalf("memory bomb survived: %+v %s", r, r.Stderr)
		}
		if out := e.sh(id, "echo alive"); out != "alive\n" {
			t.Fatal("sandbox died with the bomb")
		}
	})
	t.Run("disk quota", func(t *testing.T) {
		id := e.create(Spec{DiskBytes: 64 << 20}).ID
		r := e.run(id, "sh", "-c", "dd if=/dev/zero of=/home/sandbox/fill bs=1M count=200 2>&1; df -k /home/sandbox | tail -1")
		if !strings.Contains(string(r.Stdout), "No space left") {
			t.Fatalf("disk not limited: %s", r.Stdout)
		}
		err := e.m.WriteFile(ctx, id, "/home/sandbox/api-fill", &patternReader{n: 100 << 20}, 0)
		wantCode(t, err, bullpen.ETOOLARGE)
		e.sh(id, "rm /home/sandbox/fill /home/sandbox/api-fill; echo ok > /home/sandbox/after")
		s, _ := e.m.lookup(id)
		st, err := os.Stat(filepath.Join(s.dir, "disk.img"))
		if err != nil || st.Size() != 64<<20 {
			t.Fatalf("disk image: %v %v", st, err)
		}
	})
}

func TestSecurityFileAPIEscape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.create(Spec{}).ID
	other := e.create(Spec{}).ID
	e.sh(other, "echo other-secret > /home/sandbox/mine")
	hostTmp := t.TempDir()
	e.sh(id, fmt.Sprintf(`cd /home/sandbox
ln -s /etc/shadow shadow
ln -s ../../../../../../../../etc etc
ln -s / root
ln -s %s hosttmp
ln -s /proc/1/root p1
ln -s /proc/self/root pself`, hostTmp))
	for _, p := range []string{"/home/sandbox/shadow", "/../../../../etc/shadow", "/home/sandbox/root/etc/shadow", "/home/sandbox/p1/etc/passwd"} {
		if rc, err := e.m.ReadFile(ctx, id, p); err == nil {
			b := make([]byte, 100)
			n, _ := rc.Read(b)
			rc.Close()
			t.Fatalf("read %s: %q", p, b[:n])
		}
	}
	rc, err := e.m.ReadFile(ctx, id, "/home/sandbox/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4096)
	n, _ := rc.Read(b)
	rc.Close()
	if !strings.Contains(string(b[:n]), "sandbox:x:1000") {
		t.Fatalf("symlinked dir resolved outside the sandbox: %q", b[:n])
	}
	// Writes through symlinks stay inside (or fail).
	_ = e.m.WriteFile(ctx, id, "/home/sandbox/hosttmp/pwned", strings.NewReader("x"), 0)
	_ = e.m.WriteFile(ctx, id, "/home/sandbox/root/tmp/pwned2", strings.NewReader("x"), 0)
	wantCode(t, e.m.WriteFile(ctx, id, "/home/sandbox/shadow", strings.NewReader("x"), 0), bullpen.EINVALID)
	_ = e.m.Mkdir(ctx, id, "/home/sandbox/hosttmp/dir", true)
	_ = e.m.Rename(ctx, id, "/home/sandbox/root/etc/hostname", "/home/sandbox/hosttmp/moved")
	if ents, _ := os.ReadDir(hostTmp); len(ents) != 0 {
		t.Fatalf("host dir written through symlink: %v", ents)
	}
	if _, err := os.Stat("/tmp/pwned2"); err == nil {
		t.Fatal("host /tmp written")
	}
	if out := e.sh(id, "cat /tmp/pwned2"); out != "x" {
		t.Fatalf("write should land inside: %q", out)
	}
	if err := e.m.Remove(ctx, id, "/home/sandbox/root", true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/usr/bin/env"); err != nil {
		t.Fatal("recursive remove followed a symlink")
	}
	// Another sandbox's files are out of reach, from exec and the API.
	if r := e.run(id, "sh", "-c", "grep -rs other-secret /home /tmp /run; find / -xdev -name mine 2>/dev/null"); r.ExitCode == 0 {
		t.Fatalf("other sandbox visible: %s", r.Stdout)
	}
	_, err = e.m.ReadFile(ctx, id, "/home/sandbox/mine")
	wantCode(t, err, bullpen.ENOTFOUND)
}
