package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/google/pprof/profile"
)

// The bench's own goroutines (its websocket clients, its posters and
// whatever they start, HTTP transport goroutines included) run under the
// profiler label bench=client. The server is started outside that label,
// so its listener, its handlers and the office's goroutines carry none.
const (
	labelKey    = "bench"
	clientLabel = "client"
)

// asClient runs f with the bench=client label; goroutines f starts
// inherit it.
func asClient(ctx context.Context, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels(labelKey, clientLabel), f)
}

// cpuWindow is a CPU profile of one measured window, kept in memory.
type cpuWindow struct{ buf bytes.Buffer }

// startCPUWindow starts the process's CPU profile. Only one can run at a
// time in a process.
func startCPUWindow() (*cpuWindow, error) {
	w := &cpuWindow{}
	if err := pprof.StartCPUProfile(&w.buf); err != nil {
		return nil, fmt.Errorf("start CPU profile: %w", err)
	}
	return w, nil
}

// stop ends the profile and parses it.
func (w *cpuWindow) stop() (*profile.Profile, error) {
	pprof.StopCPUProfile()
	p, err := profile.Parse(&w.buf)
	if err != nil {
		return nil, fmt.Errorf("parse CPU profile: %w", err)
	}
	return p, nil
}

// cpuSplit is a profile's CPU time divided between the bench's clients
// (samples labeled bench=client) and the server (every other sample: the
// server's goroutines, and the runtime's own, GC background workers
// included, whoever allocated what they collect).
type cpuSplit struct {
	client, server int64 // CPU nanoseconds sampled
}

// splitCPU divides p's samples by the bench=client label.
func splitCPU(p *profile.Profile) (cpuSplit, error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 {
		return cpuSplit{}, fmt.Errorf("CPU profile has no cpu sample type")
	}
	var s cpuSplit
	for _, smp := range p.Sample {
		if smp.HasLabel(labelKey, clientLabel) {
			s.client += smp.Value[idx]
		} else {
			s.server += smp.Value[idx]
		}
	}
	return s, nil
}

// serverShare is the server's share of the sampled CPU time, 0 to 1; 0
// if nothing was sampled.
func (s cpuSplit) serverShare() float64 {
	if s.client+s.server == 0 {
		return 0
	}
	return float64(s.server) / float64(s.client+s.server)
}

// writeProfile writes the runs' CPU profiles, merged, to path.
func writeProfile(path string, rs []result) error {
	ps := make([]*profile.Profile, len(rs))
	for i, r := range rs {
		ps[i] = r.profile
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return fmt.Errorf("merge CPU profiles: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write CPU profile: %w", err)
	}
	return f.Close()
}
