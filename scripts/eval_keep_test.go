package scripts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// A run is kept in $MOSH_HOME/herd/evals as the same JSON --json prints (the dashboard's evals page
// reads them), 0600 in a 0700 directory; a dry run keeps nothing.
func TestEvalKeepsTheRunInMoshHome(t *testing.T) {
	e := newEval(t)
	ds := e.dataset("ds.jsonl", fourRows)
	dir := filepath.Join(herd.HerdDir(e.home), "evals")
	if _, errs, code := e.runIn(e.dir, "herd", "eval", "--dry-run", "--dataset", ds, "--engines", "claude"); code != 0 {
		t.Fatalf("dry run: %d %s", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a dry run kept %d files in %s", len(ents), dir)
	}
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("kept runs in %s: %v %v", dir, ents, err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("%s is %v, want 0700", dir, fi.Mode().Perm())
	}
	path := filepath.Join(dir, ents[0].Name())
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept evalReport
	if err := json.Unmarshal(b, &kept); err != nil {
		t.Fatalf("the kept run is not the report: %v", err)
	}
	if kept.SchemaVersion != 1 || kept.StartedAt != r.StartedAt || len(kept.Rows) != len(r.Rows) {
		t.Fatalf("kept %+v, printed %+v", kept, r)
	}
}
