package citest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCIFuzzRunsEveryTarget fails when a fuzz target exists in the tree that .ci/fuzz does not
// run, or when .ci/fuzz lists one that does not exist.
func TestCIFuzzRunsEveryTarget(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, ".ci", "fuzz"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(script), "\nTARGETS=(\n")
	list, _, ok2 := strings.Cut(list, "\n)\n")
	if !ok || !ok2 {
		t.Fatal(`.ci/fuzz has no TARGETS=( … ) list, one "./pkg FuzzName COUNTx" per line`)
	}
	var listed []string
	for _, line := range strings.Split(list, "\n") {
		fields := strings.Fields(strings.Trim(strings.TrimSpace(line), `"`))
		if len(fields) != 3 || !strings.HasSuffix(fields[2], "x") {
			t.Errorf(".ci/fuzz TARGETS line %q: want \"./pkg FuzzName COUNTx\" (the inputs CI runs, a count)", line)
			continue
		}
		listed = append(listed, fields[0]+" "+fields[1])
	}

	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w*)\(\w+ \*testing\.F\)`)
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			found = append(found, "./"+filepath.ToSlash(rel)+" "+m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("no fuzz targets found: is the walk looking at the repository?")
	}
	for _, f := range found {
		if !slices.Contains(listed, f) {
			t.Errorf("%q is not run by .ci/fuzz: add it to TARGETS", f)
		}
	}
	for _, l := range listed {
		if !slices.Contains(found, l) {
			t.Errorf(".ci/fuzz lists %q, which is not a fuzz target in the tree", l)
		}
	}
}
