// Command sandbox (bench/sandbox) measures the local sandbox runtime (package
// sandbox) on this host and compares it with bubblewrap running the same
// command. Run it as root from the repository:
//
//	go run ./bench/sandbox [-n 40] [-alive 200] [-init PATH|self]
//
// By default it first builds the dedicated init (cmd/bullpen-sandbox-init)
// into a temporary directory and uses it; -init self measures the fallback
// that re-executes the bench binary itself, and -init PATH any init binary
// (a server binary that calls sandbox.MaybeRunInit works too).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/internal/benchkit"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
)

func main() {
	sandbox.MaybeRunInit()
	n := flag.Int("n", 40, "iterations per latency figure")
	alive := flag.Int("alive", 200, "sandboxes kept alive at once for the memory figure")
	noBwrap := flag.Bool("no-bwrap", false, "skip the bubblewrap comparison")
	diskQuota := flag.String("disk-quota", "on", "on: every sandbox gets the default disk quota (an ext4 image on a loop device); off: unbounded writable layers, to compare")
	initFlag := flag.String("init", "", "init binary: a path, \"self\" (re-execute this binary), or empty to build cmd/bullpen-sandbox-init")
	cgroupLock := flag.String("cgroup-lock", "favordynmods", "favordynmods: the Manager's default (fast cgroup moves); default: the kernel's own lock mode, to compare")
	pool := flag.Int("pool", -1, "pre-started inits (Config.InitPool); -1: the Manager's default")
	cold := flag.Bool("cold", true, "also time creates on a second Manager without a pool, interleaved (library_cold_first_output_p50)")
	flag.Parse()
	initPath, cleanup, err := resolveInit(*initFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-bench:", err)
		os.Exit(1)
	}
	cfg := sandbox.Config{InitPath: initPath, DiskQuotaOff: *diskQuota == "off", DefaultCgroupLock: *cgroupLock == "default"}
	if *pool >= 0 {
		cfg.InitPool = pool
	}
	err = run(*n, *alive, !*noBwrap, *cold, cfg)
	cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-bench:", err)
		os.Exit(1)
	}
}

// resolveInit returns the init binary to use ("" = re-execute this one).
func resolveInit(flagVal string) (string, func(), error) {
	switch flagVal {
	case "self":
		return "/proc/self/exe", func() {}, nil
	case "":
		dir, err := os.MkdirTemp("", "sandbox-bench-init-")
		if err != nil {
			return "", nil, err
		}
		p := filepath.Join(dir, sandbox.InitBinaryName)
		out, err := exec.Command("go", "build", "-o", p, "github.com/bullpen-hq/bullpen/cmd/bullpen-sandbox-init").CombinedOutput()
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("building the init binary (use -init self to skip): %v: %s", err, tail(out))
		}
		return p, func() { os.RemoveAll(dir) }, nil
	default:
		return flagVal, func() {}, nil
	}
}

// newManager starts a Manager with cfg on a fresh state directory.
func newManager(ctx context.Context, cfg sandbox.Config, hc *hostCheck) (*sandbox.Manager, func(), error) {
	dir, err := os.MkdirTemp("", "sandbox-bench-")
	if err != nil {
		return nil, nil, err
	}
	cfg.StateDir = dir
	hc.watch(dir)
	m, err := sandbox.New(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return m, func() {
		m.TerminateAll(ctx)
		m.Close()
		os.RemoveAll(dir)
	}, nil
}

func run(n, alive int, bwrap, cold bool, cfg sandbox.Config) error {
	ctx := context.Background()
	hc := &hostCheck{n: n}
	hc.lines0, _ = hc.mountLines()
	m, done, err := newManager(ctx, cfg, hc)
	if err != nil {
		return err
	}
	defer done()
	var mc *sandbox.Manager // the cold path, for comparison
	if cold {
		cc := cfg
		cc.InitPool = new(0)
		if mc, done, err = newManager(ctx, cc, hc); err != nil {
			return err
		}
		defer done()
	}
	fmt.Printf("host: %d cores, %s, Go %s, load average %s\n", runtime.NumCPU(), kernel(), runtime.Version(), benchkit.LoadAvg())
	fmt.Printf("disk quota: %s\n", map[bool]string{false: "on (default ext4 image per sandbox)", true: "off (unbounded writable layers)"}[cfg.DiskQuotaOff])
	poolN := sandbox.DefaultInitPool
	if cfg.InitPool != nil {
		poolN = *cfg.InitPool
	}
	fmt.Printf("init pool: %d pre-started inits; cgroup lock: %s\n", poolN, map[bool]string{false: "favordynmods", true: "default"}[cfg.DefaultCgroupLock])
	desc := m.InitPath()
	if desc == "/proc/self/exe" {
		exe, _ := os.Executable()
		desc += " (re-executes " + exe + ")"
	}
	if st, err := os.Stat(m.InitPath()); err == nil {
		desc += fmt.Sprintf(", %.1f MB", float64(st.Size())/1e6)
	}
	fmt.Printf("init: %s\n", desc)

	// Warm-up (page cache, cgroup parents).
	for i := 0; i < 3; i++ {
		in, err := m.Create(ctx, sandbox.Spec{})
		if err != nil {
			return err
		}
		if _, err := m.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}}); err != nil {
			return err
		}
		m.Terminate(ctx, in.ID)
	}

	var bw *bwrapper
	if bwrap {
		if bw, err = newBwrap(); err != nil {
			fmt.Println("bwrap comparison skipped:", err)
		}
	}
	var createFirst, teardown, create, bwTimes, coldFirst []time.Duration
	for i := 0; i < n; i++ {
		if bw != nil { // interleaved with ours, so that both see the same load
			d, err := bw.once()
			if err != nil {
				return err
			}
			bwTimes = append(bwTimes, d)
		}
		c, f, td, err := createOnce(ctx, m)
		if err != nil {
			return err
		}
		create, createFirst, teardown = append(create, c), append(createFirst, f), append(teardown, td)
		if mc != nil {
			// Not while the other Manager refills its pool: its clone
			// would be timed as part of this create.
			waitPoolFull(m, poolN)
			if _, f, _, err = createOnce(ctx, mc); err != nil {
				return err
			}
			coldFirst = append(coldFirst, f)
		}
	}
	report("create (sandbox ready)", create)
	report("create -> first exec output", createFirst)
	if mc != nil {
		report("create -> first exec output, no pool", coldFirst)
	}
	report("teardown (terminate)", teardown)
	fmt.Printf("creates served by a pre-started init: %d\n", m.PoolTaken())
	if err := m.PoolError(); err != nil {
		fmt.Printf("init pool error: %v\n", err)
	}

	in, err := m.Create(ctx, sandbox.Spec{})
	if err != nil {
		return err
	}
	var warm, warmFirst, pause, resume []time.Duration
	for i := 0; i < n*5; i++ {
		t0 := time.Now()
		p, err := m.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
		if err != nil {
			return err
		}
		b := make([]byte, 1)
		io.ReadFull(p.Stdout(), b)
		warmFirst = append(warmFirst, time.Since(t0))
		p.Wait()
		p.Close()
		warm = append(warm, time.Since(t0))
	}
	report("warm exec: first output", warmFirst)
	report("warm exec: echo to exit", warm)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := m.Pause(ctx, in.ID); err != nil {
			return err
		}
		pause = append(pause, time.Since(t0))
		t1 := time.Now()
		if err := m.Resume(ctx, in.ID); err != nil {
			return err
		}
		resume = append(resume, time.Since(t1))
	}
	report("pause", pause)
	report("resume", resume)
	wake, err := startStopped(ctx, m, in.ID, n)
	if err != nil {
		return err
	}
	report("start a stopped sandbox -> first output", wake)
	m.Terminate(ctx, in.ID)

	hc.bw = bw
	mem, err := aliveTest(ctx, m, alive, hc)
	if err != nil {
		return err
	}
	checkTargets(median(createFirst), median(warm), mem, alive)
	bwMedian := reportBwrap(bwTimes, median(createFirst), median(warm))
	fmt.Println()
	sorted := func(ds []time.Duration) []time.Duration {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s
	}
	figMS("library_first_output_p50", median(createFirst))
	figMS("library_first_output_p95", pct(sorted(createFirst), 95))
	if mc != nil {
		figMS("library_cold_first_output_p50", median(coldFirst))
	}
	figMS("library_create_p50", median(create))
	figMS("library_teardown_p50", median(teardown))
	figMS("library_warm_exec_first_output_p50", median(warmFirst))
	figMS("library_warm_exec_p50", median(warm))
	figMS("library_pause_p50", median(pause))
	figMS("library_resume_p50", median(resume))
	figMS("library_start_stopped_first_output_p50", median(wake))
	fmt.Printf("figure library_idle_memory %.0f KiB\n", mem.sumKiB)
	fmt.Printf("figure library_idle_memory_avail_drop %.0f KiB\n", mem.availKiB)
	if bwMedian > 0 {
		figMS("library_bwrap_p50", bwMedian)
		fmt.Printf("figure library_bwrap_ratio %.2f x\n", float64(median(createFirst))/float64(bwMedian))
	}
	return nil
}

// waitPoolFull waits (up to a second) until m has n inits ready.
func waitPoolFull(m *sandbox.Manager, n int) {
	for deadline := time.Now().Add(time.Second); m.PoolReady() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// createOnce times Create, Create -> first byte of an echo and Terminate.
func createOnce(ctx context.Context, m *sandbox.Manager) (create, first, teardown time.Duration, err error) {
	t0 := time.Now()
	in, err := m.Create(ctx, sandbox.Spec{})
	if err != nil {
		return 0, 0, 0, err
	}
	create = time.Since(t0)
	p, err := m.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
	if err != nil {
		return 0, 0, 0, err
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(p.Stdout(), b); err != nil {
		return 0, 0, 0, err
	}
	first = time.Since(t0)
	p.Wait()
	p.Close()
	t1 := time.Now()
	if err := m.Terminate(ctx, in.ID); err != nil {
		return 0, 0, 0, err
	}
	return create, first, time.Since(t1), nil
}

// figMS prints a `figure <key> <ms> ms` line (make bench reads them).
func figMS(key string, d time.Duration) {
	fmt.Printf("figure %s %.2f ms\n", key, float64(d.Microseconds())/1000)
}

// startStopped stops the sandbox and times Start -> first byte of an
// echo, n times (the path that wakes an agent whose workspace idled).
func startStopped(ctx context.Context, m *sandbox.Manager, id string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i < n; i++ {
		if err := m.Stop(ctx, id); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := m.Start(ctx, id); err != nil {
			return nil, err
		}
		p, err := m.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
		if err != nil {
			return nil, err
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(p.Stdout(), b); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
		p.Wait()
		p.Close()
	}
	return out, nil
}

// aliveTest keeps count sandboxes alive and reports host memory per idle
// sandbox three ways: the drop in MemAvailable (after freeing this
// process's unused heap and dropping clean caches, before and after; this
// counts everything: kernel objects for the namespaces, mounts and cgroups,
// page tables, the inits and this Manager's own per-sandbox state), the
// inits' proportional set size, and the sandboxes' cgroup memory usage.
func aliveTest(ctx context.Context, m *sandbox.Manager, count int, hc *hostCheck) (aliveMem, error) {
	hc.bwBefore = bwrapP50(hc.bw, hc.n)
	debug.FreeOSMemory()
	dropCaches()
	before, mi0, o0 := memAvailable(), meminfo(), othersUsage()
	t0 := time.Now()
	var ids []string
	for i := 0; i < count; i++ {
		in, err := m.Create(ctx, sandbox.Spec{})
		if err != nil {
			return aliveMem{}, fmt.Errorf("sandbox %d: %w", i, err)
		}
		ids = append(ids, in.ID)
	}
	elapsed := time.Since(t0)
	// Every one answers.
	for _, id := range ids {
		if r, err := m.Run(ctx, id, sandbox.ExecRequest{Cmd: []string{"true"}}); err != nil || r.ExitCode != 0 {
			return aliveMem{}, fmt.Errorf("sandbox %s: %v", id, err)
		}
	}
	time.Sleep(2 * time.Second)
	debug.FreeOSMemory()
	dropCaches()
	after, mi1, o1 := memAvailable(), meminfo(), othersUsage()
	var pss, rss, cg int64
	for _, id := range ids {
		u, _ := m.Stats(ctx, id)
		cg += u.MemoryBytes
	}
	pids := initPids()
	threads := 0
	for _, pid := range pids {
		p, r := smapsRollup(pid)
		pss += p
		rss += r
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		threads += len(tasks)
	}
	c := int64(count)
	fmt.Printf("\n%d sandboxes alive (created in %v, %.1f/s)\n", count, elapsed.Round(time.Millisecond), float64(count)/elapsed.Seconds())
	fmt.Printf("  host MemAvailable drop per sandbox:  %7.0f KiB  (all host memory: kernel objects, page tables, init, manager heap)\n", float64(before-after)/float64(c)/1024)
	var parts []string
	for _, k := range []string{"AnonPages", "Slab", "SUnreclaim", "KernelStack", "PageTables", "Percpu", "Shmem"} {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, float64(mi1[k]-mi0[k])/float64(c)))
	}
	fmt.Printf("    of which (KiB per sandbox, /proc/meminfo deltas): %s\n", strings.Join(parts, ", "))
	mem := aliveMem{availKiB: float64(before-after) / float64(c) / 1024}
	corr := correctedDeltas(mi0, mi1, o0, o1, c)
	parts = parts[:0]
	for _, k := range memTargetFields {
		mem.rawKiB += float64(mi1[k]-mi0[k]) / float64(c)
		mem.sumKiB += corr[k]
		parts = append(parts, fmt.Sprintf("%s %.0f", k, corr[k]))
	}
	fmt.Printf("  host memory per idle sandbox:        %7.0f KiB  (%s deltas; %.0f KiB before taking out\n",
		mem.sumKiB, strings.Join(memTargetFields, " + "), mem.rawKiB)
	fmt.Printf("    corrected by field: %s; meanwhile others' anon %+d MiB, %+d threads)\n",
		strings.Join(parts, ", "), (o1.anonKiB-o0.anonKiB)/1024, o1.threads-o0.threads)
	fmt.Printf("  init PSS per sandbox:                %7.0f KiB  (RSS %0.f KiB, shared binary text counted once in PSS; %d inits, %.1f threads each)\n",
		float64(pss)/float64(c)/1024, float64(rss)/float64(c)/1024, len(pids), float64(threads)/float64(max(len(pids), 1)))
	fmt.Printf("  cgroup memory usage per sandbox:     %7.0f KiB  (memory.usage_in_bytes/current, includes kernel memory charged to the cgroup)\n", float64(cg)/float64(c)/1024)
	if err := hc.report(ctx, m, ids); err != nil {
		return aliveMem{}, err
	}
	t1 := time.Now()
	for _, id := range ids {
		m.Terminate(ctx, id)
	}
	fmt.Printf("  terminated all in %v\n", time.Since(t1).Round(time.Millisecond))
	if err := hc.reportAfter(ctx, m, count); err != nil {
		return aliveMem{}, err
	}
	return mem, nil
}

// memTargetFields are the /proc/meminfo fields whose deltas make up the
// per-sandbox memory figure the target is stated in.
var memTargetFields = []string{"AnonPages", "Slab", "KernelStack", "PageTables"}

// aliveMem is host memory per idle sandbox, in KiB.
type aliveMem struct {
	availKiB float64 // MemAvailable drop
	rawKiB   float64 // sum of the memTargetFields deltas
	sumKiB   float64 // the same without the other processes' changes
}

// Targets of the local runtime (docs/benchmarks.md and docs/security.md).
const (
	targetCreateFirst = 20 * time.Millisecond
	targetWarmExec    = 2 * time.Millisecond
	targetMemKiB      = 1536
)

// checkTargets prints each headline figure against its target.
func checkTargets(createFirst, warm time.Duration, mem aliveMem, alive int) {
	verdict := func(ok bool) string {
		if ok {
			return "meets target"
		}
		return "MISSES target"
	}
	fmt.Println("\ntargets")
	fmt.Printf("  create -> first output p50 %8s  <= %v: %s\n", fmtDur(createFirst), targetCreateFirst, verdict(createFirst <= targetCreateFirst))
	fmt.Printf("  warm exec (echo to exit) p50 %6s  <= %v: %s\n", fmtDur(warm), targetWarmExec, verdict(warm <= targetWarmExec))
	fmt.Printf("  memory per idle sandbox at %d alive %.0f KiB  <= %d KiB: %s  (raw deltas %.0f KiB, MemAvailable drop %.0f KiB)\n",
		alive, mem.sumKiB, targetMemKiB, verdict(mem.sumKiB <= targetMemKiB), mem.rawKiB, mem.availKiB)
}

func report(name string, ds []time.Duration) {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	fmt.Printf("%-44s p50 %8s  p95 %8s  (n=%d)\n", name, fmtDur(pct(s, 50)), fmtDur(pct(s, 95)), len(s))
}

func pct(s []time.Duration, p int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return s[i-1]
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return pct(s, 50)
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// meminfo returns /proc/meminfo in KiB by field.
func meminfo() map[string]int64 {
	out := map[string]int64{}
	b, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			out[strings.TrimSuffix(f[0], ":")] = v
		}
	}
	return out
}

func dropCaches() { _ = os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0) }

// initPids finds the sandbox inits: children of this process or of its
// fork-server, named as the dedicated init names itself, or "exe"
// (re-executed /proc/self/exe).
func initPids() []int {
	type proc struct {
		ppid string
		comm string
	}
	procs := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(s[i+1:]); len(f) > 2 {
			procs[pid] = proc{ppid: f[1], comm: s[strings.IndexByte(s, '(')+1 : i]}
		}
	}
	parents := map[string]bool{strconv.Itoa(os.Getpid()): true}
	for pid, p := range procs {
		if p.comm == sbinit.ForkServerName && parents[p.ppid] {
			parents[strconv.Itoa(pid)] = true
		}
	}
	var out []int
	for pid, p := range procs {
		if parents[p.ppid] && (p.comm == sbinit.ProcName || p.comm == "exe") {
			out = append(out, pid)
		}
	}
	return out
}

func smapsRollup(pid int) (pss, rss int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Pss:":
			pss = v * 1024
		case "Rss:":
			rss = v * 1024
		}
	}
	return pss, rss
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return "Linux " + strings.TrimSpace(string(b))
}

func tail(b []byte) string {
	if len(b) > 300 {
		b = b[len(b)-300:]
	}
	return string(b)
}
