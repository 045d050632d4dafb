package sandbox_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// TestNewProcess: a driver's command behaves as the Manager's: Collect
// reads both streams and the exit, and Kill reaches the driver once.
func TestNewProcess(t *testing.T) {
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	exited := make(chan sandbox.ExitResult, 1)
	kills := 0
	p := sandbox.NewProcess(sandbox.ProcessHooks{Stdout: outR, Stderr: errR, Pid: 7,
		Wait: func() (sandbox.ExitResult, error) { return <-exited, nil },
		Kill: func() error { kills++; exited <- sandbox.ExitResult{Code: -1, Signal: "killed"}; return nil }})
	go func() {
		io.WriteString(outW, strings.Repeat("o", 100))
		outW.Close()
		io.WriteString(errW, "e")
		errW.Close()
	}()
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.Kill() // a second kill does not reach the driver
	r, err := sandbox.Collect(context.Background(), p, 10, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Stdout) != "oooooooooo" || !r.Truncated || string(r.Stderr) != "e" || r.Signal != "killed" || kills != 1 || p.Pid() != 7 {
		t.Errorf("Collect = %+v (%q, %q), kills %d; want 10 bytes of output, truncated, killed once", r, r.Stdout, r.Stderr, kills)
	}
}

// TestNewProcessLost: a command whose sandbox went away reports it.
func TestNewProcessLost(t *testing.T) {
	lost := errors.New("pod deleted")
	p := sandbox.NewProcess(sandbox.ProcessHooks{Stdout: io.NopCloser(strings.NewReader("")), Stderr: io.NopCloser(strings.NewReader("")),
		Wait: func() (sandbox.ExitResult, error) { return sandbox.ExitResult{}, lost }, Kill: func() error { return nil }})
	if _, err := p.Wait(); !errors.Is(err, lost) {
		t.Errorf("Wait = %v, want %v", err, lost)
	}
}
