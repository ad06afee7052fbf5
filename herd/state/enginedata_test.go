package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd/screen"
)

// loadWithEngines builds a table with herdDir/engines.json = doc.
func loadWithEngines(t *testing.T, doc string) *Table {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "engines.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tab := Load(dir)
	if p := tab.Problems(); len(p) > 0 {
		t.Fatalf("engines.json problems: %v", p)
	}
	return tab
}

// The blocked sub-kind a payload names comes from the hook spec's kinds: Claude's
// AskUserQuestion and elicitation_dialog are questions, PermissionRequest and permission_prompt
// permissions (as before the table had them), and a new entry is all it takes to name another.
func TestHookKindsComeFromTheTable(t *testing.T) {
	payload := func(ev, tool, notif string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"hook_event_name": ev, "tool_name": tool, "notification_type": notif})
		return b
	}
	for _, c := range []struct {
		engine, ev, tool, notif string
		want                    Kind
	}{
		{"claude", "PermissionRequest", "AskUserQuestion", "", Question},
		{"claude", "PermissionRequest", "Bash", "", Permission},
		{"claude", "Notification", "", "elicitation_dialog", Question},
		{"claude", "Notification", "", "permission_prompt", Permission},
		{"codex", "PermissionRequest", "shell", "", Permission},
		// A wrapper script's member reads the payload with any engine's spec.
		{"mywrapper", "PermissionRequest", "AskUserQuestion", "", Question},
	} {
		tr := Load("").NewTracker(c.engine, nil)
		f, err := tr.Report(HookReport{State: Blocked, Payload: payload(c.ev, c.tool, c.notif)})
		tr.Close()
		if err != nil || f.Kind != c.want {
			t.Errorf("%s %s/%s%s: kind %q (err %v), want %q", c.engine, c.ev, c.tool, c.notif, f.Kind, err, c.want)
		}
	}
	tab := loadWithEngines(t, `{"engines":[{"name":"codex","hooks":{"format":"codex-hooks","file":"~/.codex/hooks.json",
		"events":[{"event":"PermissionRequest","state":"blocked"}],
		"kinds":[{"event":"PermissionRequest","tool":"request_user_input","kind":"question"}]}}]}`)
	tr := tab.NewTracker("codex", nil)
	defer tr.Close()
	f, err := tr.Report(HookReport{Payload: payload("PermissionRequest", "request_user_input", "")})
	if err != nil || f.State != Blocked || f.Kind != Question {
		t.Fatalf("a kinds entry in engines.json: got %s (err %v), want blocked:question", Format(f.State, f.Kind), err)
	}
}

// The final message's payload keys are the hook specs' finalMessage lists.
func TestFinalMessageKeysComeFromTheTable(t *testing.T) {
	tab := Load("")
	for payload, want := range map[string]string{
		`{"hook_event_name":"Stop","last_assistant_message":"claude says"}`:      "claude says",
		`{"type":"agent-turn-complete","last-assistant-message":"codex notify"}`: "codex notify",
		`{"hook_event_name":"AfterAgent","prompt_response":"gemini says"}`:       "gemini says",
		`{"last_assistant_message":"  ","prompt_response":"second"}`:             "second",
		`{"answer":"not a known key"}`:                                           "",
		`not json`:                                                               "",
	} {
		if got := tab.FinalMessage("", []byte(payload)); got != want {
			t.Errorf("FinalMessage(%s) = %q, want %q", payload, got, want)
		}
	}
	tab = loadWithEngines(t, `{"engines":[{"name":"newagent","binaries":["newagent"],
		"hooks":{"format":"claude-settings","file":"~/.newagent/settings.json","events":[],"finalMessage":["answer"]}}]}`)
	if got := tab.FinalMessage("newagent", []byte(`{"answer":"from the table"}`)); got != "from the table" {
		t.Fatalf("a finalMessage key in engines.json: got %q", got)
	}
}

// The interrupt keys and grace are table data; an engine without an entry gets the default.
func TestInterruptKeysComeFromTheTable(t *testing.T) {
	tab := Load("")
	for _, name := range []string{"claude", "codex", "shell"} {
		e, _ := tab.Lookup(name)
		in := e.InterruptKeys()
		if strings.Join(in.Keys, " ") != "Escape" || strings.Join(in.ThenKeys, " ") != "C-c" || in.GraceMs != 1500 {
			t.Errorf("%s interrupt = %+v, want Escape then C-c after 1500 ms", name, in)
		}
	}
	var unknown *Engine
	if in := unknown.InterruptKeys(); in.Keys[0] != "Escape" {
		t.Errorf("unknown engine's interrupt = %+v", in)
	}
	tab = loadWithEngines(t, `{"engines":[{"name":"opencode","interrupt":{"keys":["Escape","Escape"]}}]}`)
	e, _ := tab.Lookup("opencode")
	if in := e.InterruptKeys(); strings.Join(in.Keys, " ") != "Escape Escape" || len(in.ThenKeys) != 0 || in.GraceMs != 1500 {
		t.Fatalf("engines.json interrupt = %+v, want two Escapes, no Ctrl-C, default grace", in)
	}
}

// The prompt box's shape is table data: a rule 5 lines above the prompt bounds the box only for
// an engine whose promptBox reaches that far.
func TestPromptBoxShapeComesFromTheTable(t *testing.T) {
	rule := strings.Repeat("─", 40)
	s := screen.New(60, 12, screen.Options{})
	defer s.Close()
	s.Write([]byte("\x1b[H\x1b[2Jwork\r\n" + rule + "\r\nnote 1\r\nnote 2\r\nnote 3\r\nnote 4\r\n❯ hi\r\n" + rule + "\r\n"))
	snap := s.Snapshot()
	prompt := regexp.MustCompile(`^\s*❯(?:\s|$)`)
	if l := newLayout(snap, prompt, DefaultPromptBox); l.boxTop != 6 {
		t.Fatalf("default shape: box top %d, want 6 (the prompt line: the rule above is too far)", l.boxTop)
	}
	tab := loadWithEngines(t, `{"engines":[{"name":"claude","promptBox":{"ruleAbove":6}}]}`)
	e, _ := tab.Lookup("claude")
	if l := newLayout(snap, e.prompt, e.promptBox()); l.boxTop != 2 || l.boxEnd != 7 {
		t.Fatalf("ruleAbove 6: box %d..%d, want 2..7", l.boxTop, l.boxEnd)
	}
}

// Every entry verified against a real engine names that version; the ones run by
// conformance/engines carry install.sh's pins.
func TestVerifiedVersions(t *testing.T) {
	tab := Load("")
	for name, want := range map[string]string{"claude": "2.1.332", "codex": "0.171.0", "opencode": "1.18.33", "pi": "0.73.1"} {
		e, _ := tab.Lookup(name)
		if e.VerifiedVersion != want {
			t.Errorf("%s verifiedVersion %q, want %q", name, e.VerifiedVersion, want)
		}
	}
	pins, err := os.ReadFile(filepath.Join("..", "..", "conformance", "engines", "install.sh"))
	if err != nil {
		t.Skip("no install.sh:", err)
	}
	for _, name := range []string{"claude", "codex", "opencode", "pi"} {
		e, _ := tab.Lookup(name)
		if !strings.Contains(string(pins), ":-"+e.VerifiedVersion+"}") {
			t.Errorf("%s verifiedVersion %s is not install.sh's pin", name, e.VerifiedVersion)
		}
	}
}

// explain's reason codes name what decided, and ruleSource whose rule it was.
func TestReasonCodesAndRuleSource(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.json"), []byte(`{"claude":{"blocked":["custom gate \\d+"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "engines.json"), []byte(`{"engines":[{"name":"claude",
		"rules":[{"id":"mine.working","state":"working","priority":1200,"region":"screen","any":["my own spinner"]}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tab := Load(dir)
	if p := tab.Problems(); len(p) > 0 {
		t.Fatal(p)
	}
	tr := tab.NewTracker("claude", nil)
	defer tr.Close()
	check := func(step string, f Fused, code, source string) {
		t.Helper()
		if f.ReasonCode != code || f.RuleSource != source {
			t.Errorf("%s: reasonCode %q ruleSource %q, want %q %q (%s)", step, f.ReasonCode, f.RuleSource, code, source, f.Reason)
		}
	}
	check("start", tr.Current(), ReasonScreenUnread, "")
	idle := fixture{engine: "claude", title: "✳ Claude Code", top: claudeLogo, bottom: claudeBox(claudeManual, "")}
	check("embedded rule", tr.Observe(idle.snapshot(t)), ReasonScreenRule, SourceEmbedded)
	f := idle
	f.top = append(append([]string{}, claudeLogo...), "Custom Gate 42 reached")
	check("rules.json rule", tr.Observe(f.snapshot(t)), ReasonScreenRule, SourceRulesJSON)
	f.top = append(append([]string{}, claudeLogo...), "my own spinner")
	check("engines.json rule", tr.Observe(f.snapshot(t)), ReasonScreenRule, SourceEnginesJSON)
	check("nothing matched", tr.Observe(fixture{engine: "claude", top: []string{"plain words"}}.snapshot(t)), ReasonScreenNone, "")
	if _, err := tr.Report(HookReport{State: Working}); err != nil {
		t.Fatal(err)
	}
	check("hook", tr.Current(), ReasonHookReport, "")
	check("prompt", tr.Prompted(time.Time{}), ReasonPromptClaim, "")
	check("exit", tr.Exited(1), ReasonRuntimeExit, "")
}
