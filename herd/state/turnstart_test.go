package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Each engine with hooks names the event it fires when it takes a prompt up; a tool hook or a
// done is not one, nor a payload without an event name.
func TestTurnStartEvents(t *testing.T) {
	tab := Load("")
	for _, c := range []struct {
		engine, payload string
		want            bool
	}{
		{"claude", `{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, true},
		{"claude", `{"hook_event_name":"PostToolUse","tool_name":"Bash"}`, false},
		{"claude", `{"hook_event_name":"Stop"}`, false},
		{"codex", `{"hook_event_name":"UserPromptSubmit"}`, true},
		{"opencode", `{"hook_event_name":"session.status","properties":{"status":{"type":"busy"}}}`, true},
		{"opencode", `{"hook_event_name":"session.idle"}`, false},
		{"pi", `{"hook_event_name":"agent_start"}`, true},
		{"pi", `{"hook_event_name":"agent_end"}`, false},
		{"gemini", `{"hook_event_name":"BeforeAgent"}`, true},
		{"gemini", `{"hook_event_name":"AfterTool"}`, false},
		{"", `{"hook_event_name":"agent_start"}`, true},
		{"claude", `{}`, false},
		{"claude", `not json`, false},
	} {
		if got := tab.TurnStart(c.engine, []byte(c.payload)); got != c.want {
			t.Errorf("TurnStart(%s, %s) = %v, want %v", c.engine, c.payload, got, c.want)
		}
	}
}

// The herd's hooks count as installed when the engine's hook file holds a herd hook command
// (quotes escaped, as in a JSON settings file) or is a herd plugin file; anything else is not.
func TestHooksInstalled(t *testing.T) {
	tab := Load("")
	claude, _ := tab.Lookup("claude")
	pi, _ := tab.Lookup("pi")
	home := t.TempDir()
	if claude.HooksInstalled(home) || pi.HooksInstalled(home) || claude.HooksInstalled("") {
		t.Fatal("no files, yet installed")
	}
	write := func(rel, text string) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".claude/settings.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"other-tool notify"}]}]}}`)
	if claude.HooksInstalled(home) {
		t.Fatal("someone else's hook counted as the herd's")
	}
	plan, err := claude.HookPlan()
	if err != nil {
		t.Fatal(err)
	}
	// As the installer writes it: the plan's commands in a JSON settings file.
	groups := map[string]any{}
	for _, g := range plan.Groups {
		groups[g.Event] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": g.Command}}}}
	}
	out, _ := json.Marshal(map[string]any{"hooks": groups})
	write(".claude/settings.json", string(out))
	if !claude.HooksInstalled(home) {
		t.Fatalf("the installer's own settings do not count as installed:\n%s", out)
	}
	pp, err := pi.HookPlan()
	if err != nil {
		t.Fatal(err)
	}
	write(".pi/agent/extensions/mosh-herd.ts", pp.Text)
	if !pi.HooksInstalled(home) {
		t.Fatal("the herd's pi extension does not count as installed")
	}
}
