package daemon

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
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
	wire, err := filepath.Glob("../../*.go") // package herd: api.go holds the Method constants
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, wire...)
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
					t.Errorf("%s: func init in package herd or daemon: build tables in literals, not by init order", fset.Position(d.Pos()))
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
	routedElsewhere := map[string]bool{herd.MethodAttach: true, herd.MethodCancel: true}
	for name, v := range consts {
		_, inTable := handlers[v]
		if inTable == routedElsewhere[v] {
			t.Errorf("%s (%q): in the dispatch table = %v, routed by the connection loop = %v", name, v, inTable, routedElsewhere[v])
		}
	}
}

// TestNoMutableGlobals: the daemon and the state engine keep no process-wide state that code
// assigns at run time (a dead state.SetDefault table; test hooks such as ledgerOpenedHook that
// tests set on the production daemon): such state lives on an instance, and what tests observe
// is passed in (serveSeams).
func TestNoMutableGlobals(t *testing.T) {
	for _, dir := range []string{".", "../..", "../../state"} {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s: the test lost track of the package", dir)
		}
		var parsed []*ast.File
		globals := map[string]*ast.ValueSpec{}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, af)
			for _, decl := range af.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, s := range gd.Specs {
					vs := s.(*ast.ValueSpec)
					for _, n := range vs.Names {
						globals[n.Name] = vs
						if _, isFunc := vs.Type.(*ast.FuncType); isFunc {
							t.Errorf("%s: package-level func variable %s: a hook tests set on production code; pass it in instead",
								fset.Position(n.Pos()), n.Name)
						}
					}
				}
			}
		}
		for _, af := range parsed {
			ast.Inspect(af, func(n ast.Node) bool {
				fd, ok := n.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					return true
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					as, ok := n.(*ast.AssignStmt)
					if !ok || as.Tok != token.ASSIGN {
						return true
					}
					for _, l := range as.Lhs {
						id, ok := l.(*ast.Ident)
						if !ok || globals[id.Name] == nil {
							continue
						}
						if id.Obj == nil || id.Obj.Decl == globals[id.Name] {
							t.Errorf("%s: %s assigns the package-level %s: keep run-time state on an instance",
								fset.Position(id.Pos()), fd.Name.Name, id.Name)
						}
					}
					return true
				})
				return false
			})
		}
	}
}
