package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// waitPool waits until the Manager's init pool is full (no-op when off).
func (e *testEnv) waitPool() {
	e.t.Helper()
	if e.m.pool == nil {
		return
	}
	for deadline := time.Now().Add(20 * time.Second); len(e.m.pool.ready) < cap(e.m.pool.ready); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("init pool: %d of %d ready", len(e.m.pool.ready), cap(e.m.pool.ready))
		}
	}
}

// pooled returns the ids of the pool's entries and their inits' host pids,
// as the host shows them: a log in the pool dir, a process in the cgroup.
func (e *testEnv) pooled() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	if e.m.pool == nil {
		return out
	}
	ents, _ := os.ReadDir(e.m.pool.dir)
	for _, ent := range ents {
		id := strings.TrimSuffix(ent.Name(), ".log")
		b, _ := os.ReadFile(filepath.Join(e.m.cg.dir("pids", id), "cgroup.procs"))
		if e.m.cg.v2 {
			b, _ = os.ReadFile(filepath.Join(e.m.cg.dir("", id), "cgroup.procs"))
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			out[id], _ = strconv.Atoi(f[0])
		}
	}
	return out
}

// checkPoolGone verifies that nothing of the pooled inits is left after Close.
func (e *testEnv) checkPoolGone(pooled map[string]int) {
	t := e.t
	t.Helper()
	for id, pid := range pooled {
		if alive(pid) {
			t.Errorf("pooled init %s (pid %d) still runs", id, pid)
		}
		if e.m.cg.exists(id) {
			t.Errorf("pooled %s: cgroup left", id)
		}
		if _, err := os.Stat(filepath.Join(e.m.runDir, id+".sock")); err == nil {
			t.Errorf("pooled %s: socket left", id)
		}
	}
	if e.m.pool != nil {
		if ents, _ := os.ReadDir(e.m.pool.dir); len(ents) > 0 {
			t.Errorf("pool dir not empty: %d entries", len(ents))
		}
		if _, err := os.Stat(e.m.pool.stage); err == nil {
			t.Errorf("staging mount point %s left", e.m.pool.stage)
		}
	}
	if mi := nsMountinfo(t, e.m); strings.Contains(mi, " "+e.m.runDir+" ") {
		t.Errorf("run dir %s still mounted", e.m.runDir)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// poolOn sets the default pool whatever BULLPEN_TEST_INIT_POOL says.
func poolOn(c *Config) { c.InitPool = new(DefaultInitPool) }

func nsOf(t *testing.T, pid int, ns string) string {
	t.Helper()
	l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestPoolCreateUsesPrestartedInit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, poolOn)
	before := e.pooled()
	if len(before) != DefaultInitPool {
		t.Fatalf("pool holds %d inits, want %d", len(before), DefaultInitPool)
	}
	in := e.create(Spec{Name: "pooled-one", MemoryBytes: 64 << 20, NoFile: 2048})
	pid, ok := before[in.ID]
	if !ok || e.m.PoolTaken() != 1 {
		t.Fatalf("sandbox %s is not one of the pooled %v (taken %d)", in.ID, before, e.m.PoolTaken())
	}
	s, _ := e.m.lookup(in.ID)
	if s.meta.InitPid != pid {
		t.Fatalf("init pid %d, the pooled init was %d", s.meta.InitPid, pid)
	}
	if out := e.sh(in.ID, "hostname; echo hi > /home/sandbox/f; cat /home/sandbox/f; ulimit -n"); out != "pooled-one\nhi\n2048\n" {
		t.Errorf("hostname, file and open files limit: %q", out)
	}
	if r := e.run(in.ID, "sh", "-c", "touch /usr/bin/pooled-x"); r.ExitCode == 0 {
		t.Errorf("the host's /usr is writable in a pooled sandbox")
	}
	if out := e.sh(in.ID, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"); out != "lo\n" {
		t.Errorf("no-network sandbox has interfaces %q", out)
	}
	if !e.m.cg.v2 {
		b, _ := os.ReadFile(filepath.Join(e.m.cg.dir("memory", in.ID), "memory.limit_in_bytes"))
		if strings.TrimSpace(string(b)) != strconv.Itoa(64<<20) {
			t.Errorf("memory limit %q, want the spec's %d", b, 64<<20)
		}
	}
	small := e.run(in.ID, "python3", "-c", "b = b'x' * (16 << 20); print('ok')")
	big := e.run(in.ID, "python3", "-c", "b = b'x' * (200 << 20); print('ok')")
	if string(small.Stdout) != "ok\n" || big.ExitCode == 0 || strings.Contains(string(big.Stdout), "ok") {
		t.Errorf("memory limit: 16 MiB %+v, 200 MiB exit %d signal %q %q", small, big.ExitCode, big.Signal, big.Stdout)
	}
	// The pool refills after the take.
	e.waitPool()
	if after := e.pooled(); len(after) != DefaultInitPool || after[in.ID] != 0 {
		t.Errorf("pool after a take: %v", after)
	}
}

func TestPoolInitsNotShared(t *testing.T) {
	t.Parallel()
	for mode, path := range initModes() {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, poolOn, func(c *Config) { c.InitPath = path })
			poolInitsNotShared(t, e)
		})
	}
}

func poolInitsNotShared(t *testing.T, e *testEnv) {
	a, b := e.create(Spec{}), e.create(Spec{})
	if e.m.PoolTaken() != 2 {
		t.Fatalf("%d of 2 creates used the pool", e.m.PoolTaken())
	}
	sa, _ := e.m.lookup(a.ID)
	sb, _ := e.m.lookup(b.ID)
	pa, pb := sa.meta.InitPid, sb.meta.InitPid
	if pa == pb {
		t.Fatalf("both sandboxes run init pid %d", pa)
	}
	for _, ns := range []string{"pid", "mnt", "net", "uts", "ipc"} {
		if x, y, host := nsOf(t, pa, ns), nsOf(t, pb, ns), nsOf(t, os.Getpid(), ns); x == y || x == host {
			t.Errorf("%s namespace: a %s, b %s, host %s", ns, x, y, host)
		}
	}
	e.sh(a.ID, "echo secret > /tmp/a-only; echo secret > /home/sandbox/a-only")
	if out := e.sh(b.ID, "ls /tmp/a-only /home/sandbox/a-only 2>&1; true"); strings.Count(out, "No such file") != 2 {
		t.Errorf("b sees a's files: %q", out)
	}
}

// A pooled init that died while it waited is no failed Create: the
// Create starts an init of its own.
func TestPoolDeadEntry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, poolOn)
	pooled := e.pooled()
	for _, pid := range pooled {
		if err := syscallKill(pid); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("pooled init %d did not die", pid)
			}
		}
	}
	in := e.create(Spec{NoFile: 2048})
	s, _ := e.m.lookup(in.ID)
	if _, ok := pooled[in.ID]; !ok || e.m.PoolTaken() != 1 || s.meta.InitPid == pooled[in.ID] {
		t.Fatalf("create %s (init %d) did not take and replace a dead pooled init %v", in.ID, s.meta.InitPid, pooled)
	}
	if out := e.sh(in.ID, "echo alive; ulimit -n"); out != "alive\n2048\n" {
		t.Fatalf("sandbox on its own init: %q", out)
	}
}

func TestPoolOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.InitPool = new(0) })
	if e.m.pool != nil {
		t.Fatal("InitPool 0 made a pool")
	}
	in := e.create(Spec{})
	if out := e.sh(in.ID, "echo cold"); out != "cold\n" || e.m.PoolTaken() != 0 {
		t.Fatalf("cold create: %q, taken %d", out, e.m.PoolTaken())
	}
	if strings.Contains(nsMountinfo(t, e.m), " "+e.m.runDir+" ") {
		t.Error("run dir mounted without a pool")
	}
	_, err := New(context.Background(), Config{StateDir: t.TempDir(), InitPath: testInitPath, InitPool: new(-1)})
	wantCode(t, err, bullpen.EINVALID)
}

// A pooled init cloned while another sandbox's disk is mounted must not
// keep that disk's loop device attached once the sandbox is destroyed.
func TestPoolDestroyDetachesDisk(t *testing.T) {
	t.Parallel()
	e := newEnv(t, poolOn, func(c *Config) { c.DefaultDiskBytes = 48 << 20 })
	before := e.pooled()
	a := e.create(Spec{})
	e.waitPool() // refilled while a's disk is mounted
	var fresh int
	for id := range e.pooled() {
		if _, ok := before[id]; !ok {
			fresh++
		}
	}
	if fresh == 0 {
		t.Fatal("no pooled init was started while a existed")
	}
	dev := e.devOf(a.ID)
	backing := "/sys/dev/block/" + dev + "/loop/backing_file"
	if b, err := os.ReadFile(backing); err != nil || !strings.Contains(string(b), a.ID) {
		t.Fatalf("a's disk %s is not a loop device on a's image: %q %v", dev, b, err)
	}
	// The pooled inits hold no copy of the host's disk mounts: they
	// pivoted into their staging root (the kernel would detach such a
	// copy when destroy removes the mount point, but until then it pins
	// the disk, and a mount point left behind would pin it for good).
	for id, pid := range e.pooled() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, " - ext4 /dev/loop") {
				t.Errorf("pooled init %s holds a disk mount: %s", id, l)
			}
		}
	}
	if err := e.m.Terminate(t.Context(), a.ID); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(backing)
		if err != nil || !strings.Contains(string(b), a.ID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's loop device %s still attached to %s after its destroy", dev, b)
		}
	}
}

// A Manager with a pool, started on sandboxes a Manager without one left
// mounted under a run dir that is no mount point, carries them into the
// shared bind, and nothing of them is left out of sight.
func TestPoolAfterPoolOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	off, err := New(context.Background(), Config{StateDir: dir, InitPath: testInitPath, InitPool: new(0),
		DefaultDiskBytes: 48 << 20})
	if err != nil {
		t.Fatal(err)
	}
	old, err := off.Create(context.Background(), Spec{Mounts: []Mount{{HostPath: t.TempDir(), Path: "/opt/x"}}})
	if err != nil {
		t.Fatal(err)
	}
	off.Close()
	e := &testEnv{t: t, cfg: Config{StateDir: dir, InitPath: testInitPath, DefaultDiskBytes: 48 << 20}}
	if e.m, err = New(context.Background(), e.cfg); err != nil {
		t.Fatal(err)
	}
	defer func() {
		pooled := e.pooled()
		_ = e.m.TerminateAll(context.Background())
		e.m.Close()
		e.checkGone(old.ID)
		e.checkPoolGone(pooled)
	}()
	var mounted, shared bool
	inNS(t, e.m, func() { mounted, shared, _, _ = mountState(e.m.runDir) })
	if !mounted || !shared || e.m.pool == nil {
		t.Fatalf("run dir mounted %v shared %v, pool %v", mounted, shared, e.m.pool != nil)
	}
	mi := nsMountinfo(t, e.m)
	if n := strings.Count(mi, e.m.runDir+"/"+old.ID+" "); n != 1 {
		t.Errorf("the old sandbox's root filesystem is mounted %d times, want once", n)
	}
	if out := e.sh(old.ID, "echo still; ls -d /opt/x"); out != "still\n/opt/x\n" {
		t.Errorf("old sandbox: %q", out)
	}
	if err := e.m.WriteFile(context.Background(), old.ID, "/home/sandbox/f", strings.NewReader("via host"), 0o644); err != nil {
		t.Errorf("host-side file write into the old sandbox: %v", err)
	}
	if out := e.sh(old.ID, "cat /home/sandbox/f"); out != "via host" {
		t.Errorf("old sandbox sees %q", out)
	}
	e.waitPool()
	in := e.create(Spec{})
	if e.m.PoolTaken() != 1 || e.sh(in.ID, "echo new") != "new\n" {
		t.Errorf("pooled create after the pool-off Manager: taken %d", e.m.PoolTaken())
	}
}

const poolChildEnv = "BULLPEN_TEST_POOL_CHILD"

// A killed host's pooled inits exit by themselves; the next Manager adopts
// the assigned ones and removes what the unassigned ones left.
func TestPoolHostKilled(t *testing.T) {
	needRoot(t)
	if dir, ok := os.LookupEnv(poolChildEnv); ok {
		poolChild(t, dir)
		return
	}
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPoolHostKilled$", "-test.count=1")
	cmd.Env = append(os.Environ(), poolChildEnv+"="+dir, testInitEnv+"="+testInitPath)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pooled, sandbox, forkServer := map[string]int{}, "", 0
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
		var kind, id string
		var pid int
		if n, _ := fmt.Sscan(sc.Text(), &kind, &id, &pid); n == 3 && kind == "pooled" {
			pooled[id] = pid
		} else if n == 3 && kind == "sandbox" {
			sandbox = id
		} else if n == 3 && kind == "forkserver" {
			forkServer = pid
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if len(pooled) != DefaultInitPool || sandbox == "" || forkServer == 0 {
		t.Fatalf("child reported pooled %v, sandbox %q, fork-server %d", pooled, sandbox, forkServer)
	}
	// EOF on its socket ends the fork-server of a killed host.
	gone(t, forkServer, "fork-server of the killed host")
	for id, pid := range pooled {
		for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("pooled init %s (pid %d) outlived its killed host", id, pid)
			}
		}
	}
	e := &testEnv{t: t, cfg: Config{StateDir: dir, InitPath: testInitPath, InitPool: new(0)}}
	if e.m, err = New(context.Background(), e.cfg); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = e.m.TerminateAll(context.Background())
		e.m.Close()
		e.checkGone(sandbox)
		e.checkPoolGone(pooled)
	}()
	for id := range pooled {
		if e.m.cg.exists(id) {
			t.Errorf("pooled %s: cgroup left after restart", id)
		}
		if _, err := os.Stat(filepath.Join(e.m.runDir, id+".sock")); err == nil {
			t.Errorf("pooled %s: socket left after restart", id)
		}
		if _, err := os.Stat(filepath.Join(dir, "pool", id+".log")); err == nil {
			t.Errorf("pooled %s: log left after restart", id)
		}
	}
	if out := e.sh(sandbox, "echo adopted"); out != "adopted\n" {
		t.Errorf("adopted sandbox: %q", out)
	}
}

// poolChild is the host TestPoolHostKilled kills: it reports its pool and
// one sandbox made from it, then waits to be killed.
func poolChild(t *testing.T, dir string) {
	// The default cgroup lock: a killed host would leave the other mounted.
	m, err := New(context.Background(), Config{StateDir: dir, InitPath: os.Getenv(testInitEnv), DefaultCgroupLock: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, m: m}
	e.waitPool()
	in := e.create(Spec{})
	s, _ := m.lookup(in.ID)
	fmt.Printf("sandbox %s %d\n", in.ID, s.meta.InitPid)
	e.waitPool()
	for id, pid := range e.pooled() {
		fmt.Printf("pooled %s %d\n", id, pid)
	}
	fmt.Printf("forkserver fs %d\n", m.fs.pid())
	fmt.Println("ready")
	time.Sleep(time.Minute)
	t.Fatal("not killed")
}

// A pooled init's cgroups have the default limits; a create asking for
// more memory raises them (cgroup v1 refuses a memory limit above the
// memory+swap one, so the order of the writes matters).
func TestPoolCreateRaisesLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, poolOn)
	before := e.pooled()
	want := e.m.cfg.DefaultMemoryBytes * 2
	in := e.create(Spec{MemoryBytes: want, Pids: e.m.cfg.DefaultPids * 2, CPU: 0.5})
	if _, ok := before[in.ID]; !ok {
		t.Fatalf("sandbox %s is not one of the pooled %v", in.ID, before)
	}
	if out := e.sh(in.ID, "echo hi"); out != "hi\n" {
		t.Fatalf("exec: %q", out)
	}
	files := map[string]string{"memory.limit_in_bytes": "memory", "memory.memsw.limit_in_bytes": "memory"}
	if e.m.cg.v2 {
		files = map[string]string{"memory.max": ""}
	}
	for f, ctrl := range files {
		b, err := os.ReadFile(filepath.Join(e.m.cg.dir(ctrl, in.ID), f))
		if errors.Is(err, os.ErrNotExist) && f == "memory.memsw.limit_in_bytes" {
			continue // no swap accounting on this host
		}
		if strings.TrimSpace(string(b)) != strconv.FormatInt(want, 10) {
			t.Errorf("%s = %q, %v; want %d", f, b, err, want)
		}
	}
}
