package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// The bench fails on any model call by an idle agent.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls int64
		fail  bool
	}{{"none", 0, false}, {"one", 1, true}, {"many", 50, true}} {
		if err := (idleResult{calls: tc.calls}).verdict(); (err != nil) != tc.fail {
			t.Errorf("%s: verdict(%d calls) = %v, want failure %v", tc.name, tc.calls, err, tc.fail)
		}
	}
}

// sample reads a real process's CPU time and memory from /proc: a child
// that burns CPU and holds memory shows both.
func TestSampleReadsProc(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=TestHelperBurn")
	cmd.Env = append(os.Environ(), "IDLEBENCH_HELPER=burn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	first, err := sample(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for CPU time to show rather than time it: the machine may be
	// busy, but a spinning process gets some CPU within seconds.
	var second procSample
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if second, err = sample(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		if second.cpu-first.cpu >= 50*time.Millisecond && second.anonBytes >= 64<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in 20 s a spinning process that holds 64 MiB showed %s of CPU and %d anonymous bytes", second.cpu-first.cpu, second.anonBytes)
		}
	}
	if second.rssBytes < second.anonBytes {
		t.Errorf("RSS %d, anonymous %d bytes; the helper holds 64 MiB", second.rssBytes, second.anonBytes)
	}
}

// TestHelperBurn is the child of TestSampleReadsProc: it touches 64 MiB
// and spins until killed.
func TestHelperBurn(t *testing.T) {
	if os.Getenv("IDLEBENCH_HELPER") != "burn" {
		t.Skip("helper process")
	}
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = byte(i)
	}
	for n := 0; ; n++ {
		b[n%len(b)]++
	}
}
