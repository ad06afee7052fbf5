package state

import (
	"testing"

	"github.com/mosh-dev/mosh/herd/screen"
)

// InputLeftover reads text on the engine's input line (what an Escape put back), not the echoed
// prompts above it; an engine without a prompt pattern never reports leftover text.
func TestInputLeftover(t *testing.T) {
	tb := Load("")
	claude, ok := tb.Lookup("claude")
	if !ok || len(claude.ClearInput) == 0 {
		t.Fatalf("claude has no clearInput keys: %+v", claude)
	}
	snap := func(lines ...string) screen.Snapshot {
		return screen.Snapshot{Lines: lines, Cols: 80, Rows: len(lines)}
	}
	rule := "────────────────────────────────────────"
	cases := []struct {
		name string
		s    screen.Snapshot
		want bool
	}{
		{"empty box", snap("❯ say hello", "● hello", "", rule, "❯\u00a0", rule, "  ? for shortcuts"), false},
		{"leftover", snap("❯ slow first", "  ⎿  Interrupted · What should Claude do instead?", "", rule, "❯\u00a0slow first", rule, ""), true},
		{"no prompt line", snap("Welcome", ""), false},
	}
	for _, c := range cases {
		if got := claude.InputLeftover(c.s); got != c.want {
			t.Errorf("%s: InputLeftover = %v, want %v", c.name, got, c.want)
		}
	}
	shell, _ := tb.Lookup("shell")
	if shell.InputLeftover(snap("$ ls", "$ half typed")) {
		t.Error("an engine without a prompt pattern reported leftover input")
	}
}
