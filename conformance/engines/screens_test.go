package engines

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/state"
)

// TestScreenFixtures reads every real screen in ./screens with the embedded engine table and
// checks the screen-only reading against the fixture's expected states. It needs no engine
// installed: the screens were captured from the real ones.
func TestScreenFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("screens", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures in ./screens: regenerate them with MOSH_ENGINES=all MOSH_ENGINES_WRITE_SCREENS=1 go test ./conformance/engines -run TestEngines")
	}
	table := state.Load("")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		snap, header, err := ParseScreen(string(data))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		engine, _, _ := strings.Cut(header["engine"], " ")
		expect := strings.Split(header["expect"], "|")
		if engine == "" || header["expect"] == "" {
			t.Errorf("%s: header lacks engine or expect", f)
			continue
		}
		rd := table.Classify(engine, snap)
		got := state.Format(rd.State, rd.Kind)
		if !slices.Contains(expect, got) {
			t.Errorf("%s: the screen reads %s by rule %q (evidence %q); expected %s", filepath.Base(f), got, rd.Rule, rd.Evidence, header["expect"])
		}
	}
}

func TestParseScreenRoundTrip(t *testing.T) {
	snap, _, err := ParseScreen("# engine: x 1\n# step: s\n# expect: idle\n# title: ✳ Claude Code\n# size: 4x3\n# altScreen: true\n# ---\nab\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Cols != 4 || snap.Rows != 3 || len(snap.Lines) != 3 || snap.Lines[0] != "ab" || snap.Title != "✳ Claude Code" || !snap.AltScreen {
		t.Fatalf("parsed %+v", snap)
	}
	back := FormatScreen("x", "1", "s", []string{"idle"}, snap)
	again, _, err := ParseScreen(back)
	if err != nil || strings.Join(again.Lines, "\n") != strings.Join(snap.Lines, "\n") || again.Title != snap.Title {
		t.Fatalf("round trip changed the screen: %v\n%s", err, back)
	}
	if _, _, err := ParseScreen("# engine: x\nno separator\n"); err == nil {
		t.Fatal("a fixture without a header separator must be refused")
	}
}
