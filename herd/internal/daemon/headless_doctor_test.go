package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
)

// doctor's engines check lists the engines ai() can use, in its pick order, from PATH and
// $MOSH_HOME/bin; none is a warning naming the fix.
func TestDoctorHeadlessEnginesCheck(t *testing.T) {
	table := state.Load("")
	pathDir, toolsDir := t.TempDir(), t.TempDir()
	c := herd.HeadlessCheck(table, []string{"PATH=" + pathDir}, toolsDir)
	if c.Level != "warn" || !strings.Contains(c.Detail, "looked for claude, codex, opencode") || !strings.Contains(c.Fix, "MOSH_AI_PROVIDER") {
		t.Fatalf("%+v", c)
	}
	for _, p := range []string{filepath.Join(pathDir, "pi"), filepath.Join(toolsDir, "codex")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c = herd.HeadlessCheck(table, []string{"PATH=" + pathDir}, toolsDir)
	want := "installed: codex (" + filepath.Join(toolsDir, "codex") + "), pi (" + filepath.Join(pathDir, "pi") + "); ai() picks the first"
	if c.Level != "ok" || c.Detail != want {
		t.Fatalf("%+v, want detail %q", c, want)
	}
}
