package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
)

// installHooksFile writes rel under home holding the herd's hook command (so the member's
// engine counts as having the herd's hooks installed) and returns home.
func installHooksFile(t *testing.T, rel string) string {
	t.Helper()
	home := t.TempDir()
	p := filepath.Join(home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"` + strings.ReplaceAll(state.HookCommand("done"), `"`, `\"`) + `"}]}]}}`
	if err := os.WriteFile(p, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// Doctor's silent-hooks check names the causes it can see: an engine older than the engines
// table's minimum, Codex hooks that were never trusted.
func TestSilentHooksNameTheirCause(t *testing.T) {
	files := map[string]string{"engines.json": `{"engines": [{"name": "claude", "hookGraceMs": 300, "minVersion": "99.1.0"},
		{"name": "codex", "hookGraceMs": 300}]}`}
	h := newParallelHerdWith(t, files)

	// Claude Code 2.1.332 (the fake's --version) under a table that wants 99.1.0.
	home := installHooksFile(t, ".claude/settings.json")
	startFake(t, h, "old", append(fakeEnv(t, "claude", false), "HOME="+home))
	promptAndAwaitEnd(t, h, "old", "hello")

	// Codex with the herd's hooks in ~/.codex/hooks.json but no trust recorded in config.toml.
	home = installHooksFile(t, ".codex/hooks.json")
	env := append(fakeEnv(t, "codex", false), "HOME="+home)
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: "cx", Engine: "codex", Env: env, Argv: []string{"claude"}}); err != nil {
		t.Fatal(err)
	}
	h.wait("cx", herd.StateIdle)
	promptAndAwaitEnd(t, h, "cx", "hello")

	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasCheck(dr, "silent hooks", "warn", "claude 2.1.332 is older than 99.1.0") {
		t.Errorf("doctor does not name the old engine: %+v", dr.Checks)
	}
	if !hasCheck(dr, "silent hooks", "warn", "Codex has not trusted the herd's hooks") {
		t.Errorf("doctor does not name Codex's missing trust: %+v", dr.Checks)
	}
}

// A daemon whose own binary is gone (moved or deleted since it started) hands members a
// MOSH_HERD_BIN that runs nothing: with no mosh on the member's PATH either, that is the cause.
func TestSilentHooksBinaryNotResolvable(t *testing.T) {
	d := &daemon{self: filepath.Join(t.TempDir(), "mosh")}
	m := &member{name: "m", engine: "claude", env: []string{"PATH=" + t.TempDir()}}
	causes := d.silentCauses(m, nil)
	if len(causes) == 0 || !strings.Contains(causes[0], "MOSH_HERD_BIN="+d.self+" is gone") || !strings.Contains(causes[0], "no mosh on its PATH") {
		t.Fatalf("causes %q", causes)
	}
	d.self = ""
	if causes = d.silentCauses(m, nil); len(causes) == 0 || !strings.Contains(causes[0], "no MOSH_HERD_BIN") {
		t.Fatalf("causes without a known binary %q", causes)
	}
}
