package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEmbeddedTable(t *testing.T) {
	tab := Load("")
	if p := tab.Problems(); len(p) != 0 {
		t.Fatalf("embedded table has problems: %v", p)
	}
	want := []string{"aider", "claude", "codex", "gemini", "gradient", "kimi", "opencode", "pi", "qwen", "shell"}
	if got := strings.Join(tab.Names(), ","); got != strings.Join(want, ",") {
		t.Fatalf("engines %s, want %s", got, strings.Join(want, ","))
	}
	for alias, name := range map[string]string{"cc": "claude", "CC": "claude", "claude-code": "claude", "/usr/bin/claude": "claude",
		"codex": "codex", "openai": "codex", "kimi-cli": "kimi", "qwen-code": "qwen", "bash": "shell", "plain": "shell"} {
		e, ok := tab.Lookup(alias)
		if !ok || e.Name != name {
			t.Errorf("Lookup(%q) = %v, want %s", alias, e, name)
		}
	}
	codex, _ := tab.Lookup("codex")
	if len(codex.LaunchArgs) == 0 || codex.LaunchArgs[0] != "--no-daemon" {
		t.Errorf("codex launch args %v: hooks report the wrong member without --no-daemon", codex.LaunchArgs)
	}
	claude, _ := tab.Lookup("claude")
	if !claude.BracketedPaste || claude.Hooks == nil || len(claude.ResumeArgs) == 0 || len(claude.HeadlessArgs) == 0 {
		t.Errorf("claude entry incomplete: %+v", claude)
	}
	gradient, _ := tab.Lookup("gradient")
	for _, r := range tab.rulesFor(gradient) {
		if r.State == Working {
			t.Errorf("gradient must have no working rule (uvicorn logs a request after it finished); has %s", r.ID)
		}
	}
	if _, err := tab.Resolve("nope"); err == nil || !strings.Contains(err.Error(), "claude") {
		t.Errorf("Resolve(nope) error should list the engines: %v", err)
	}
}

func TestRulesJSONMerging(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules.json", `{
  "claude": { "blocked": ["custom gate \\d+"], "done": ["all finished"] },
  "cc":     { "working": ["crunching numbers"] },
  "common": { "idle": ["ready for orders"], "blocked:question": ["pick a colour"] }
}`)
	tab := Load(dir)
	if p := tab.Problems(); len(p) != 0 {
		t.Fatalf("unexpected problems: %v", p)
	}
	claudeIdle := fixture{engine: "claude", title: "✳ Claude Code", top: claudeLogo, bottom: claudeBox(claudeManual, "")}

	// A user pattern for the engine outranks every built-in rule.
	f := claudeIdle
	f.top = append(append([]string{}, claudeLogo...), "Custom Gate 42 reached")
	if rd := tab.Classify("claude", f.snapshot(t)); rd.State != Blocked || !strings.HasPrefix(rd.Rule, "rules.json:claude.blocked") {
		t.Fatalf("user blocked rule: got %s by %s", rd.State, rd.Rule)
	}
	// Aliases address the same engine.
	f.top = append(append([]string{}, claudeLogo...), "crunching numbers")
	if rd := tab.Classify("claude", f.snapshot(t)); rd.State != Working || !strings.HasPrefix(rd.Rule, "rules.json:cc.working") {
		t.Fatalf("alias rule: got %s by %s", rd.State, rd.Rule)
	}
	// "common" rules apply to every engine but do not outrank engine rules.
	f.top = append(append([]string{}, claudeLogo...), "ready for orders")
	if rd := tab.Classify("claude", f.snapshot(t)); rd.Rule != "claude.idle.prompt" {
		t.Fatalf("common user rule must not beat claude's own rules: %s", rd.Rule)
	}
	if rd := tab.Classify("kimi", fixture{top: []string{"ready for orders"}}.snapshot(t)); rd.State != Idle || !strings.HasPrefix(rd.Rule, "rules.json:common.idle") {
		t.Fatalf("common user rule on kimi: %s by %s", rd.State, rd.Rule)
	}
	if rd := tab.Classify("kimi", fixture{top: []string{"please pick a colour"}}.snapshot(t)); rd.State != Blocked || rd.Kind != Question {
		t.Fatalf("blocked:question user rule: %s", Format(rd.State, rd.Kind))
	}
	// Without the file none of this applies.
	if rd := Load("").Classify("kimi", fixture{top: []string{"ready for orders"}}.snapshot(t)); rd.State != Unknown {
		t.Fatalf("rules leaked into a table without rules.json: %s by %s", rd.State, rd.Rule)
	}
}

func TestRulesJSONBadPatternDropsOnlyItself(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules.json", `{
  "codex":  { "blocked": ["(unclosed", "(?<=lookbehind)x", "gate open"], "sleeping": ["zz"], "idle": "not a list" },
  "nosuch": { "idle": ["x"] },
  "pi": ["not", "an", "object"]
}`)
	tab := Load(dir)
	probs := tab.Problems()
	var where []string
	for _, p := range probs {
		where = append(where, p.Where)
		if p.Fix == "" || p.Error == "" || p.File == "" {
			t.Errorf("problem without error/fix/file: %+v", p)
		}
	}
	joined := strings.Join(where, " | ")
	for _, w := range []string{"codex.blocked[0]", "codex.blocked[1]", "codex.sleeping", "codex.idle", "nosuch", "pi"} {
		if !strings.Contains(joined, w) {
			t.Errorf("problems %q lack %s", joined, w)
		}
	}
	if len(probs) != 6 {
		t.Errorf("want 6 problems, got %d: %v", len(probs), probs)
	}
	for _, p := range probs {
		if p.Where == "codex.blocked[0]" && p.Pattern != "(unclosed" {
			t.Errorf("problem should name the pattern: %+v", p)
		}
	}
	// The good pattern next to the bad ones still works.
	rd := tab.Classify("codex", fixture{top: []string{"the gate open now"}}.snapshot(t))
	if rd.State != Blocked || rd.Rule != "rules.json:codex.blocked[2]" {
		t.Fatalf("good pattern lost: %s by %s", rd.State, rd.Rule)
	}
}

func TestRulesJSONNotJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "rules.json", `{ "claude": `)
	tab := Load(dir)
	p := tab.Problems()
	if len(p) != 1 || p[0].Where != "file" || !strings.Contains(p[0].Fix, "top level") {
		t.Fatalf("problems: %v", p)
	}
	// Built-in rules keep working.
	f := fixture{engine: "claude", title: "✳ Claude Code", top: claudeLogo, bottom: claudeBox(claudeManual, "")}
	if rd := tab.Classify("claude", f.snapshot(t)); rd.State != Idle {
		t.Fatalf("built-in rules broken by a bad rules.json: %s", rd.State)
	}
}

func TestEnginesJSONOverride(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "engines.json", `{ "engines": [
  { "name": "claude", "aliases": ["cl"], "agentArgs": ["--permission-mode", "acceptEdits"],
    "rules": [ { "id": "mine.busy", "state": "working", "priority": 5000, "region": "screen", "any": ["BUSY BEE"] },
               { "id": "mine.bad", "state": "working", "priority": 1, "region": "screen", "any": ["("] } ] },
  { "name": "mybot", "binaries": ["mybot"], "bracketedPaste": true,
    "rules": [ { "id": "mybot.idle", "state": "idle", "priority": 800, "region": "bottom:1", "any": ["^mybot> $"] } ] },
  { "aliases": ["nameless"] }
] }`)
	tab := Load(dir)
	probs := tab.Problems()
	if len(probs) != 2 {
		t.Fatalf("want 2 problems (bad rule, nameless entry), got %v", probs)
	}
	cl, ok := tab.Lookup("cl")
	if !ok || cl.Name != "claude" || cl.AgentArgs[1] != "acceptEdits" || !cl.BracketedPaste || cl.Hooks == nil {
		t.Fatalf("claude override: %+v", cl)
	}
	// Embedded rules stay, the user's rule adds.
	f := fixture{engine: "claude", title: "✳ Claude Code", top: claudeLogo, bottom: claudeBox(claudeManual, "")}
	if rd := tab.Classify("claude", f.snapshot(t)); rd.Rule != "claude.idle.prompt" {
		t.Fatalf("embedded rules lost: %s", rd.Rule)
	}
	f.top = []string{"BUSY BEE"}
	if rd := tab.Classify("claude", f.snapshot(t)); rd.Rule != "mine.busy" {
		t.Fatalf("user engine rule: %s", rd.Rule)
	}
	if rd := tab.Classify("/opt/bin/mybot", fixture{top: []string{"mybot> "}}.snapshot(t)); rd.State != Idle {
		t.Fatalf("new engine: %+v", rd)
	}
}

func TestParseState(t *testing.T) {
	for in, want := range map[string]string{"working": "working", "blocked": "blocked", "blocked:menu": "blocked:menu",
		"BLOCKED:Question": "blocked:question", "done": "done", "idle": "idle"} {
		s, k, err := ParseState(in)
		if err != nil || Format(s, k) != want {
			t.Errorf("ParseState(%q) = %s, %v", in, Format(s, k), err)
		}
	}
	for _, bad := range []string{"", "busy", "done:menu", "blocked:", "blocked:nap", "gone"} {
		if _, _, err := ParseState(bad); err == nil {
			t.Errorf("ParseState(%q) accepted", bad)
		}
	}
}
