package state

import (
	"encoding/json"
	"strings"
	"testing"
)

// Gemini CLI and aider are engines added as engines-table entries only (engines.json: launch
// arguments, screen rules, Gemini's hook events and final-message key) with no code of their
// own. These fixtures are drawn after the engines' documented screens (Gemini CLI's bordered
// input box and confirmation dialogs, aider's "> " prompt and (Y)es/(N)o questions), not captured
// from a run: facts/engines.md lists Gemini as docs-only. They prove the entries alone classify
// them, and that the shared fallback rules alone would not.
var newEngineFixtures = []fixture{
	{name: "gemini idle", engine: "gemini", top: []string{"", " ███ GEMINI", "", "Tips for getting started:"},
		bottom: []string{
			"╭──────────────────────────────────────────────────────────────────────────────╮",
			"│ >   Type your message or @path/to/file                                       │",
			"╰──────────────────────────────────────────────────────────────────────────────╯",
			"~/proj (main*)                 no sandbox (see /docs)          gemini-2.5-pro (100% context left)"},
		state: Idle, rule: "gemini.idle.prompt"},
	{name: "gemini working", engine: "gemini", top: []string{"", " ███ GEMINI", "", "> write a haiku"},
		bottom: []string{
			"⠏ Thinking about the haiku (esc to cancel, 3s)",
			"",
			"╭──────────────────────────────────────────────────────────────────────────────╮",
			"│ >   Type your message or @path/to/file                                       │",
			"╰──────────────────────────────────────────────────────────────────────────────╯",
			"~/proj (main*)                 no sandbox (see /docs)          gemini-2.5-pro (99% context left)"},
		state: Working, rule: "gemini.working.cancel"},
	{name: "gemini shell permission", engine: "gemini", top: []string{"", " ███ GEMINI", "", "> list the files"},
		bottom: []string{
			"╭──────────────────────────────────────────────────────────────────────────────╮",
			"│ ?  Shell ls -la                                                              │",
			"│                                                                              │",
			"│ Allow execution of: 'ls'?                                                    │",
			"│                                                                              │",
			"│ ● 1. Yes, allow once                                                         │",
			"│   2. Yes, allow always ...                                                   │",
			"│   3. No, suggest changes (esc)                                               │",
			"╰──────────────────────────────────────────────────────────────────────────────╯",
			"⠏ Waiting for user confirmation..."},
		state: Blocked, kind: Permission, rule: "gemini.blocked.dialog"},
	{name: "gemini edit permission", engine: "gemini", top: []string{"", " ███ GEMINI", "", "> fix the typo"},
		bottom: []string{
			"╭──────────────────────────────────────────────────────────────────────────────╮",
			"│ ?  Edit README.md                                                            │",
			"│ Apply this change?                                                           │",
			"│ ● 1. Yes, allow once                                                         │",
			"│   2. No, suggest changes (esc)                                               │",
			"╰──────────────────────────────────────────────────────────────────────────────╯"},
		state: Blocked, kind: Permission, rule: "gemini.blocked.dialog"},
	{name: "aider prompt", engine: "aider", top: []string{"Aider v0.86.1", "Main model: gpt-4o with diff edit format", "Git repo: .git with 12 files", "Repo-map: using 4096 tokens"},
		bottom: []string{"", "> "},
		state:  Idle, rule: "aider.idle.prompt"},
	{name: "aider architect prompt", engine: "aider", top: []string{"Aider v0.86.1"},
		bottom: []string{"Tokens: 2.1k sent, 312 received.", "", "architect> "},
		state:  Idle, rule: "aider.idle.prompt"},
	{name: "aider add file question", engine: "aider", top: []string{"Aider v0.86.1", "> fix the bug in util.py"},
		bottom: []string{"", "util.py", "Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: "},
		state:  Blocked, kind: Permission, rule: "aider.blocked.yes_no"},
}

func TestNewEnginesClassifyTheirFixtures(t *testing.T) {
	tab := Load("")
	for _, f := range newEngineFixtures {
		t.Run(f.name, func(t *testing.T) {
			snap := f.snapshot(t)
			rd := tab.Classify(f.engine, snap)
			if rd.State != f.state || rd.Kind != f.kind || rd.Rule != f.rule || rd.Source != SourceEmbedded {
				t.Fatalf("got %s by %s (%s, %s: %q), want %s by %s\n%s", Format(rd.State, rd.Kind), rd.Rule, rd.Source, rd.Region,
					rd.Evidence, Format(f.state, f.kind), f.rule, snap.Text())
			}
		})
	}
	// Without its entry (an engine the table does not know) the shared rules read most of them
	// wrong: the entry is what makes them right.
	wrong := 0
	for _, f := range newEngineFixtures {
		if rd := tab.Classify("no-such-engine", f.snapshot(t)); rd.State != f.state || rd.Kind != f.kind {
			wrong++
		}
	}
	if wrong == 0 {
		t.Fatalf("the shared rules alone read every fixture right: the fixtures do not exercise the entries")
	}
}

// Gemini's hooks are table data too: its documented events map to states and AfterAgent's
// prompt_response is the task's final message.
func TestGeminiHooksFromTheTable(t *testing.T) {
	tab := Load("")
	for _, c := range []struct {
		payload string
		want    string
	}{
		{`{"hook_event_name":"BeforeAgent","prompt":"hi"}`, "working"},
		{`{"hook_event_name":"Notification","notification_type":"ToolPermission","message":"run ls?"}`, "blocked:permission"},
		{`{"hook_event_name":"AfterTool","tool_name":"run_shell_command"}`, "working"},
		{`{"hook_event_name":"AfterAgent","prompt_response":"done it"}`, "done"},
	} {
		tr := tab.NewTracker("gemini", nil)
		f, err := tr.Report(HookReport{Payload: json.RawMessage(c.payload)})
		tr.Close()
		if err != nil || Format(f.State, f.Kind) != c.want {
			t.Errorf("%s: %s (err %v), want %s", c.payload, Format(f.State, f.Kind), err, c.want)
		}
	}
	if got := tab.FinalMessage("gemini", []byte(`{"hook_event_name":"AfterAgent","prompt_response":"done it"}`)); got != "done it" {
		t.Errorf("gemini final message %q", got)
	}
}

// The gemini entry says what it rests on: no verifiedVersion (docs only, never run), and the
// oldest Gemini CLI its hooks work with (herdr's manifests carry the same pair).
func TestGeminiEntryVersions(t *testing.T) {
	e, ok := Load("").Lookup("gemini")
	if !ok {
		t.Fatal("no gemini entry")
	}
	if e.VerifiedVersion != "" || e.MinVersion != "0.26.0" || e.Hooks == nil || !strings.Contains(e.Hooks.Note, "Docs only") {
		t.Fatalf("gemini verifiedVersion %q minVersion %q note %q", e.VerifiedVersion, e.MinVersion, e.Hooks.Note)
	}
}
