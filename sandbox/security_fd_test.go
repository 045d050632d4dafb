package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Property 1 of the isolation suite: nothing crosses into a sandbox but
// stdio. The test runs the Manager in a child process (the "server") that
// was started with extra fds open and not close-on-exec, as a server
// started by a careless supervisor would be: one on a root-only file, its
// duplicates at high numbers and a listening socket.

const (
	fdChildEnv  = "BULLPEN_TEST_FD_SERVER"  // the init path the child's Manager uses
	fdSecretEnv = "BULLPEN_TEST_FD_SECRET"  // the root-only file's path
	fdSecretTxt = "root-only-server-secret" // its content
)

// fdLeaks are the fd numbers the child server holds open without
// close-on-exec (3 comes from ExtraFiles, the rest it makes itself).
var fdLeaks = []int{3, 200, 201, 1000}

func TestSecurityOnlyStdioCrosses(t *testing.T) {
	needRoot(t)
	if initPath, ok := os.LookupEnv(fdChildEnv); ok {
		fdServer(t, initPath)
		return
	}
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(secret, []byte(fdSecretTxt), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // after the parallel subtests
	for name, path := range initModes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSecurityOnlyStdioCrosses$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), fdChildEnv+"="+path, fdSecretEnv+"="+secret, testInitEnv+"="+testInitPath)
			cmd.ExtraFiles = []*os.File{f} // fd 3 in the child, without close-on-exec
			out, err := cmd.CombinedOutput()
			t.Logf("server process output:\n%s", out)
			if err != nil || !strings.Contains(string(out), "--- PASS: TestSecurityOnlyStdioCrosses") {
				t.Fatalf("server process: %v", err)
			}
		})
	}
}

// fdServer is the child: it opens more inheritable fds, runs a Manager and
// attacks from inside a sandbox.
func fdServer(t *testing.T, initPath string) {
	if err := syscall.Dup2(3, 200); err != nil { // dup2 clears close-on-exec
		t.Fatal(err)
	}
	if err := syscall.Dup2(3, 1000); err != nil {
		t.Fatal(err)
	}
	lfd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0) // no SOCK_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(lfd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(lfd, 8); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup2(lfd, 201); err != nil {
		t.Fatal(err)
	}
	syscall.Close(lfd)
	for _, fd := range fdLeaks {
		if flags, err := fcntlGetfd(fd); err != nil || flags&syscall.FD_CLOEXEC != 0 {
			t.Fatalf("setup: fd %d is not an inheritable fd (flags %d, %v)", fd, flags, err)
		}
	}
	e := newEnv(t, func(c *Config) { c.InitPath = initPath })
	id := e.create(Spec{}).ID
	t.Run("init holds no inherited fd", func(t *testing.T) { checkInitFds(t, e, id) })
	t.Run("commands see only stdio", func(t *testing.T) { checkCommandFds(t, e, id) })
	t.Run("channel takeover", func(t *testing.T) { checkTakeover(t, e, id) })
}

func fcntlGetfd(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// checkInitFds looks at init's fd table from the host: no fd on the
// root-only file, none of the server's listeners, and every fd above 2
// close-on-exec.
func checkInitFds(t *testing.T, e *testEnv, id string) {
	s, err := e.m.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	pid := s.proc.pid
	s.mu.Unlock()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	secret := os.Getenv(fdSecretEnv)
	for _, ent := range ents {
		fd, _ := strconv.Atoi(ent.Name())
		target, _ := os.Readlink(filepath.Join(dir, ent.Name()))
		if target == secret || fd == 200 || fd == 201 || fd == 1000 {
			t.Errorf("init holds fd %d -> %s, inherited from the server", fd, target)
		}
		if fd <= 2 {
			continue
		}
		info, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + ent.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if flags := fdinfoFlags(string(info)); flags&syscall.O_CLOEXEC == 0 {
			t.Errorf("init fd %d -> %s is not close-on-exec (flags %o)", fd, target, flags)
		}
	}
}

func fdinfoFlags(info string) int64 {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return n
		}
	}
	return 0
}

// pyFdScan fstat()s and reads every fd number 3..1024 first thing, then
// lists /proc/self/fd, leaving out the fds the listing itself opened.
const pyFdScan = `
import os, stat
found = []
for fd in range(3, 1025):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    try:
        data = os.pread(fd, 64, 0)
    except OSError as e:
        data = str(e).encode()
    found.append("%d:%o:%r" % (fd, stat.S_IFMT(st.st_mode), data))
def own(n):
    try:
        return os.readlink("/proc/self/fd/" + n).endswith("/fd")
    except OSError:
        return True # the listing's fd, closed by now
d = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
listed = sorted(int(n) for n in os.listdir("/proc/self/fd") if not own(n))
print("found=" + ";".join(found))
print("listed=" + ",".join(map(str, listed)))
`

func checkCommandFds(t *testing.T, e *testEnv, id string) {
	ctx := context.Background()
	for _, stdin := range []bool{false, true} {
		req := ExecRequest{Cmd: []string{"python3", "-c", pyFdScan}, Timeout: 30 * time.Second}
		if stdin {
			req.Stdin = strings.NewReader("")
		}
		r, err := e.m.Run(ctx, id, req)
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("fd scan (stdin %v): %v exit %d: %s", stdin, err, r.ExitCode, r.Stderr)
		}
		out := string(r.Stdout)
		if !strings.Contains(out, "found=\n") || !strings.Contains(out, "listed=0,1,2\n") {
			t.Errorf("a command (stdin %v) sees more than stdio:\n%s", stdin, out)
		}
		if strings.Contains(out, fdSecretTxt) {
			t.Errorf("a command read the server's root-only file:\n%s", out)
		}
	}
	// A background process started by a shell, and its children, too.
	out := e.sh(id, `python3 -c 'import os,sys; sys.stdout.write(",".join(sorted(os.listdir("/proc/self/fd"))))' & wait`)
	if out != "0,1,2,3" { // 3 is listdir's own directory fd
		t.Errorf("background process fds: %q", out)
	}
}

// pyAttacker tries, for as long as /tmp/attack.stop does not exist, every
// way into init's control channel a sandbox process has; it prints a WIN
// line for anything that works.
const pyAttacker = `
import ctypes, os, socket, stat, time, json, struct, signal
libc = ctypes.CDLL(None, use_errno=True)
def log(*a):
    print(*a, flush=True)
def forge(c):
    req = c.recv(1 << 20)
    log("WIN accepted a host request:", req[:200])
    for body in (json.dumps({"pid": 4242}), json.dumps({"exit": {"code": 99}})):
        c.sendall(struct.pack(">I", len(body)) + body.encode())
def try_fd(fd):
    try:
        st = os.fstat(fd)
    except OSError:
        return
    log("WIN open fd", fd, oct(st.st_mode))
    if stat.S_ISSOCK(st.st_mode):
        s = socket.socket(fileno=os.dup(fd))
        s.setblocking(False)
        try:
            c, _ = s.accept(); c.setblocking(True); forge(c)
        except OSError as e:
            log("accept on fd", fd, e)
def try_sockets():
    paths = set()
    for line in open("/proc/net/unix").read().splitlines()[1:]:
        f = line.split()
        if len(f) >= 8:
            paths.add(f[7])
    for root in ("/tmp", "/run", "/dev", "/home", "/var", "/etc", "/root"):
        for dp, dn, fn in os.walk(root):
            for n in fn:
                p = os.path.join(dp, n)
                try:
                    if stat.S_ISSOCK(os.lstat(p).st_mode):
                        paths.add(p)
                except OSError:
                    pass
    for p in paths:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(0.2)
        try:
            s.connect("\0" + p[1:] if p.startswith("@") else p)
            body = json.dumps({"op": "exec", "cmd": ["/bin/true"]}).encode()
            s.sendall(struct.pack(">I", len(body)) + body)
            log("WIN connected to", p, s.recv(100))
        except OSError as e:
            log("connect", p, e)
        s.close()
def try_init():
    for fd in os.listdir("/proc"):
        if not fd.isdigit():
            continue
        try:
            for n in os.listdir("/proc/%s/fd" % fd):
                t = os.readlink("/proc/%s/fd/%s" % (fd, n))
                if fd == "1":
                    log("WIN listed init fd", n, t)
        except OSError:
            pass
    for p in ("/proc/1/mem", "/proc/1/environ", "/proc/1/fd/3", "/proc/1/root/"):
        try:
            os.open(p, os.O_RDONLY); log("WIN opened", p)
        except OSError as e:
            log("open", p, e)
    for name, nr, args in (("ptrace_attach", 101, (16, 1, 0, 0)), ("ptrace_seize", 101, (0x4206, 1, 0, 0)),
                           ("pidfd_open", 434, (1, 0))):
        r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
        if r >= 0:
            log("WIN" if name != "pidfd_open" else "opened", name) # a pidfd alone grants nothing
            if name == "pidfd_open":
                for tfd in range(3, 16):
                    g = libc.syscall(438, ctypes.c_long(r), ctypes.c_long(tfd), ctypes.c_long(0))
                    if g >= 0:
                        log("WIN pidfd_getfd", tfd); try_fd(g)
                os.close(r)
        else:
            log(name, os.strerror(ctypes.get_errno()))
    try:
        os.kill(1, signal.SIGSTOP); log("WIN stopped init")
    except OSError as e:
        log("kill", e)
rounds = 0
deadline = time.time() + 60
while not os.path.exists("/tmp/attack.stop") and time.time() < deadline:
    for fd in range(3, 1025):
        try_fd(fd)
    if rounds % 100 == 0:
        try_sockets(); try_init()
    rounds += 1
    time.sleep(0.005)
log("rounds", rounds)
`

func checkTakeover(t *testing.T, e *testEnv, id string) {
	ctx := context.Background()
	if err := e.m.WriteFile(ctx, id, "/tmp/attack.py", strings.NewReader(pyAttacker), 0o755); err != nil {
		t.Fatal(err)
	}
	e.sh(id, "python3 /tmp/attack.py </dev/null >/tmp/attack.log 2>&1 & echo $! >/tmp/attack.pid")
	time.Sleep(300 * time.Millisecond) // let it get going
	for i := 0; i < 20; i++ {
		r, err := e.m.Run(ctx, id, ExecRequest{Cmd: []string{"sh", "-c", `echo "$0 $EXEC_SECRET"; exit $(($0 % 7))`, strconv.Itoa(i)},
			Env: map[string]string{"EXEC_SECRET": "s3cret-" + strconv.Itoa(i)}, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatalf("exec %d: %v", i, err)
		}
		if want := fmt.Sprintf("%d s3cret-%d\n", i, i); string(r.Stdout) != want || r.ExitCode != i%7 {
			t.Errorf("exec %d: stdout %q exit %d, want %q exit %d", i, r.Stdout, r.ExitCode, want, i%7)
		}
	}
	e.sh(id, `touch /tmp/attack.stop; while kill -0 "$(cat /tmp/attack.pid)" 2>/dev/null; do sleep 0.05; done`)
	log := e.sh(id, "cat /tmp/attack.log")
	t.Logf("attacker log:\n%s", log)
	if !strings.Contains(log, "rounds ") {
		t.Fatalf("the attacker did not run to the end")
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "WIN") || strings.Contains(line, "Traceback") {
			t.Errorf("attack: %s", line)
		}
	}
}
