package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandTreeIsOneList: the cobra tree is built from root.go's commandFamilies list, not from
// init functions appending to a slice in file order.
func TestCommandTreeIsOneList(t *testing.T) {
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
			if d, ok := decl.(*ast.FuncDecl); ok && d.Recv == nil && d.Name.Name == "init" {
				t.Errorf("%s: func init in cmd/mosh: add the family to root.go's commandFamilies instead", fset.Position(d.Pos()))
			}
		}
	}
	// Every family shows up in the full tree.
	gs := scopeTestState(t)
	root := newRootCommand(gs, []string{"--help"})
	for _, path := range [][]string{{"herd", "ps"}, {"herd", "remote"}, {"herd", "serve"}, {"herd", "tasks"}, {"install"}, {"ps"}} {
		c, _, err := root.Find(path)
		if err != nil || c.Name() != path[len(path)-1] {
			t.Errorf("mosh %s: not in the tree (%v)", strings.Join(path, " "), err)
		}
	}
}
