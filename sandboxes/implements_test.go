package sandboxes_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/agents"
	"github.com/bullpen-hq/bullpen/sandboxes"
)

// The agents runtime reaches the sandboxes through interfaces it declares;
// these are the implementations main wires in.
var (
	_ agents.Sandboxes = (*sandboxes.Workspaces)(nil)
	_ agents.Warmer    = (*sandboxes.Workspaces)(nil)
	_ agents.CLIRunner = (*sandboxes.CLIWorkspaces)(nil)
)

// TestDepsReachNoAgents: sandboxes, timeline, wiki and office read the
// agents' nouns from the root package, so none of them pulls in agents (a
// leaf only main and the adapters that serve agents import).
func TestDepsReachNoAgents(t *testing.T) {
	const mod = "github.com/bullpen-hq/bullpen"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`,
		mod+"/sandboxes", mod+"/timeline", mod+"/wiki", mod+"/office").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, dep := range f[1:] {
			if dep == mod+"/agents" || strings.HasPrefix(dep, mod+"/agents/") {
				t.Errorf("%s depends on %s: move the shared nouns to the root package", f[0], dep)
			}
		}
	}
	if len(strings.Split(strings.TrimSpace(string(out)), "\n")) != 4 {
		t.Fatalf("go list answered for fewer than 4 packages: %s", out)
	}
}
