package herd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Every exported top-level name of package herd is used outside it (as herd.X by the daemon,
// an adapter, a test of another package): the package is the client and the wire types, and a
// name only herd itself uses stays unexported. The exceptions are types that appear only as
// the type of an exported field or result (their values are used, their names need not be).
func TestEveryExportedNameIsUsedOutsideHerd(t *testing.T) {
	onlyAsAType := map[string]string{
		"LockInfo":      "LockHolder's and ParseLockInfo's result",
		"EngineProblem": "the element of EnginesResult.Problems",
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.IsExported() {
						names = append(names, d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								names = append(names, s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									names = append(names, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	// One pass over the module's other Go files collects every herd.X they write.
	ref := regexp.MustCompile(`\bherd\.([A-Z]\w*)`)
	used := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && filepath.Dir(path) != "../herd" {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range ref.FindAllSubmatch(b, -1) {
				used[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var unused []string
	for _, n := range names {
		if onlyAsAType[n] == "" && !used[n] {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Fatalf("exported by package herd but used by no other package (unexport them, or delete them): %s", strings.Join(unused, ", "))
	}
	if len(names) < 100 {
		t.Fatalf("found only %d exported names: the parse went wrong", len(names))
	}
}
