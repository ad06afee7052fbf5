package queue

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No package of mosh hand-writes this queue again: a struct whose own lock (mu) sits beside a
// slice and a channel named wake (chan struct{}) is the pattern Q replaces (the herd's bus, attach streams,
// ledger writer, client subscriptions, the A2A server's watches and the runtime's loop had one
// each). The test reads every non-test Go file of the module.
func TestNoHandWrittenQueues(t *testing.T) {
	root := filepath.Join("..", "..")
	var bad []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", ".cache":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			var mutex, slice, wake bool
			for _, fl := range st.Fields.List {
				switch ft := fl.Type.(type) {
				case *ast.SelectorExpr:
					if x, ok := ft.X.(*ast.Ident); ok && x.Name == "sync" && ft.Sel.Name == "Mutex" {
						for _, name := range fl.Names {
							mutex = mutex || name.Name == "mu" // the struct's own lock, not a write lock
						}
					}
				case *ast.ArrayType:
					slice = slice || ft.Len == nil
				case *ast.ChanType:
					if s, ok := ft.Value.(*ast.StructType); ok && len(s.Fields.List) == 0 {
						for _, name := range fl.Names {
							wake = wake || name.Name == "wake"
						}
					}
				}
			}
			if mutex && slice && wake && ts.Name.Name != "Q" {
				bad = append(bad, fset.Position(ts.Pos()).String()+": "+ts.Name.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Fatalf("hand-written mutex + slice + wake-channel queues (use internal/queue.Q):\n%s", strings.Join(bad, "\n"))
	}
}
