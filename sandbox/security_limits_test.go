package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// Operator defaults the limit tests set (small, so that filling them is
// quick); the pids, nofile and cpu defaults are the library's own.
const (
	testDefaultDisk   = 96 << 20
	testDefaultInodes = 8192
)

// TestSecurityDefaultLimits attacks a sandbox created with no limits in
// its Spec: each resource is bounded by a default.
func TestSecurityDefaultLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.DefaultDiskBytes, c.DefaultInodes = testDefaultDisk, testDefaultInodes })
	in := e.create(Spec{})
	wantCPU := min(1, float64(runtime.NumCPU()))
	if in.CPU != wantCPU || in.Pids != defaultPids || in.NoFile != defaultNoFile || in.MemoryBytes != defaultMemoryBytes ||
		in.DiskBytes != testDefaultDisk || in.Inodes != testDefaultInodes || in.DiskUnbounded {
		t.Fatalf("defaults not applied: %+v", in)
	}
	id := in.ID
	t.Run("disk", func(t *testing.T) {
		out := string(e.run(id, "sh", "-c", "dd if=/dev/zero of=/home/sandbox/fill bs=1M count=400 2>&1; du -k /home/sandbox/fill | cut -f1; rm /home/sandbox/fill").Stdout)
		if !strings.Contains(out, "No space left") {
			t.Fatalf("disk not limited: %s", out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		kb, _ := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if kb<<10 > testDefaultDisk || kb<<10 < testDefaultDisk*3/4 {
			t.Fatalf("filled %d KiB, want about the %d KiB default", kb, testDefaultDisk>>10)
		}
	})
	t.Run("inodes", func(t *testing.T) {
		out := e.py(id, `import os, errno
os.mkdir("/home/sandbox/many")
n = 0
try:
    while n < 100000:
        open("/home/sandbox/many/%d" % n, "w").close(); n += 1
except OSError as e:
    print(n, errno.errorcode[e.errno])
else:
    print(n, "none")`)
		var n int
		var code string
		fmt.Sscan(out, &n, &code)
		if code != "ENOSPC" || n > testDefaultInodes || n < testDefaultInodes/2 {
			t.Fatalf("created %d files, ended by %s; want ENOSPC near %d inodes", n, code, testDefaultInodes)
		}
		e.sh(id, "rm -rf /home/sandbox/many")
	})
	t.Run("pids", func(t *testing.T) { forkBomb(t, e, id, defaultPids) })
	t.Run("nofile", func(t *testing.T) { openFilesBomb(t, e, id, defaultNoFile) })
	t.Run("cpu", func(t *testing.T) { cpuBusy(t, e, id, wantCPU) })
}

// forkBomb forks until the pids limit stops it; the sandbox survives.
func forkBomb(t *testing.T, e *testEnv, id string, limit int64) {
	ctx := context.Background()
	p, err := e.m.Exec(ctx, id, ExecRequest{Cmd: []string{"sh", "-c", "b() { b | b & }; b; sleep 4"}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var peak int64
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		u, err := e.m.Stats(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		peak = max(peak, u.Pids)
	}
	if peak > limit {
		t.Fatalf("fork bomb reached %d tasks, limit %d", peak, limit)
	}
	if peak < limit/2 {
		t.Fatalf("fork bomb peaked at %d tasks: it did not run (limit %d)", peak, limit)
	}
	p.Close()
	e.sh(id, "true")
}

// pyOpenFiles forks N children; each raises its soft RLIMIT_NOFILE to the
// hard limit (and tries a higher hard one), opens /dev/null until it
// fails, reports and holds the files; the parent prints "ready".
const pyOpenFiles = `
import os, resource, sys, time, errno
n = int(sys.argv[1])
r, w = os.pipe()
for i in range(n):
    if os.fork() == 0:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        try: resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))
        except (ValueError, OSError): resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        fds = []
        try:
            while len(fds) < 200000: fds.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as e:
            os.write(w, ("%d %s %d\n" % (len(fds), errno.errorcode[e.errno], resource.getrlimit(resource.RLIMIT_NOFILE)[1])).encode())
        time.sleep(30); os._exit(0)
out = b""
while out.count(b"\n") < n: out += os.read(r, 4096)
open("/tmp/nofile.out", "wb").write(out + b"ready\n")
time.sleep(30)
`

// openFilesBomb checks that processes of the sandbox cannot open more than
// limit files each, and that the host's file table grows by no more than
// that bound for all of them together.
func openFilesBomb(t *testing.T, e *testEnv, id string, limit int64) {
	const procs = 8
	before, kmem0 := fileNr(t), kmemUsage(e, id)
	p, err := e.m.Exec(context.Background(), id, ExecRequest{Cmd: []string{"python3", "-c", pyOpenFiles, strconv.Itoa(procs)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var out string
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out, "ready"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("open-files bomb did not report: %q", out)
		}
		out = string(e.run(id, "cat", "/tmp/nofile.out").Stdout)
	}
	grown := fileNr(t) - before
	t.Logf("host file table grew by %d while %d processes held their files (kernel memory charged to the sandbox's cgroup: %+d KiB):\n%s",
		grown, procs, (kmemUsage(e, id)-kmem0)>>10, out)
	for _, line := range strings.Split(strings.TrimSuffix(strings.TrimSpace(out), "ready"), "\n") {
		var n, hard int64
		var code string
		if fmt.Sscan(line, &n, &code, &hard); line != "" && (code != "EMFILE" || n > limit || hard != limit) {
			t.Errorf("a process opened %d files (%s, hard limit %d); want EMFILE by %d", n, code, hard, limit)
		}
	}
	// Other processes on the host open and close files meanwhile: allow
	// them a generous margin, far below what the unlimited bomb reaches.
	if bound := int64(procs)*limit + 16384; grown > bound {
		t.Errorf("host file table grew by %d, bound %d", grown, bound)
	}
}

// kmemUsage is the kernel memory charged to the sandbox's memory cgroup
// (cgroup v1; 0 elsewhere).
func kmemUsage(e *testEnv, id string) int64 {
	b, _ := os.ReadFile(filepath.Join(e.m.cg.dir("memory", id), "memory.kmem.usage_in_bytes"))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// fileNr is the number of allocated file handles on the host.
func fileNr(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/sys/fs/file-nr")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
	return n
}

// cpuBusy checks the default cpu quota in the cgroup and that two busy
// loops together get no more than it (with a generous margin).
func cpuBusy(t *testing.T, e *testEnv, id string, cores float64) {
	quota, period := cpuQuota(t, e, id)
	if quota <= 0 || float64(quota)/float64(period) != cores {
		t.Fatalf("cpu quota %d/%d, want %.2f cores", quota, period, cores)
	}
	ctx := context.Background()
	p, err := e.m.Exec(ctx, id, ExecRequest{Cmd: []string{"sh", "-c", "for i in 1 2 3; do (while :; do :; done) & done; wait"}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	time.Sleep(200 * time.Millisecond)
	u0, _ := e.m.Stats(ctx, id)
	t0 := time.Now()
	time.Sleep(1200 * time.Millisecond)
	u1, _ := e.m.Stats(ctx, id)
	ratio := (u1.CPUSeconds - u0.CPUSeconds) / time.Since(t0).Seconds()
	t.Logf("three busy loops used %.2f cores (quota %.2f)", ratio, cores)
	if ratio > cores*1.3 {
		t.Fatalf("busy loops used %.2f cores, over the %.2f quota", ratio, cores)
	}
}

// cpuQuota reads the sandbox's cfs quota and period (v1 or v2).
func cpuQuota(t *testing.T, e *testEnv, id string) (quota, period int64) {
	d := e.m.cg.dir("cpu", id)
	if e.m.cg.v2 {
		b, _ := os.ReadFile(filepath.Join(d, "cpu.max"))
		f := strings.Fields(string(b))
		if len(f) != 2 {
			t.Fatalf("cpu.max %q", b)
		}
		quota, _ = strconv.ParseInt(f[0], 10, 64) // "max" parses as 0
		period, _ = strconv.ParseInt(f[1], 10, 64)
		return quota, period
	}
	q, _ := os.ReadFile(filepath.Join(d, "cpu.cfs_quota_us"))
	p, _ := os.ReadFile(filepath.Join(d, "cpu.cfs_period_us"))
	quota, _ = strconv.ParseInt(strings.TrimSpace(string(q)), 10, 64)
	period, _ = strconv.ParseInt(strings.TrimSpace(string(p)), 10, 64)
	return quota, period
}

// TestSecurityDiskQuotaOff: with disk quotas turned off by the operator, a
// sandbox says its disk is unbounded; with them on (the default), a host
// that cannot enforce them makes Create fail instead of falling back.
func TestSecurityDiskQuotaOff(t *testing.T) {
	t.Parallel()
	off := newEnv(t, func(c *Config) { c.DiskQuotaOff = true })
	in := off.create(Spec{})
	if !in.DiskUnbounded || in.DiskBytes != 0 {
		t.Fatalf("quota off: %+v", in)
	}
	if got, _ := off.m.Get(context.Background(), in.ID); !got.DiskUnbounded {
		t.Fatalf("Get lost disk_unbounded: %+v", got)
	}
	_, err := off.m.Create(context.Background(), Spec{Inodes: 4096})
	wantCode(t, err, bullpen.EINVALID)

	// No mkfs.ext4 on PATH: the host cannot make the disk.
	on := newEnv(t, func(c *Config) { c.lookPath = func(string) (string, error) { return "", exec.ErrNotFound } })
	_, err = on.m.Create(context.Background(), Spec{})
	wantCode(t, err, bullpen.EUNSUPPORTED)
	if !strings.Contains(err.Error(), "DiskQuotaOff") {
		t.Fatalf("error does not say how to turn quotas off: %v", err)
	}
	if infos, _ := on.m.List(context.Background(), nil); len(infos) != 0 {
		t.Fatalf("failed create left %d sandboxes", len(infos))
	}
}

// A sandbox whose metadata predates the cpu default (cpu 0) gets the
// default quota when it starts again, not unlimited cpu.
func TestSecurityOldSandboxGetsDefaultCPU(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.DefaultCPU = 0.5 })
	ctx := context.Background()
	id := e.create(Spec{}).ID
	if err := e.m.Stop(ctx, id); err != nil {
		t.Fatal(err)
	}
	s, _ := e.m.lookup(id)
	s.mu.Lock()
	s.meta.CPU = 0
	err := s.saveMeta()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.m.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if quota, period := cpuQuota(t, e, id); quota != period/2 {
		t.Fatalf("cpu quota %d/%d after restart, want the 0.5-core default", quota, period)
	}
}
