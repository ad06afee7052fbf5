package herd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/state"
)

// fakeBin writes an executable that prints out for --version.
func fakeBin(t *testing.T, dir, name, out string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// doctor warns about an installed engine older than its entry's minVersion (gemini's 0.26.0,
// from the embedded table); one that is new enough, or a table entry without a minVersion, is
// fine; an entry from the docs only says so.
func TestEngineVersionCheck(t *testing.T) {
	table := state.Load("")
	pathDir, toolsDir := t.TempDir(), t.TempDir()
	env := []string{"PATH=" + pathDir}

	c := EngineVersionCheck(table, env, toolsDir)
	if c.Level != "ok" || !strings.Contains(c.Detail, "no installed engine") {
		t.Fatalf("nothing installed: %+v", c)
	}

	bin := fakeBin(t, toolsDir, "gemini", "0.25.3")
	fakeBin(t, pathDir, "claude", "0.0.1 (Claude Code)") // no minVersion in its entry: never run
	c = EngineVersionCheck(table, env, toolsDir)
	want := "gemini 0.25.3 (" + bin + ") is older than 0.26.0, the oldest its engines-table entry works with; its entry is from the docs only"
	if c.Level != "warn" || c.Detail != want || !strings.Contains(c.Fix, "upgrade gemini") {
		t.Fatalf("old gemini: %+v\nwant detail %q", c, want)
	}

	fakeBin(t, toolsDir, "gemini", "gemini-cli v0.31.0")
	c = EngineVersionCheck(table, env, toolsDir)
	if c.Level != "ok" || c.Detail != "gemini 0.31.0 ≥ 0.26.0; its entry is from the docs only" {
		t.Fatalf("new gemini: %+v", c)
	}

	fakeBin(t, toolsDir, "gemini", "no number here")
	if c = EngineVersionCheck(table, env, toolsDir); c.Level != "ok" || !strings.Contains(c.Detail, "--version printed no version") {
		t.Fatalf("unreadable version: %+v", c)
	}

	// A user's engines.json sets the floor of any engine.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "engines.json"), []byte(`{"engines":[{"name":"pi","minVersion":"1.0"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(bin)
	fakeBin(t, pathDir, "pi", "0.73.1")
	c = EngineVersionCheck(state.Load(dir), env, toolsDir)
	if c.Level != "warn" || !strings.HasPrefix(c.Detail, "pi 0.73.1 (") || strings.Contains(c.Detail, "docs only") {
		t.Fatalf("pi below a user floor: %+v", c)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string][3]int{"2.1.332 (Claude Code)": {2, 1, 332}, "v1.2": {1, 2, 0}, "codex-cli 0.171.0": {0, 171, 0}} {
		if got, _, ok := parseVersion(in); !ok || got != want {
			t.Errorf("parseVersion(%q) = %v %v", in, got, ok)
		}
	}
	if versionLess([3]int{0, 26, 0}, [3]int{0, 25, 9}) || !versionLess([3]int{0, 9, 9}, [3]int{0, 26, 0}) {
		t.Error("versionLess")
	}
}
