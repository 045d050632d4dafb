// Command bench (make bench) runs every benchmark of the project and prints one
// table: each figure with its target, whether the worst run met it, and the
// machine's load average while it ran. It is `make bench`.
//
//	go run ./bench              # everything, 3 runs, 10 min idle window
//	go run ./bench -quick       # short runs, to check the wiring
//	go run ./bench -only 'rest|office'
//
// Every command's full output is kept under -logs. Run as root: the sandbox
// figures use real sandboxes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/bullpen-hq/bullpen/internal/benchkit"
)

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 3, "runs of each figure (targets are judged on the worst)")
	flag.DurationVar(&o.idle, "idle", 10*time.Minute, "idle window of the idle-agents figure")
	flag.BoolVar(&o.quick, "quick", false, "short runs (fewer iterations, 3 s load runs, 30 s idle), to check the wiring")
	only := flag.String("only", "", "run only the steps whose name matches this regexp (build always runs)")
	logs := flag.String("logs", "", "directory for every command's output (default .cache/bench/<time>)")
	verbose := flag.Bool("v", false, "echo every command's output while it runs")
	flag.Parse()
	if o.quick && !isSet("idle") {
		o.idle = 30 * time.Second
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, o, *only, *logs, *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(ctx context.Context, o options, only, logs string, verbose bool) (int, error) {
	match, err := regexp.Compile(only)
	if err != nil {
		return 0, fmt.Errorf("-only: %w", err)
	}
	started := time.Now().UTC()
	if logs == "" {
		logs = filepath.Join(".cache", "bench", started.Format("20060102-150405"))
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return 0, fmt.Errorf("logs: %w", err)
	}
	o.tools = filepath.Join(logs, "tools")
	var selected []step
	for _, s := range steps(o) {
		if s.name == "build" || match.MatchString(s.name) {
			selected = append(selected, s)
		}
	}
	if err := buildTools(ctx, o.tools, selected); err != nil {
		return 0, err
	}
	fx, err := startFixtures(ctx, selected, os.Stderr)
	if err != nil {
		return 0, err
	}
	defer fx.stop()
	r := &runner{env: fx.env, logDir: logs, verbose: os.Stderr, echo: verbose}
	loadStart := benchkit.LoadAvg()
	var results []*result
	for _, s := range selected {
		if ctx.Err() != nil {
			break
		}
		res := r.run(ctx, s)
		if s.name == "build" {
			addBinarySize(res, "bin/bullpen")
		}
		results = append(results, res)
	}
	addFanoutRatios(results)
	w := os.Stdout
	fmt.Fprintf(w, "\n# Bullpen benchmarks, %s\n\n", started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "machine: %d cores, %s; load average at start %s, at end %s\n", runtime.NumCPU(), memTotal(), loadStart, benchkit.LoadAvg())
	fmt.Fprintf(w, "runs: %d of each figure, shown min–max; targets judged on the worst run; logs in %s\n\n", o.runs, logs)
	missed := printTable(w, results)
	code := 0
	fmt.Fprintln(w)
	for _, res := range results {
		fmt.Fprintf(w, "- %s (%s): `%s`\n", res.step.name, res.took.Round(time.Second), strings.Join(res.step.argv, " "))
		for _, e := range res.errs {
			fmt.Fprintf(w, "  - FAILED %s\n", e)
			code = 1
		}
	}
	if missed > 0 {
		fmt.Fprintf(w, "\n%d target(s) missed\n", missed)
		code = 1
	}
	return code, nil
}

// addBinarySize adds binary_mb (10^6 bytes, as the target is stated).
func addBinarySize(res *result, path string) {
	st, err := os.Stat(path)
	if err != nil {
		res.errs = append(res.errs, "binary size: "+err.Error())
		return
	}
	res.values["binary_mb"] = []float64{float64(st.Size()) / 1e6}
	res.units["binary_mb"] = "MB"
}

func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
