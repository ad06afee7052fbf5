package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzLoadOverrides feeds Load any engines.json and rules.json. It never fails and must not
// panic: every problem names its file, the place, the error and the fix; the embedded engines stay
// (an override replaces fields, never removes an engine); and classifying a screen with what was
// merged does not panic. Seeds: testdata/fuzz/FuzzLoadOverrides (the embedded engines.json and
// the override files of this package's tests).
func FuzzLoadOverrides(f *testing.F) {
	builtin := Load("").Names()
	snap := fixture{top: []string{"ready for orders", "Do you want to proceed?"}, bottom: []string{"> "}}.snapshot(f)
	f.Fuzz(func(t *testing.T, engines, rules []byte) {
		dir := t.TempDir()
		files := map[string][]byte{"engines.json": engines, "rules.json": rules}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		tab := Load(dir)
		for _, p := range tab.Problems() {
			if base := filepath.Base(p.File); files[base] == nil || p.Where == "" || p.Error == "" || p.Fix == "" {
				t.Fatalf("a problem that does not say where and how to fix it: %+v", p)
			}
		}
		names := tab.Names()
		for _, n := range builtin {
			if !slices.Contains(names, n) {
				t.Fatalf("engine %q is gone after the overrides (have %v)", n, names)
			}
		}
		for _, n := range append(names, "") {
			if rd := tab.Classify(n, snap); !rd.State.Valid() {
				t.Fatalf("%s: classified as %q", n, rd.State)
			}
		}
	})
}

// FuzzHookPayload feeds a tracker of each engine a hook report with any state argument and any
// payload, as `mosh herd report` delivers them. It must not panic; a refused report says why;
// an accepted one leaves a valid state; the payload helpers (TurnStart, FinalMessage) take any
// bytes. Seeds: testdata/fuzz/FuzzHookPayload (real engines' hook payloads from this package's
// tests and shared/facts).
func FuzzHookPayload(f *testing.F) {
	tab := Load("")
	engines := append(tab.Names(), "bash")
	f.Fuzz(func(t *testing.T, engine byte, stateArg string, payload []byte) {
		name := engines[int(engine)%len(engines)]
		tab.TurnStart(name, payload)
		tab.FinalMessage(name, payload)
		var st State
		var kind Kind
		var err error
		if stateArg != "" { // no state: the engine's hook spec maps the payload's event
			st, kind, err = ParseState(stateArg)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("ParseState refused without a word")
			}
			return
		}
		tr := tab.NewTracker(name, nil)
		defer tr.Close()
		fused, err := tr.Report(HookReport{State: st, Kind: kind, Payload: json.RawMessage(payload)})
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("a refused report without a word")
			}
			return
		}
		if !fused.State.Valid() || !fused.Kind.Valid() || fused.Hook == nil {
			t.Fatalf("accepted %q %q: fused %+v", stateArg, payload, fused)
		}
	})
}
