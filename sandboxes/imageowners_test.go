package sandboxes

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/image"
)

func TestSnapshotName(t *testing.T) {
	alice := bullpen.Member{ID: 2, Handle: "alice", Kind: bullpen.KindHuman}
	admin := bullpen.Member{ID: 1, Handle: "root", Kind: bullpen.KindHuman, IsAdmin: true}
	agentAdmin := bullpen.Member{ID: 3, Handle: "bot", Kind: bullpen.KindAgent, IsAdmin: true}
	tests := []struct {
		name   string
		actor  bullpen.Member
		in     string
		want   string
		forbid bool
	}{
		{name: "bare name is namespaced", actor: alice, in: "tool", want: "alice/tool"},
		{name: "own namespace kept", actor: alice, in: "alice/tool:1", want: "alice/tool:1"},
		{name: "someone else's namespace", actor: alice, in: "bob/tool", forbid: true},
		{name: "a shared-looking path", actor: alice, in: "library/python", forbid: true},
		{name: "admin names freely", actor: admin, in: "python", want: "python"},
		{name: "an agent is namespaced even if admin", actor: agentAdmin, in: "x", want: "bot/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := snapshotName(tt.actor, tt.in)
			if tt.forbid {
				if !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
					t.Errorf("snapshotName(%q) = %q, %v; want forbidden", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("snapshotName(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// Owners survive a restart, and an image without an entry is shared.
func TestImageOwnersPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "owners.json")
	o, err := openImageOwners(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.set("sha256:aa", imageOwner{Owner: 2}); err != nil {
		t.Fatal(err)
	}
	again, err := openImageOwners(path)
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := bullpen.Member{ID: 2}, bullpen.Member{ID: 5}
	private, shared := &image.Image{ID: "sha256:aa"}, &image.Image{ID: "sha256:bb"}
	if !again.canUse(alice, private) || again.canUse(bob, private) || !again.canUse(bob, shared) {
		t.Errorf("after reopening: alice %v, bob %v on alice's image, bob %v on a shared one; want true false true",
			again.canUse(alice, private), again.canUse(bob, private), again.canUse(bob, shared))
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := openImageOwners(path); err == nil {
		t.Error("a corrupt owners file opened without an error (every snapshot would turn shared)")
	}
}
