package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
)

// Every member gets MOSH_HERD_BIN, the absolute path of the binary the daemon runs as (here this
// test binary), symlinks resolved; a caller's own value does not reach the member.
func TestMembersGetTheDaemonsBinary(t *testing.T) {
	h := newParallelHerd(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "MOSH_HERD_BIN=/nowhere/mosh"}
	m, err := h.c.Run(h.ctx, herd.RunParams{Name: "bin", Env: env, Argv: []string{"/bin/sh", "-c", `echo "bin=[$MOSH_HERD_BIN]"; exit 0`}})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(m.Name, herd.StateGone)
	if s := h.read("bin"); !strings.Contains(s, "bin=["+exe+"]") {
		t.Fatalf("the member's MOSH_HERD_BIN: %q, want %s", s, exe)
	}
}

// The hooks `mosh herd hooks install` writes work with no mosh on the member's PATH (the Quick
// start runs ./bin/mosh): the hook command runs "${MOSH_HERD_BIN:-mosh}", and the daemon set it.
// Here the fake Claude Code runs the real hook command and the daemon's binary (this test binary,
// which answers `herd report` as mosh does) reports: the task ends on the engine's own Stop.
func TestInstalledHookCommandReportsWithoutMoshOnPath(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(60000)) // a hook that never came would show as a screen artifact, not a pass
	env := fakeEnv(t, "claude", false)
	var settings string
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "FAKEENGINE_SETTINGS="); ok {
			settings = v
		}
		if strings.HasPrefix(kv, "PATH=") {
			// The fake engine's directory and the system's, no mosh anywhere.
			dir := strings.Split(strings.TrimPrefix(kv, "PATH="), ":")[0]
			env[i] = "PATH=" + dir + ":/usr/bin:/bin"
		}
	}
	groups := map[string]any{}
	for _, ev := range []string{"UserPromptSubmit", "Stop"} {
		report := "working"
		if ev == "Stop" {
			report = "done"
		}
		groups[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": state.HookCommand(report)}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": groups})
	if err := os.WriteFile(settings, b, 0o600); err != nil {
		t.Fatal(err)
	}
	startFake(t, h, "nopath", env)
	task := promptAndAwaitEnd(t, h, "nopath", "answer me")
	if task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text != "answer me" {
		t.Fatalf("the task: %+v, artifact %+v; want done on the engine's Stop hook", task, task.Artifact)
	}
}
