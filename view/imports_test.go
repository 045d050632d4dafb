package view

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyRoot: view imports the standard library and the root
// package only, so the services that build its types and the adapters
// that show them (store, office, agents, web, mcp, client) can all import
// it without a cycle.
func TestImportsOnlyRoot(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/bullpen-hq/bullpen"
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if std := !strings.Contains(strings.Split(p, "/")[0], "."); !std && p != mod {
				t.Errorf("%s imports %s: only the standard library and %s", name, p, mod)
			}
		}
	}
	if checked < 4 {
		t.Fatalf("checked %d files; the test reads the wrong folder", checked)
	}
}
