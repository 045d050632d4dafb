package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen/internal/benchkit"
)

// result is what one step's runs produced.
type result struct {
	step   step
	values map[string][]float64 // key → one value per run
	units  map[string]string
	loads  []float64 // 1-minute load average at the start of each run
	errs   []string
	took   time.Duration
}

// runner runs steps with a shared environment and a log directory that
// keeps every command's full output.
type runner struct {
	env     []string
	logDir  string
	verbose io.Writer // progress; the commands' stderr too when verbose
	echo    bool
}

func (r *runner) run(ctx context.Context, s step) *result {
	res := &result{step: s, values: map[string][]float64{}, units: map[string]string{}}
	start := time.Now()
	for i := 1; i <= s.runs; i++ {
		res.loads = append(res.loads, loadAverage())
		fmt.Fprintf(r.verbose, "bench: %s run %d/%d: %s\n", s.name, i, s.runs, strings.Join(s.argv, " "))
		out, err := r.once(ctx, s, i)
		for _, rd := range parseOutput(bytes.NewReader(out)) {
			res.values[rd.key] = append(res.values[rd.key], rd.value)
			res.units[rd.key] = rd.unit
		}
		if err != nil {
			res.errs = append(res.errs, fmt.Sprintf("run %d: %v", i, err))
			fmt.Fprintf(r.verbose, "bench: %s run %d failed: %v (log: %s)\n", s.name, i, err, r.logPath(s, i))
		}
	}
	res.took = time.Since(start)
	return res
}

// once runs the step's command one time; stdout is kept for parsing and
// both streams go to the step's log file.
func (r *runner) once(ctx context.Context, s step, i int) ([]byte, error) {
	f, err := os.Create(r.logPath(s, i))
	if err != nil {
		return nil, fmt.Errorf("bench: log file: %w", err)
	}
	defer f.Close()
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stdout = io.MultiWriter(&stdout, f)
	cmd.Stderr = f
	if r.echo {
		cmd.Stdout = io.MultiWriter(&stdout, f, r.verbose)
		cmd.Stderr = io.MultiWriter(f, r.verbose)
	}
	err = cmd.Run()
	return stdout.Bytes(), err
}

func (r *runner) logPath(s step, i int) string {
	return filepath.Join(r.logDir, fmt.Sprintf("%s.%d.log", s.name, i))
}

// loadAverage is the machine's 1-minute load average, or -1 if unreadable.
func loadAverage() float64 {
	f := strings.Fields(benchkit.LoadAvg())
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
