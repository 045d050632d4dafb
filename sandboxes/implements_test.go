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
// leaf only main and the adapters that serve agents import). config
// holds the server's settings and imports no service at all: main hands
// its values to the packages that use them.
func TestDepsReachNoAgents(t *testing.T) {
	const mod = "github.com/bullpen-hq/bullpen"
	services := []string{"/agents", "/web", "/sandboxes", "/store", "/office"}
	forbidden := map[string][]string{
		mod + "/sandboxes": {"/agents"}, mod + "/timeline": {"/agents"}, mod + "/wiki": {"/agents"},
		mod + "/office": {"/agents"}, mod + "/config": services,
	}
	args := []string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}
	for pkg := range forbidden {
		args = append(args, pkg)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		f := strings.Fields(line)
		for _, dep := range f[1:] {
			for _, bad := range forbidden[f[0]] {
				if dep == mod+bad || strings.HasPrefix(dep, mod+bad+"/") {
					t.Errorf("%s depends on %s: move the shared nouns to the root package, or let main hand the values over", f[0], dep)
				}
			}
		}
	}
	if len(lines) != len(forbidden) {
		t.Fatalf("go list answered for %d packages, want %d: %s", len(lines), len(forbidden), out)
	}
}
