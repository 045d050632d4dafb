package web

import (
	"go/parser"
	"go/token"
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
