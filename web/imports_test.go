package web

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWebDoesNotImportStore guards issue 11's layering: handlers reach the
// database through services and use the root package's domain types, so no
// non-test file of web may import store (tests may, to set up data).
func TestWebDoesNotImportStore(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/bullpen-hq/bullpen/store" {
				t.Errorf("%s imports %s, want no store import outside tests", name, path)
			}
		}
	}
}

// TestWebDepsReachNoStore guards the must-show of issue 11, move 3: `go
// list -deps ./web` (non-test files only) names no store package, so web
// reaches the database only through the interfaces it declares. A failure
// names the import that brings store in.
func TestWebDepsReachNoStore(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go not found: %v", err)
	}
	const store = "github.com/bullpen-hq/bullpen/store"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			imports[f[0]] = f[1:]
		}
	}
	const self = "github.com/bullpen-hq/bullpen/web"
	if _, ok := imports[self]; !ok {
		t.Fatalf("go list -deps did not list %s:\n%s", self, out)
	}
	for _, imp := range imports[self] {
		if reachesPkg(imports, imp, store, map[string]bool{}) {
			t.Errorf("web imports %s, which depends on %s; declare an interface with root types instead", imp, store)
		}
	}
	if _, ok := imports[store]; ok {
		t.Errorf("go list -deps ./web lists %s", store)
	}
}

// reachesPkg reports whether from depends on target in the import graph.
func reachesPkg(imports map[string][]string, from, target string, seen map[string]bool) bool {
	if from == target {
		return true
	}
	if seen[from] {
		return false
	}
	seen[from] = true
	for _, next := range imports[from] {
		if reachesPkg(imports, next, target, seen) {
			return true
		}
	}
	return false
}
