package kube_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// TestClusterSnapshotRefused: the test cluster serves no VolumeSnapshot
// API (no CSI snapshot controller), so a snapshot and a create from one
// are refused with a clear 501, and the sandbox is untouched.
func TestClusterSnapshotRefused(t *testing.T) {
	d, _ := clusterDriver(t)
	ctx := context.Background()
	in, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Snapshot(ctx, in.ID, "s1")
	if !bullpen.IsCode(err, bullpen.EUNSUPPORTED) || !strings.Contains(err.Error(), "serves no VolumeSnapshot API") {
		t.Fatalf("snapshot on a cluster without VolumeSnapshots: %v", err)
	}
	if _, err := d.Create(ctx, sandbox.Spec{Image: "snapshot/s1"}); !bullpen.IsCode(err, bullpen.EUNSUPPORTED) {
		t.Fatalf("create from a snapshot: %v", err)
	}
	if r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"echo", "still"}}); err != nil || string(r.Stdout) != "still\n" {
		t.Fatalf("the sandbox after a refused snapshot: %q, %v", r.Stdout, err)
	}
	list, err := d.List(ctx, nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("sandboxes after the refused create: %d, %v", len(list), err)
	}
}
