// Command rest (bench/rest) measures sandbox start the way users and the
// public sandbox leaderboards do: at the client, through the REST API of a
// real server (bin/bullpen on loopback), from the create request to the
// first byte of a command's output. It runs three patterns, each n times:
// sequential, staggered (one started every -stagger, overlapping) and a
// burst (all at once), and prints median, p95, p99, the success rate and
// the create's p50. In the same run it measures a warm run (a command on
// an already-started sandbox), the library reference (the same create and
// command through package sandbox in this process, with the server's init
// binary and spec defaults, interleaved with the sequential REST trials;
// each of those trials starts once the library's init pool has refilled
// and -settle later, so that neither measures the other Manager's
// refill), the same REST creates back to back with nothing between, and
// `bwrap --unshare-all` and `crun run` (when installed) running the same
// command, for ratios.
//
//	make build && go run ./bench/rest -n 100
//
// Besides the table it prints one `figure <key> <value> <unit>` line per
// figure (make bench reads them). Figures are loopback figures: no network
// between client and server.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bullpen-hq/bullpen/client"
	"github.com/bullpen-hq/bullpen/internal/benchkit"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// options are the command's flags.
type options struct {
	bin     string
	n       int
	warm    int
	stagger time.Duration
	settle  time.Duration
	via     string
	noLib   bool
	noCrun  bool
	only    string
}

func main() {
	sandbox.MaybeRunInit() // only if the library reference falls back to re-executing this binary
	var o options
	flag.StringVar(&o.bin, "bin", "bin/bullpen", "the server binary (make build); its init binary must be next to it")
	flag.IntVar(&o.n, "n", 100, "sandboxes per pattern")
	flag.IntVar(&o.warm, "warm", 200, "runs of the warm-run figure")
	flag.DurationVar(&o.stagger, "stagger", 200*time.Millisecond, "start interval of the staggered pattern")
	flag.DurationVar(&o.settle, "settle", 10*time.Millisecond, "in the sequential pattern, the pause before each REST and library trial, after the library's init pool has refilled, so that neither trial measures the other Manager's refill")
	flag.StringVar(&o.via, "via", "run", "the command's endpoint: run (POST …/run, the answer holds the output) or exec (POST …/exec, streamed; first byte)")
	flag.BoolVar(&o.noLib, "no-library", false, "skip the in-process library reference")
	flag.BoolVar(&o.noCrun, "no-crun", false, "skip the crun reference")
	flag.StringVar(&o.only, "only", "", "run only this pattern (sequential, staggered, burst, or warm: the warm run; for profiling) and no references")
	flag.Parse()
	if o.via != "run" && o.via != "exec" {
		fmt.Fprintln(os.Stderr, "restbench: -via is run or exec")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "restbench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	srv, err := benchkit.Start(o.bin, nil, nil, printErrors)
	if err != nil {
		return err
	}
	defer srv.Stop()
	// Keep-alive for every concurrent trial of a burst, not the default 2.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}}
	c, err := client.New(srv.URL, srv.Token, client.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	var lib *library
	if !o.noLib {
		initPath := filepath.Join(filepath.Dir(o.bin), sandbox.InitBinaryName)
		if lib, err = openLibrary(initPath); err != nil {
			fmt.Println("library reference skipped:", err)
		} else {
			defer lib.close()
		}
	}
	fmt.Printf("server %s; %d sandboxes per pattern; command via POST …/%s; measured at the client on loopback; load average %s\n",
		srv.URL, o.n, o.via, benchkit.LoadAvg())
	fmt.Printf("%-34s %8s %8s %8s %8s %9s\n", "pattern", "median", "p95", "p99", "success", "create p50")
	t := trialer{c: c, via: o.via}
	if o.only != "" {
		return runOnly(t, o)
	}
	var libTimes []time.Duration
	seq := measure(t, o.n, func(i int, start func()) {
		lib.settle(o.settle)
		start()
		if lib != nil { // interleaved, so both see the same load
			lib.settle(o.settle)
			if d, err := lib.trial(); err != nil {
				fmt.Fprintln(os.Stderr, "library trial:", err)
			} else {
				libTimes = append(libTimes, d)
			}
		}
	})
	if lib != nil {
		lib.terminateAll()
	}
	report("sequential", seq)
	var back result
	if lib != nil { // the same without the interleaved reference: one create right after the other
		back = measure(t, o.n, func(i int, start func()) { start() })
		report("back to back, no reference between", back)
	}
	stag := measure(t, o.n, func(i int, start func()) { time.Sleep(o.stagger); go start() })
	report(fmt.Sprintf("staggered (one every %s)", o.stagger), stag)
	burst := measure(t, o.n, func(i int, start func()) { go start() })
	report("burst (all at once)", burst)
	warm, libWarm, err := warmRuns(c, o.warm, lib)
	if err != nil {
		fmt.Println("warm run failed:", err)
	}
	refs := references(o, lib, libTimes, warm)
	if len(libWarm) > 0 {
		fmt.Printf("%-34s %8s %8s   (the same echo through package sandbox, in process, interleaved; REST adds %s at the p50)\n", "library warm run",
			ms(benchkit.Percentile(libWarm, 50)), ms(benchkit.Percentile(libWarm, 95)), ms(benchkit.Percentile(warm, 50)-benchkit.Percentile(libWarm, 50)))
	}
	figures(seq, stag, burst, back, warm, refs)
	return nil
}

// runOnly runs one pattern, for profiling the server while it runs.
func runOnly(t trialer, o options) error {
	if o.only == "warm" {
		warm, _, err := warmRuns(t.c, o.warm, nil)
		if err != nil {
			return err
		}
		fmt.Printf("warm run p50 %s p95 %s (n=%d)\n", ms(benchkit.Percentile(warm, 50)), ms(benchkit.Percentile(warm, 95)), len(warm))
		figMS("rest_warm_run_p50", benchkit.Percentile(warm, 50))
		return nil
	}
	launch := map[string]func(int, func()){
		"sequential": func(_ int, start func()) { start() },
		"staggered":  func(_ int, start func()) { time.Sleep(o.stagger); go start() },
		"burst":      func(_ int, start func()) { go start() },
	}[o.only]
	if launch == nil {
		return fmt.Errorf("-only %q: want sequential, staggered, burst or warm", o.only)
	}
	r := measure(t, o.n, launch)
	report(o.only, r)
	figMS("rest_"+o.only+"_p50", benchkit.Percentile(r.first, 50))
	return nil
}

// refTimes are the reference figures' samples (nil: not measured).
type refTimes struct{ library, bwrap, crun []time.Duration }

// references prints the warm run and the references and returns them.
func references(o options, lib *library, libTimes, warm []time.Duration) refTimes {
	r := refTimes{library: libTimes}
	fmt.Println()
	if len(warm) > 0 {
		fmt.Printf("%-34s %8s %8s   (n=%d, POST …/run echo on a started sandbox)\n", "warm run", ms(benchkit.Percentile(warm, 50)), ms(benchkit.Percentile(warm, 95)), len(warm))
	}
	if lib != nil && len(libTimes) > 0 {
		fmt.Printf("%-34s %8s %8s   (create -> first output through package sandbox, in process)\n", "library reference", ms(benchkit.Percentile(libTimes, 50)), ms(benchkit.Percentile(libTimes, 95)))
	}
	r.bwrap = bwrapTimes(o.n)
	if len(r.bwrap) > 0 {
		fmt.Printf("%-34s %8s %8s\n", "bwrap --unshare-all echo hi", ms(benchkit.Percentile(r.bwrap, 50)), ms(benchkit.Percentile(r.bwrap, 95)))
	}
	if !o.noCrun {
		var err error
		if r.crun, err = crunTimes(o.n); err != nil {
			fmt.Println("crun reference skipped:", err)
		} else {
			fmt.Printf("%-34s %8s %8s   (OCI bundle, host /usr read-only, user+pid+net+ipc+uts+mount namespaces)\n", "crun run echo hi", ms(benchkit.Percentile(r.crun, 50)), ms(benchkit.Percentile(r.crun, 95)))
		}
	}
	return r
}

// trialer runs one create -> first output trial through the API.
type trialer struct {
	c   *client.Client
	via string
}

// result is one pattern's latencies.
type result struct {
	first, create []time.Duration
	failed        int
	n             int
}

// measure runs n create→first-output trials, launched by launch (which
// calls start inline for sequential, in a goroutine otherwise), then
// terminates the sandboxes.
func measure(t trialer, n int, launch func(i int, start func())) result {
	var mu sync.Mutex
	var wg sync.WaitGroup
	res := result{n: n}
	var ids []string
	for i := range n {
		wg.Add(1)
		launch(i, func() {
			defer wg.Done()
			id, create, first, err := t.trial()
			mu.Lock()
			defer mu.Unlock()
			if id != "" {
				ids = append(ids, id)
			}
			if err != nil {
				res.failed++
				fmt.Fprintln(os.Stderr, "trial:", err)
				return
			}
			res.create = append(res.create, create)
			res.first = append(res.first, first)
		})
	}
	wg.Wait()
	for _, id := range ids {
		_ = t.c.TerminateSandbox(context.Background(), id)
	}
	return res
}

// trial creates a sandbox and runs echo in it, returning the time to the
// create's answer and to the first byte of output, both from the create
// request.
func (t trialer) trial() (id string, create, first time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	sb, err := t.c.CreateSandbox(ctx, client.SandboxSpec{Timeout: "10m"})
	if err != nil {
		return "", 0, 0, err
	}
	create = time.Since(t0)
	at, err := echo(ctx, t.c, sb.ID, t.via)
	if err != nil {
		return sb.ID, 0, 0, err
	}
	return sb.ID, create, at.Sub(t0), nil
}

// echo runs `echo hi` and returns when its output arrived: the first byte
// of the stream (exec) or the answer holding it (run).
func echo(ctx context.Context, c *client.Client, id, via string) (time.Time, error) {
	req := client.ExecRequest{Cmd: []string{"echo", "hi"}}
	if via == "exec" {
		w := &firstWrite{}
		res, err := c.Exec(ctx, id, req, w, nil)
		if err == nil && (res.ExitCode != 0 || w.at.IsZero()) {
			err = fmt.Errorf("echo: exit %d, output %v", res.ExitCode, !w.at.IsZero())
		}
		return w.at, err
	}
	res, err := c.Run(ctx, id, req, 0)
	at := time.Now()
	if err == nil && (res.ExitCode != 0 || res.Stdout != "hi\n") {
		err = fmt.Errorf("echo: exit %d, output %q", res.ExitCode, res.Stdout)
	}
	return at, err
}

// warmRuns times n runs of echo (request to answer) on one sandbox that
// has run a command already. With lib, each is followed by the same run
// through the library (libWarm), so both see the same load.
func warmRuns(c *client.Client, n int, lib *library) (warm, libWarm []time.Duration, err error) {
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, client.SandboxSpec{Timeout: "10m"})
	if err != nil {
		return nil, nil, err
	}
	defer c.TerminateSandbox(ctx, sb.ID)
	if _, err := echo(ctx, c, sb.ID, "run"); err != nil {
		return nil, nil, err
	}
	var libRun func() (time.Duration, error)
	if lib != nil {
		if libRun, err = lib.warm(); err != nil {
			fmt.Fprintln(os.Stderr, "library warm run skipped:", err)
		}
	}
	warm = make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		at, err := echo(ctx, c, sb.ID, "run")
		if err != nil {
			return warm, libWarm, err
		}
		warm = append(warm, at.Sub(t0))
		if libRun != nil {
			d, err := libRun()
			if err != nil {
				return warm, libWarm, err
			}
			libWarm = append(libWarm, d)
		}
	}
	return warm, libWarm, nil
}

// firstWrite notes when the first byte arrived.
type firstWrite struct{ at time.Time }

func (w *firstWrite) Write(b []byte) (int, error) {
	if w.at.IsZero() && len(b) > 0 {
		w.at = time.Now()
	}
	return len(b), nil
}

func report(name string, r result) {
	fmt.Printf("%-34s %8s %8s %8s %7.0f%% %9s\n", name, ms(benchkit.Percentile(r.first, 50)), ms(benchkit.Percentile(r.first, 95)),
		ms(benchkit.Percentile(r.first, 99)), r.success(), ms(benchkit.Percentile(r.create, 50)))
}

func (r result) success() float64 { return float64(r.n-r.failed) / float64(r.n) * 100 }

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

// printErrors passes the server's error lines on: they explain failed
// trials.
func printErrors(l string) {
	if strings.Contains(l, `"level":"ERROR"`) {
		fmt.Fprintln(os.Stderr, "server:", l)
	}
}
