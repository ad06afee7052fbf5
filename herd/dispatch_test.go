package herd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDispatchTableIsOneLiteral: the daemon's methods come from one literal, not from init
// functions that write into a map another file's init creates (renaming a file used to be able
// to make every mosh process panic at start). Every request method has exactly one route.
func TestDispatchTableIsOneLiteral(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{} // Method* constant name → value
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range af.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					t.Errorf("%s: func init in package herd: build tables in literals, not by init order", fset.Position(d.Pos()))
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok || d.Tok != token.CONST {
						continue
					}
					for i, n := range vs.Names {
						if strings.HasPrefix(n.Name, "Method") && i < len(vs.Values) {
							if bl, ok := vs.Values[i].(*ast.BasicLit); ok {
								consts[n.Name] = strings.Trim(bl.Value, `"`)
							}
						}
					}
				}
			}
		}
	}
	if len(consts) < 20 {
		t.Fatalf("found only %d Method constants: the test lost track of api.go", len(consts))
	}
	// attach and cancel are routed by the connection loop itself (daemon.go), before the table.
	routedElsewhere := map[string]bool{MethodAttach: true, MethodCancel: true}
	for name, v := range consts {
		_, inTable := handlers[v]
		if inTable == routedElsewhere[v] {
			t.Errorf("%s (%q): in the dispatch table = %v, routed by the connection loop = %v", name, v, inTable, routedElsewhere[v])
		}
	}
}
