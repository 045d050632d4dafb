package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// library is the in-process reference: a Manager of package sandbox with
// the server's init binary and the defaults a REST create gets (no flags
// given to the server: the same Config defaults), in its own state dir
// and cgroup parent so it cannot touch the server's sandboxes.
type library struct {
	m   *sandbox.Manager
	dir string
}

func openLibrary(initPath string) (*library, error) {
	dir, err := os.MkdirTemp("", "bullpen-restbench-lib-")
	if err != nil {
		return nil, err
	}
	m, err := sandbox.New(context.Background(), sandbox.Config{StateDir: dir, InitPath: initPath,
		CgroupParent: "bullpen-restbench", RunDir: "/run/bullpen-restbench", OnRestart: sandbox.RestartReap})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("library Manager: %w", err)
	}
	l := &library{m: m, dir: dir}
	for range 3 { // warm-up, as the server had its own
		if _, err := l.trial(); err != nil {
			l.close()
			return nil, err
		}
	}
	l.terminateAll()
	return l, nil
}

// trial is create -> first byte of `echo hi`, as a REST trial's spec
// (a 10 minute timeout, defaults otherwise). Like the REST trials'
// sandboxes, the sandbox stays until terminateAll: a teardown between
// trials (the kernel frees a network namespace later, in the
// background) would slow whichever trial came next.
func (l *library) trial() (time.Duration, error) {
	ctx := context.Background()
	t0 := time.Now()
	in, err := l.m.Create(ctx, sandbox.Spec{Timeout: 10 * time.Minute})
	if err != nil {
		return 0, err
	}
	p, err := l.m.Exec(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
	if err != nil {
		return 0, err
	}
	defer p.Close()
	b := make([]byte, 1)
	if _, err := io.ReadFull(p.Stdout(), b); err != nil {
		return 0, fmt.Errorf("library echo: %w", err)
	}
	d := time.Since(t0)
	if _, err := p.Wait(); err != nil {
		return 0, err
	}
	return d, nil
}

// settle waits (at most a second) until the library's init pool is full
// again, then d more, for the server's own refill: an interleaved trial
// must not measure the other Manager's background work. A nil library
// does not wait.
func (l *library) settle(d time.Duration) {
	if l == nil {
		return
	}
	for deadline := time.Now().Add(time.Second); l.m.PoolReady() < sandbox.DefaultInitPool && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(d)
}

// terminateAll ends the trials' sandboxes.
func (l *library) terminateAll() { _ = l.m.TerminateAll(context.Background()) }

func (l *library) close() {
	ctx := context.Background()
	_ = l.m.TerminateAll(ctx)
	_ = l.m.Close()
	os.RemoveAll(l.dir)
}

// warm returns a function that times one Run of echo, to completion, on a
// started sandbox of the library Manager: the warm run without REST.
func (l *library) warm() (func() (time.Duration, error), error) {
	ctx := context.Background()
	in, err := l.m.Create(ctx, sandbox.Spec{Timeout: 10 * time.Minute})
	if err != nil {
		return nil, err
	}
	run := func() (time.Duration, error) {
		t0 := time.Now()
		r, err := l.m.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "hi"}})
		if err == nil && string(r.Stdout) != "hi\n" {
			err = fmt.Errorf("library echo: %q", r.Stdout)
		}
		return time.Since(t0), err
	}
	if _, err := run(); err != nil {
		return nil, err
	}
	return run, nil
}
