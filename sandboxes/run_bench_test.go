package sandboxes_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// BenchmarkServiceRun runs echo to completion on a started sandbox
// through the Service (exec events, live output, history) and, alternating,
// through its Manager directly: the difference is the Service's share of
// a REST warm run.
//
//	go test -run '^$' -bench ServiceRun -benchtime 1000x ./sandboxes/
func BenchmarkServiceRun(b *testing.B) {
	f := newFixture(b, sandboxes.Config{})
	ctx := context.Background()
	in, err := f.svc.Create(ctx, f.admin, sandbox.Spec{})
	if err != nil {
		b.Fatal(err)
	}
	req := sandbox.ExecRequest{Cmd: []string{"echo", "hi"}}
	var svc, lib []time.Duration
	for i := 0; i < b.N+1; i++ {
		t0 := time.Now()
		r, err := f.svc.Run(ctx, f.admin, in.ID, req, 0)
		if err != nil || string(r.Stdout) != "hi\n" {
			b.Fatalf("service run: %q %v", r.Stdout, err)
		}
		svc = append(svc, time.Since(t0))
		t0 = time.Now()
		if r, err := f.svc.Manager().Run(ctx, in.ID, req); err != nil || string(r.Stdout) != "hi\n" {
			b.Fatalf("manager run: %q %v", r.Stdout, err)
		}
		lib = append(lib, time.Since(t0))
	}
	if b.N > 1 {
		b.ReportMetric(ms50(svc[1:]), "service-p50-ms")
		b.ReportMetric(ms50(lib[1:]), "manager-p50-ms")
	}
}

func ms50(d []time.Duration) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)/2].Microseconds()) / 1000
}
