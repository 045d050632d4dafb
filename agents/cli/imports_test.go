package cli

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsStayLow: the socket server imports the standard library, the
// root package and internal helpers only, never the agents service or
// another feature package, so that it can be read and tested alone.
func TestImportsStayLow(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/bullpen-hq/bullpen"
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.Split(p, "/")[0], ".")
			if !std && p != mod && !strings.HasPrefix(p, mod+"/internal/") {
				t.Errorf("%s imports %s: only the standard library, %s and its internal packages", name, p, mod)
			}
		}
	}
}
