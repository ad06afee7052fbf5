package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository builds as one plain module: `go install github.com/mosh-dev/mosh/cmd/mosh@latest`
// and every module that imports the herd client resolve it as it is. So go.mod has no replace
// directive, there is no second go.mod in the build (node_modules and testdata are not Go's), and
// no assembly (.s) file.
func TestOneModuleNoReplaceNoAssembly(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if fields := strings.Fields(sc.Text()); len(fields) > 0 && fields[0] == "replace" {
			t.Errorf("go.mod:%d: %s: a replace directive breaks `go install …@latest` and every importer; depend on a published version", n, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Name() == "go.mod" && rel != "go.mod":
			t.Errorf("%s: a second module in the repository; keep the code in the main module", rel)
		case strings.HasSuffix(d.Name(), ".s") || strings.HasSuffix(d.Name(), ".S"):
			t.Errorf("%s: assembly; write it in Go", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
