package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The engines table's chrome regions, on the real engines' idle screens: Claude's input box with
// its rules and the footer, Codex's composer and the lines under it; never the turn's answer.
func TestChromeRowsOnRealScreens(t *testing.T) {
	tab := Load("")
	byName := map[string]realScreen{}
	for _, rs := range loadRealScreens(t) {
		byName[rs.name] = rs
	}
	cases := []struct {
		name          string
		chrome, reply []string
	}{
		{"claude-api-error", []string{"❯", "? for shortcuts", "────────────"}, []string{"API Error: 400", "fail please fake-apierror"}},
		{"codex-api-error", []string{"Ask Codex to do anything", "gpt-fake default", "? for shortcuts"}, []string{"fake-apierror: the fake model rejected", "fail please fake-apierror"}},
	}
	for _, c := range cases {
		rs, ok := byName[c.name]
		if !ok {
			t.Fatalf("no real screen %s", c.name)
		}
		e, _ := tab.Lookup(rs.engine)
		rows := e.ChromeRows(rs.snap)
		var chrome, kept []string
		for i, l := range rs.snap.Lines {
			if i < len(rows) && rows[i] {
				chrome = append(chrome, l)
			} else {
				kept = append(kept, l)
			}
		}
		for _, want := range c.chrome {
			if !strings.Contains(strings.Join(chrome, "\n"), want) {
				t.Errorf("%s: %q is not chrome; chrome rows:\n%s", c.name, want, strings.Join(chrome, "\n"))
			}
		}
		for _, want := range c.reply {
			if !strings.Contains(strings.Join(kept, "\n"), want) {
				t.Errorf("%s: the turn's %q was taken for chrome; chrome rows:\n%s", c.name, want, strings.Join(chrome, "\n"))
			}
		}
	}
	// An engine without chrome regions marks nothing.
	if e, _ := tab.Lookup("aider"); e.ChromeRows(byName["claude-api-error"].snap) != nil {
		t.Errorf("aider names no chrome")
	}
}

// A user's chrome region that is not one drops only itself, and doctor names it.
func TestBadChromeRegionIsAProblem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "engines.json"), []byte(`{"engines": [{"name": "claude", "chrome": ["title", "bottom:x", "below_prompt"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tab := Load(dir)
	var probs []string
	for _, p := range tab.Problems() {
		if p.Where == "claude chrome" {
			probs = append(probs, p.Error)
		}
	}
	if len(probs) != 2 || !strings.Contains(probs[0], "cannot be chrome") {
		t.Fatalf("problems %q", probs)
	}
	e, _ := tab.Lookup("claude")
	if len(e.chrome) != 1 {
		t.Fatalf("the good region is dropped too: %v", e.chrome)
	}
}
