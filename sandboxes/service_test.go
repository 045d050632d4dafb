package sandboxes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// A member sees and acts on their own sandboxes only; someone else's is
// not found, with the same answer as one that does not exist. A human
// admin sees all; an agent, even one flagged admin, only its own.
func TestOwnershipAndLookup(t *testing.T) {
	f := newFixture(t, sandboxes.Config{})
	ctx := context.Background()
	a := f.create(t, f.alice, sandbox.Spec{Name: "web", Tags: map[string]string{"team": "red"}})
	b := f.create(t, f.bob, sandbox.Spec{Name: "web"}) // names are per owner
	if bullpen.SandboxOwner(a.Tags) != f.alice.ID || bullpen.SandboxName(a.Name, a.Tags) != "web" || a.Name != "" {
		t.Errorf("alice's sandbox: owner %d, name %q, runtime name %q; want %d, web, none",
			bullpen.SandboxOwner(a.Tags), bullpen.SandboxName(a.Name, a.Tags), a.Name, f.alice.ID)
	}
	if got, err := f.svc.Get(ctx, f.alice, "web"); err != nil || got.ID != a.ID {
		t.Errorf("Get(alice, web) = %s, %v; want her own %s", got.ID, err, a.ID)
	}
	if got, err := f.svc.Get(ctx, f.bob, "web"); err != nil || got.ID != b.ID {
		t.Errorf("Get(bob, web) = %s, %v; want his own %s", got.ID, err, b.ID)
	}
	_, errOther := f.svc.Get(ctx, f.bob, a.ID)
	_, errNone := f.svc.Get(ctx, f.bob, "sb_0000000000000000")
	wantCode(t, "bob gets alice's sandbox by id", errOther, bullpen.ENOTFOUND)
	wantCode(t, "bob gets a sandbox that does not exist", errNone, bullpen.ENOTFOUND)
	if strings.Replace(bullpen.ErrorMessage(errOther), a.ID, "X", 1) != strings.Replace(bullpen.ErrorMessage(errNone), "sb_0000000000000000", "X", 1) {
		t.Errorf("someone else's sandbox answers %q, a missing one %q: the difference tells it exists",
			bullpen.ErrorMessage(errOther), bullpen.ErrorMessage(errNone))
	}
	for name, fn := range map[string]func() error{
		"Terminate": func() error { return f.svc.Terminate(ctx, f.bob, a.ID) },
		"Stop":      func() error { return f.svc.Stop(ctx, f.bob, a.ID) },
		"Stats":     func() error { _, err := f.svc.Stats(ctx, f.bob, a.ID); return err },
		"Run": func() error {
			_, err := f.svc.Run(ctx, f.bob, a.ID, sandbox.ExecRequest{Cmd: []string{"true"}}, 0)
			return err
		},
		"ReadFile": func() error { _, err := f.svc.ReadFile(ctx, f.bob, a.ID, "/etc/hostname"); return err },
		"robo":     func() error { _, err := f.svc.Get(ctx, f.robo, a.ID); return err },
	} {
		wantCode(t, name+" on someone else's sandbox", fn(), bullpen.ENOTFOUND)
	}
	if got, err := f.svc.Get(ctx, f.alice, a.ID); err != nil || got.State != sandbox.StateRunning {
		t.Errorf("alice's sandbox after bob's attempts = %s, %v; want running", got.State, err)
	}
	if got, err := f.svc.Get(ctx, f.admin, a.ID); err != nil || got.ID != a.ID {
		t.Errorf("admin Get(alice's id) = %s, %v", got.ID, err)
	}
	_, err := f.svc.Get(ctx, f.admin, "web")
	wantCode(t, "admin gets a name two members use", err, bullpen.EINVALID)
	for _, bad := range []string{"", strings.Repeat("x", 129)} {
		_, err := f.svc.Get(ctx, f.alice, bad)
		wantCode(t, "Get("+bad[:min(len(bad), 8)]+"…)", err, bullpen.EINVALID)
	}
	counts := map[string]int{}
	for who, m := range map[string]bullpen.Member{"alice": f.alice, "bob": f.bob, "admin": f.admin, "robo": f.robo} {
		list, err := f.svc.List(ctx, m, nil)
		if err != nil {
			t.Fatalf("List(%s): %v", who, err)
		}
		counts[who] = len(list)
	}
	if counts["alice"] != 1 || counts["bob"] != 1 || counts["admin"] != 2 || counts["robo"] != 0 {
		t.Errorf("List counts = %v; want alice 1, bob 1, admin 2, robo 0", counts)
	}
}

// Tags starting with "bullpen." are Bullpen's: nobody sets or filters on
// them, and the user's view of a sandbox leaves them out.
func TestReservedTags(t *testing.T) {
	f := newFixture(t, sandboxes.Config{})
	ctx := context.Background()
	for _, tag := range []string{bullpen.SandboxOwnerTag, bullpen.SandboxNameTag, bullpen.SandboxAgentTag, "bullpen.anything"} {
		_, err := f.svc.Create(ctx, f.alice, sandbox.Spec{Tags: map[string]string{tag: "1"}})
		wantCode(t, "Create with tag "+tag, err, bullpen.EINVALID)
		_, err = f.svc.List(ctx, f.alice, map[string]string{tag: "1"})
		wantCode(t, "List filtered on "+tag, err, bullpen.EINVALID)
	}
	if list, _ := f.svc.List(ctx, f.admin, nil); len(list) != 0 {
		t.Fatalf("refused creates left %d sandboxes", len(list))
	}
	red := f.create(t, f.alice, sandbox.Spec{Tags: map[string]string{"team": "red"}})
	f.create(t, f.alice, sandbox.Spec{Tags: map[string]string{"team": "blue"}})
	list, err := f.svc.List(ctx, f.alice, map[string]string{"team": "red"})
	if err != nil || len(list) != 1 || list[0].ID != red.ID {
		t.Errorf("List(team=red) = %d sandboxes, %v; want only %s", len(list), err, red.ID)
	}
	if got := bullpen.SandboxUserTags(red.Tags); len(got) != 1 || got["team"] != "red" {
		t.Errorf("UserTags = %v, want only team=red", got)
	}
	if red.Tags[bullpen.SandboxOwnerTag] == "" {
		t.Errorf("stored tags %v lack the owner tag", red.Tags)
	}
}

// Names follow the runtime's rules, may not look like ids, and are unique
// among one owner's sandboxes.
func TestNameRules(t *testing.T) {
	f := newFixture(t, sandboxes.Config{})
	ctx := context.Background()
	for _, bad := range []string{"sb_mine", "-dash", "has space", "a/b", strings.Repeat("n", 64)} {
		_, err := f.svc.Create(ctx, f.alice, sandbox.Spec{Name: bad})
		wantCode(t, "name "+bad, err, bullpen.EINVALID)
	}
	f.create(t, f.alice, sandbox.Spec{Name: "Build_1.x-" + strings.Repeat("n", 53)}) // 63 characters
	f.create(t, f.alice, sandbox.Spec{Name: "ci"})
	_, err := f.svc.Create(ctx, f.alice, sandbox.Spec{Name: "ci"})
	wantCode(t, "second sandbox named ci", err, bullpen.ECONFLICT)
	if list, _ := f.svc.List(ctx, f.alice, nil); len(list) != 2 {
		t.Errorf("alice has %d sandboxes, want 2 (the refused ones made none)", len(list))
	}
}

// A member who is not an admin has at most MaxPerMember live sandboxes.
func TestMaxPerMember(t *testing.T) {
	f := newFixture(t, sandboxes.Config{MaxPerMember: 1})
	ctx := context.Background()
	one := f.create(t, f.bob, sandbox.Spec{})
	_, err := f.svc.Create(ctx, f.bob, sandbox.Spec{})
	wantCode(t, "bob's second sandbox", err, bullpen.ERATELIMIT)
	f.create(t, f.admin, sandbox.Spec{}) // admins are not counted, nor counted against bob
	if err := f.svc.Terminate(ctx, f.bob, one.ID); err != nil {
		t.Fatal(err)
	}
	f.create(t, f.bob, sandbox.Spec{})
	_, err = f.svc.Create(ctx, bullpen.Member{}, sandbox.Spec{})
	wantCode(t, "Create with no actor", err, bullpen.EUNAUTHORIZED)
}
