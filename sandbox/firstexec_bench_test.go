package sandbox

import (
	"context"
	"testing"
	"time"
)

// BenchmarkFirstExec times the first command in a new sandbox, with its
// init's control connection dialled beforehand by Preconnect (as the
// sandboxes service does while the create's answer goes out) and without,
// alternating, and the second command for reference.
//
//	go test -run '^$' -bench FirstExec -benchtime 40x ./sandbox/
func BenchmarkFirstExec(b *testing.B) {
	needRoot(b)
	ctx := context.Background()
	m, err := New(ctx, Config{InitPath: testInitPath, StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	defer m.TerminateAll(ctx)
	echo := func(id string) time.Duration {
		t0 := time.Now()
		r, err := m.Run(ctx, id, ExecRequest{Cmd: []string{"echo", "hi"}})
		if err != nil || string(r.Stdout) != "hi\n" {
			b.Fatalf("run: %q %v", r.Stdout, err)
		}
		return time.Since(t0)
	}
	var cold, pre, second []time.Duration
	for i := 0; i < b.N; i++ {
		in, err := m.Create(ctx, Spec{})
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			if err := m.Preconnect(ctx, in.ID); err != nil {
				b.Fatal(err)
			}
			pre = append(pre, echo(in.ID))
		} else {
			cold = append(cold, echo(in.ID))
		}
		second = append(second, echo(in.ID))
		if err := m.Terminate(ctx, in.ID); err != nil {
			b.Fatal(err)
		}
	}
	if b.N > 1 {
		b.ReportMetric(float64(p50(cold).Microseconds())/1000, "first-p50-ms")
		b.ReportMetric(float64(p50(pre).Microseconds())/1000, "first-preconnected-p50-ms")
		b.ReportMetric(float64(p50(second).Microseconds())/1000, "second-p50-ms")
	}
}
