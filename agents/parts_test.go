package agents

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// maxMethods is the most methods one type of the package may declare
// (issue 22: agents in parts behind a façade). A type that grows past it
// is a part that wants splitting.
const maxMethods = 40

// TestNoTypeDeclaresMoreThanMaxMethods counts the methods each type
// declares in the package's non-test files.
func TestNoTypeDeclaresMoreThanMaxMethods(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, de := range entries {
		name := de.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				counts[receiverType(fd.Recv.List[0].Type)]++
			}
		}
	}
	if counts["Service"] == 0 {
		t.Fatalf("counted no methods of Service: %v", counts)
	}
	for typ, n := range counts {
		if n > maxMethods {
			t.Errorf("%s declares %d methods, more than %d: split it into parts", typ, n, maxMethods)
		}
	}
}

func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverType(x.X)
	case *ast.IndexExpr: // a generic receiver
		return receiverType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}
