package kube_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/internal/kubetest"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube"
)

// firstOutputer is what the benchmark needs of a driver.
type firstOutputer interface {
	Create(context.Context, sandbox.Spec) (sandbox.Info, error)
	Run(context.Context, string, sandbox.ExecRequest) (sandbox.RunResult, error)
	Terminate(context.Context, string) error
}

// BenchmarkKubeFirstOutput times sandbox create → first command output
// on the kubernetes driver, cold (a new Pod) and from a warm pool of 2,
// beside the local driver on this host in the same process, the three
// interleaved so that they share the machine's load. It needs the test
// cluster, and root for the local driver (without root only the
// kubernetes figures are reported). make bench runs it:
//
//	go test -run '^$' -bench KubeFirstOutput -benchtime 1x -count 3 ./sandbox/kube/
func BenchmarkKubeFirstOutput(b *testing.B) {
	env := kubetest.Cluster(b)
	env.RecycleVolumes(b)
	const samples = 7
	office := fmt.Sprintf("bench%d", rand.Uint32())
	// go test prints the binary's stderr on its stdout: a log line in
	// the middle of a result line would hide the figures from make bench.
	quiet := func(c *kube.Config) { c.Logger = slog.New(slog.DiscardHandler) }
	warm := poolDriver(b, env, office+"w", 2, quiet)
	cold := poolDriver(b, env, office+"c", 0, quiet)
	local := localDriver(b)
	for b.Loop() {
		var tl, tc, tw []time.Duration
		for range samples {
			if local != nil {
				tl = append(tl, firstOutput(b, local, sandbox.Spec{}))
			}
			tc = append(tc, firstOutput(b, cold, sandbox.Spec{Image: "host"}))
			runningMembers(b, env, office+"w", 2) // the pool refilled, as between two creates
			tw = append(tw, firstOutput(b, warm, sandbox.Spec{Image: "host"}))
			env.RecycleVolumes(b)
		}
		report(b, "cold", tc)
		report(b, "warm", tw)
		if local != nil {
			report(b, "local", tl)
			b.ReportMetric(p50ms(tc)/p50ms(tl), "cold_over_local")
			b.ReportMetric(p50ms(tw)/p50ms(tl), "warm_over_local")
		}
	}
}

// firstOutput creates a sandbox, times its create and first command's
// output, and terminates it.
func firstOutput(b *testing.B, d firstOutputer, sp sandbox.Spec) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	in, err := d.Create(ctx, sp)
	if err != nil {
		b.Fatal(err)
	}
	r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
	took := time.Since(start)
	if err != nil || string(r.Stdout) != "hi\n" {
		b.Fatalf("first Run = %q, %v", r.Stdout, err)
	}
	if err := d.Terminate(ctx, in.ID); err != nil {
		b.Fatal(err)
	}
	return took
}

func p50ms(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

func report(b *testing.B, name string, ds []time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	b.ReportMetric(p50ms(s), name+"_p50_ms")
	b.ReportMetric(float64(s[len(s)-1].Microseconds())/1000, name+"_max_ms")
}

// localDriver opens the local runtime with its dedicated init, built
// here; nil when this process is not root.
func localDriver(b *testing.B) *sandbox.Manager {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Log("not root: no local driver figure")
		return nil
	}
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	initPath := filepath.Join(dir, sandbox.InitBinaryName)
	if out, err := exec.Command("go", "build", "-o", initPath, "github.com/bullpen-hq/bullpen/cmd/bullpen-sandbox-init").CombinedOutput(); err != nil {
		b.Fatalf("build the local init: %v: %s", err, out)
	}
	m, err := sandbox.New(context.Background(), sandbox.Config{InitPath: initPath, StateDir: filepath.Join(dir, "state")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		m.TerminateAll(context.Background())
		m.Close()
	})
	return m
}
