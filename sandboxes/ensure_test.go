package sandboxes_test

import (
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// Ensure gives each agent one workspace, named and tagged alike whatever
// the spec says, and wakes it when it was stopped or paused.
func TestEnsureOneWorkspacePerAgent(t *testing.T) {
	f := newFixture(t, sandboxes.Config{})
	ctx := context.Background()
	ws, err := f.svc.Ensure(ctx, f.robo, sandbox.Spec{Name: "other", Tags: map[string]string{"team": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if bullpen.SandboxName(ws.Name, ws.Tags) != sandboxes.WorkspaceName(f.robo) || ws.Tags[bullpen.SandboxAgentTag] != "workspace" ||
		len(bullpen.SandboxUserTags(ws.Tags)) != 0 || bullpen.SandboxOwner(ws.Tags) != f.robo.ID {
		t.Errorf("workspace = name %q, tags %v, owner %d; want %q, only reserved tags, owner %d",
			bullpen.SandboxName(ws.Name, ws.Tags), ws.Tags, bullpen.SandboxOwner(ws.Tags), sandboxes.WorkspaceName(f.robo), f.robo.ID)
	}
	for _, step := range []struct {
		name string
		do   func(context.Context, bullpen.Member, string) error
	}{
		{"again", func(context.Context, bullpen.Member, string) error { return nil }},
		{"after stop", f.svc.Stop},
		{"after pause", f.svc.Pause},
	} {
		if err := step.do(ctx, f.robo, ws.ID); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got, err := f.svc.Ensure(ctx, f.robo, sandbox.Spec{})
		if err != nil || got.ID != ws.ID || got.State != sandbox.StateRunning {
			t.Errorf("Ensure %s = %s (%s), %v; want %s running", step.name, got.ID, got.State, err, ws.ID)
		}
	}
	if list, _ := f.svc.List(ctx, f.robo, nil); len(list) != 1 {
		t.Errorf("robo has %d sandboxes after four Ensures, want 1", len(list))
	}
	other, err := f.svc.Ensure(ctx, f.alice, sandbox.Spec{})
	if err != nil || other.ID == ws.ID || bullpen.SandboxOwner(other.Tags) != f.alice.ID {
		t.Errorf("Ensure(alice) = %s owned by %d, %v; want her own workspace", other.ID, bullpen.SandboxOwner(other.Tags), err)
	}
	_, err = f.svc.Ensure(ctx, bullpen.Member{}, sandbox.Spec{})
	wantCode(t, "Ensure without a member", err, bullpen.EINVALID)
}

// A workspace made before bullpen.SandboxAgentTag existed (owned by the agent and named
// WorkspaceName) is found again rather than doubled.
func TestEnsureFindsUntaggedWorkspace(t *testing.T) {
	f := newFixture(t, sandboxes.Config{})
	ctx := context.Background()
	old := f.create(t, f.bob, sandbox.Spec{Name: sandboxes.WorkspaceName(f.bob)})
	got, err := f.svc.Ensure(ctx, f.bob, sandbox.Spec{})
	if err != nil || got.ID != old.ID {
		t.Errorf("Ensure(bob) = %s, %v; want his existing %s", got.ID, err, old.ID)
	}
	someone := f.create(t, f.alice, sandbox.Spec{Name: sandboxes.WorkspaceName(f.robo)})
	mine, err := f.svc.Ensure(ctx, f.robo, sandbox.Spec{})
	if err != nil || mine.ID == someone.ID {
		t.Errorf("Ensure(robo) = %s, %v; took alice's sandbox of robo's workspace name", mine.ID, err)
	}
}
