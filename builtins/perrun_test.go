package builtins

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPerRunStateOnTheInstance: state that belongs to one script run lives on the run's install
// (k6's ModuleInstance), never in a package-level map keyed by the VU that every run shares.
func TestPerRunStateOnTheInstance(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range af.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				typ := types(vs)
				if strings.Contains(typ, "sync.Map") || strings.Contains(typ, "runtime.VU") {
					t.Errorf("%s: package-level %s holds per-run state (%s): put it on the install", fset.Position(vs.Pos()), vs.Names[0].Name, typ)
				}
			}
		}
	}
}

// types renders a var spec's declared type and initialiser expressions, roughly.
func types(vs *ast.ValueSpec) string {
	var b strings.Builder
	exprs := append([]ast.Expr{vs.Type}, vs.Values...)
	for _, e := range exprs {
		if e == nil {
			continue
		}
		ast.Inspect(e, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok {
					b.WriteString(id.Name + "." + se.Sel.Name + " ")
				}
			}
			return true
		})
	}
	return b.String()
}
