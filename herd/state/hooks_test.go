package state

import (
	"strings"
	"testing"
)

// The trusted hashes Codex 0.171.0 reported (`codex app-server`, hooks/list, currentHash) for
// the hooks `mosh herd hooks install codex` writes. If a command or the timeout changes, these
// change with it: re-read them from a real Codex before updating the test.
var codex0171Hashes = map[string]string{
	"PermissionRequest": "sha256:0b2b289ab433d5847e6220d25b3c4d03d77b60714677657437687fdadb410bb9",
	"PostToolUse":       "sha256:f9adc9f1ec89bf681359773fef23f8314458757818a6e6827061e4773102cd28",
	"SessionEnd":        "sha256:f9576ff1309d563f7769a4410e263045e5b953c839a7cc1c54006fa95d70602b",
	"UserPromptSubmit":  "sha256:ed378958dee422f2f197d27617058255990c18f2728a8092415b8762fc0ddb7f",
	"Stop":              "sha256:0c3de051f814981818ae3f0e2677bda8767f68061e7c569e0bcf10c438743004",
}

func TestCodexTrustHashMatchesCodex(t *testing.T) {
	e, ok := Load("").Lookup("codex")
	if !ok {
		t.Fatal("no codex engine")
	}
	p, err := e.HookPlan()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != len(codex0171Hashes) {
		t.Fatalf("%d groups, %d known hashes", len(p.Groups), len(codex0171Hashes))
	}
	for _, g := range p.Groups {
		if want := codex0171Hashes[g.Event]; g.TrustHash != want {
			t.Errorf("%s: %s, Codex says %s", g.Event, g.TrustHash, want)
		}
	}
}

func TestHookPlansAreWellFormed(t *testing.T) {
	plans, errs := Load("").HookPlans()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	names := map[string]bool{}
	for _, p := range plans {
		names[p.Engine] = true
		if p.Marker != HookMarker || len(p.Groups) == 0 {
			t.Errorf("%s: %+v", p.Engine, p)
		}
		for _, g := range p.Groups {
			if !strings.Contains(g.Command, HookMarker+" "+g.Report+" ") {
				t.Errorf("%s %s: command %q does not report %s", p.Engine, g.Event, g.Command, g.Report)
			}
		}
		switch p.Spec.Layout {
		case LayoutFile:
			if !strings.HasPrefix(p.Text, FileMarker) || strings.Contains(p.Text, "console.") {
				t.Errorf("%s: file text", p.Engine)
			}
		case LayoutJSONHooks:
			if p.Text != "" || p.Spec.Timeout <= 0 {
				t.Errorf("%s: %+v", p.Engine, p.Spec)
			}
		default:
			t.Errorf("%s: layout %q", p.Engine, p.Spec.Layout)
		}
	}
	for _, want := range []string{"claude", "codex", "opencode", "pi", "gemini"} {
		if !names[want] {
			t.Errorf("no hook plan for %s", want)
		}
	}
}

func TestBrokenUserHookSpecIsReported(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "engines.json", `{"engines":[{"name":"claude","hooks":{"format":"nope","file":"~/x.json","events":[{"event":"Stop","state":"done"}]}},
		{"name":"codex","hooks":{"format":"codex-hooks","file":"~/y.json","events":[{"event":"Stop","state":"done"},{"event":"Stop","state":"idle"}]}}]}`)
	plans, errs := Load(dir).HookPlans()
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "unknown hook format") || !strings.Contains(errs[1].Error(), "listed twice") {
		t.Fatalf("errors: %v", errs)
	}
	for _, p := range plans {
		if p.Engine == "claude" || p.Engine == "codex" {
			t.Errorf("a broken spec still planned: %s", p.Engine)
		}
	}
}
