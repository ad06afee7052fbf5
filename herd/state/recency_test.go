package state

import (
	"strings"
	"testing"
)

// Marker rules (done, interrupted, error lines) are ranked by recency, not
// priority: the lowest on the screen is the latest event. Under plain
// priority every one of these read the older marker.
func TestNewestMarkerWins(t *testing.T) {
	interrupted := "  ⎿ " + nbsp + "Interrupted · What should Claude do instead?"
	for _, f := range []fixture{
		{name: "claude: a done line under an interrupted one, no prompt echo between", engine: "claude", title: "✳ Claude Code",
			bottom: cat([]string{interrupted, "", "● Done.", "", "✻ Worked for 1s · done 1:10 PM"}, claudeBox(claudeManual, "")),
			state:  Done, rule: "claude.done.turn"},
		{name: "claude: an interrupted line under a done one", engine: "claude", title: "✳ Claude Code",
			bottom: cat([]string{"✻ Worked for 1s · done 1:10 PM", "", interrupted}, claudeBox(claudeManual, "")),
			state:  Idle, rule: "claude.idle.interrupted"},
		{name: "claude: an API error under an interrupted line", engine: "claude", title: "✳ Claude Code",
			bottom: cat([]string{interrupted, "● API Error: 400 boom"}, claudeBox(claudeManual, "")),
			state:  Done, rule: "claude.done.api_error"},
		{name: "claude: a question answered after an earlier denied call", engine: "claude", title: "✳ Claude Code",
			bottom: cat([]string{"❯ create it again", "", "  Did not run 1 call", interrupted, "", "❯ ask me", "",
				"● Answered Claude's questions:", "  ⎿ " + nbsp + "· Which color should the button be? → Red", "",
				"● Tool finished; the fake model is done.", "", "✻ Worked for 1s · done 1:10 PM"}, claudeBox(claudeManual, "")),
			state: Done, rule: "claude.done.turn"},
		{name: "codex: a done line under an interrupted one", engine: "codex", title: "proj", top: codexLogo,
			bottom: cat([]string{"■ Conversation interrupted - use /feedback if something went wrong", "", "• Hi.", "",
				"  Worked for 2s • 11:06"}, codexComposer("")),
			state: Done, rule: "codex.done.turn"},
		{name: "pi: an API error under an abort", engine: "pi", top: []string{" pi v0.73.1", "", " Operation aborted", "", " fail please", "",
			" Error: 400 boom"},
			bottom: []string{"─────────────────────────────────────────", "", "─────────────────────────────────────────", " ~/proj", " ↑30 ↓2 0.0%/128k (auto)"},
			state:  Done, rule: "pi.done.error"},
	} {
		t.Run(f.name, func(t *testing.T) {
			snap := f.snapshot(t)
			rd := Load("").Classify(f.engine, snap)
			if rd.State != f.state || rd.Rule != f.rule {
				t.Fatalf("got %s by %s (%q), want %s by %s\n%s", rd.State, rd.Rule, rd.Evidence, f.state, f.rule, snap.Text())
			}
		})
	}
}

// A prompt echoed above the box ends the region of the current turn: an old
// turn's done line above it says nothing about now.
func TestMarkersAboveAnOlderPromptArePast(t *testing.T) {
	f := fixture{engine: "claude", title: "✳ Claude Code", top: claudeLogo,
		bottom: cat([]string{"✻ Cooked for 8s · done 1:10 PM", "", "❯ next question"}, claudeBox(claudeManual, ""))}
	rd := Load("").Classify("claude", f.snapshot(t))
	if rd.Rule != "claude.idle.prompt" {
		t.Fatalf("the previous turn's done line decided: %s by %s (%q)", rd.State, rd.Rule, rd.Evidence)
	}
}

func TestUserMarkerRules(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "engines.json", `{ "engines": [
  { "name": "claude", "rules": [
      { "id": "mine.shipped", "state": "done", "priority": 100, "region": "above_prompt:4", "latest": true, "any": ["^✔ Shipped"] },
      { "id": "mine.bad", "state": "done", "priority": 100, "region": "title", "latest": true, "any": ["x"] } ] }
] }`)
	tab := Load(dir)
	probs := tab.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0].Where, "mine.bad") || !strings.Contains(probs[0].Error, "screen lines") {
		t.Fatalf("a marker rule on the title must be refused with the reason: %v", probs)
	}
	// A low-priority marker still wins by being newer than the built-in one.
	interrupted := "  ⎿ " + nbsp + "Interrupted · What should Claude do instead?"
	f := fixture{engine: "claude", title: "✳ Claude Code",
		bottom: cat([]string{interrupted, "✔ Shipped v2"}, claudeBox(claudeManual, ""))}
	if rd := tab.Classify("claude", f.snapshot(t)); rd.Rule != "mine.shipped" || rd.State != Done {
		t.Fatalf("newer user marker: %s by %s", rd.State, rd.Rule)
	}
	f.bottom = cat([]string{"✔ Shipped v2", interrupted}, claudeBox(claudeManual, ""))
	if rd := tab.Classify("claude", f.snapshot(t)); rd.Rule != "claude.idle.interrupted" {
		t.Fatalf("older user marker: %s by %s", rd.State, rd.Rule)
	}
}
