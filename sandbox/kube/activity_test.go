package kube

import (
	"context"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/sandbox"
)

// TestIdleSeesOtherReplicasActivity: a sandbox kept busy through one
// replica is not stopped for idleness by another replica, which sees no
// command of its own; once nobody uses it, it is stopped.
func TestIdleSeesOtherReplicasActivity(t *testing.T) {
	f := newFake(t)
	b, err := New(context.Background(), Config{Client: f.c, Namespace: testNS, Office: "o1", InitImage: "bullpen/init:1",
		HostImage: "debian:13", Sandbox: sandbox.Config{CheckInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	b.exec = localExecer{}
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	in, err := f.d.Create(ctx, sandbox.Spec{Image: "img", IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	busyUntil := time.Now().Add(5 * time.Second)
	for time.Now().Before(busyUntil) {
		if _, err := f.d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"true"}}); err != nil {
			t.Fatalf("a command %s after the create on the busy replica: %v", time.Until(busyUntil), err)
		}
		for _, d := range []*Driver{f.d, b} {
			if g, err := d.Get(ctx, in.ID); err != nil || g.State != sandbox.StateRunning {
				t.Fatalf("while busy: state %q, %v", g.State, err)
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if g, _ := b.Get(ctx, in.ID); g.State == sandbox.StateStopped {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("an idle sandbox was never stopped")
}

// TestCloseTwice: closing a driver twice is harmless (a deferred Close
// after an explicit one).
func TestCloseTwice(t *testing.T) {
	f := newFake(t)
	if err := f.d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Close(); err != nil {
		t.Fatal(err)
	}
}
