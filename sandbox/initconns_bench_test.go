package sandbox

import (
	"context"
	"sort"
	"testing"
	"time"
)

// BenchmarkWarmExec runs echo to completion on a started sandbox, with
// the kept control connection (reused) and with a dial and key exchange
// per exec (dial), interleaved so both see the same machine load.
//
//	go test -run '^$' -bench WarmExec -benchtime 2000x ./sandbox/
func BenchmarkWarmExec(b *testing.B) {
	needRoot(b)
	m, err := New(context.Background(), Config{InitPath: testInitPath, StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	defer m.TerminateAll(context.Background())
	in, err := m.Create(context.Background(), Spec{})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := m.lookup(in.ID)
	run := func(off bool) time.Duration {
		s.conns.mu.Lock()
		s.conns.off = off
		s.conns.mu.Unlock()
		t0 := time.Now()
		r, err := m.Run(context.Background(), in.ID, ExecRequest{Cmd: []string{"echo", "hi"}})
		if err != nil || string(r.Stdout) != "hi\n" {
			b.Fatalf("run: %q %v", r.Stdout, err)
		}
		return time.Since(t0)
	}
	run(false)
	var reused, dial []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reused = append(reused, run(false))
		dial = append(dial, run(true))
	}
	b.StopTimer()
	b.ReportMetric(float64(p50(reused).Microseconds())/1000, "reused-p50-ms")
	b.ReportMetric(float64(p50(dial).Microseconds())/1000, "dial-p50-ms")
}

func p50(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
