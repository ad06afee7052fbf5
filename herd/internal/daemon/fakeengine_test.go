package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

var (
	fakeBin string
	fakeErr error
)

// buildFakeEngine compiles herd/fakeengine (helper state's Claude/Codex look-alike); TestMain
// calls it once.
func buildFakeEngine() (string, error) {
	dir, err := os.MkdirTemp("", "fakeengine")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "fakeengine")
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/mosh-dev/mosh/herd/fakeengine").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./herd/fakeengine: %v\n%s", err, out)
	}
	return bin, nil
}

// fakeEnv puts the fake engine on PATH as "claude" and points its hooks at this test binary
// (acting as `mosh herd report`).
func fakeEnv(t *testing.T, style string, hooks bool) []string {
	t.Helper()
	if fakeErr != nil {
		t.Fatal(fakeErr)
	}
	bin := fakeBin
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "claude")); err != nil {
		t.Fatal(err)
	}
	// A private HOME: the member never sees the test process's (nor the user's).
	env := append(homeEnv(dir), "PATH="+dir+":"+os.Getenv("PATH"), "FAKEENGINE_STYLE="+style,
		"FAKEENGINE_TURN=200ms", "FAKEENGINE_TICK=50ms", "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0")
	settings := filepath.Join(dir, "settings.json")
	groups := map[string]any{}
	if hooks {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range []string{"UserPromptSubmit", "PermissionRequest", "PostToolUse", "Stop", "StopFailure", "Notification"} {
			groups[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
				"command": "MOSH_HERD_TEST_HOOK=1 '" + exe + "'"}}}}
		}
	}
	b, _ := json.Marshal(map[string]any{"hooks": groups})
	if err := os.WriteFile(settings, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return append(env, "FAKEENGINE_SETTINGS="+settings)
}

func TestFakeClaudeScreenOnly(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", false)
	m, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "cl", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if m.Engine != "claude" {
		t.Fatalf("engine %q", m.Engine)
	}
	h.wait("cl", herd.StateIdle)

	// A normal turn: working, then back at the prompt.
	r, err := h.c.Prompt(h.ctx, "cl", "say hello", herd.PromptOptions{Wait: true, States: []string{"done", "idle"}, Timeout: testTimeout})
	if err != nil || r.Outcome != herd.OutcomeMatched {
		t.Fatalf("turn: %+v %v", r, err)
	}
	if s := h.read("cl"); !strings.Contains(s, "say hello") {
		t.Fatalf("screen after a turn:\n%s", s)
	}

	// A permission dialog: blocked:permission from the screen; prompts are refused until answered.
	r, err = h.c.Prompt(h.ctx, "cl", "perm run the tests", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || r.State != herd.StateBlocked {
		t.Fatalf("perm: %+v %v", r, err)
	}
	row := h.member("cl")
	if row.BlockedOn != "permission" || row.Authority != herd.AuthorityScreen {
		t.Fatalf("blocked row %+v", row)
	}
	_, err = h.c.Prompt(h.ctx, "cl", "more", herd.PromptOptions{Now: true})
	wantCode(t, err, exitcode.Usage)
	ex, err := h.c.Explain(h.ctx, "cl")
	if err != nil || ex.Screen == nil || ex.Screen.Rule == "" || len(ex.Evidence) == 0 || ex.Decided == "" || len(ex.Bottom) == 0 ||
		ex.ReasonCode != "screen.rule" || ex.RuleSource != "embedded" {
		t.Fatalf("explain %+v %v", ex, err)
	}
	if _, err := h.c.SendKeys(h.ctx, "cl", "1"); err != nil {
		t.Fatal(err)
	}
	h.wait("cl", herd.StateDone, herd.StateIdle)

	// exit N: the process exits; runtime authority and the exit code.
	sub, err := h.c.Subscribe(h.ctx, "cl")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := h.c.Prompt(h.ctx, "cl", "exit 3", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	for e := range sub.Events() {
		if e.ExitCode != nil {
			if *e.ExitCode != 3 || e.State != herd.StateGone || e.Authority != herd.AuthorityRuntime {
				t.Fatalf("exit event %+v", e)
			}
			break
		}
	}
	row = h.member("cl")
	if row.Authority != herd.AuthorityRuntime || row.ExitCode == nil || *row.ExitCode != 3 || row.Alive {
		t.Fatalf("after exit: %+v", row)
	}
}

func TestFakeClaudeHooksReachWait(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "hk", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("hk", herd.StateIdle)
	sub, err := h.c.Subscribe(h.ctx, "hk")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r, err := h.c.Prompt(h.ctx, "hk", "perm deploy", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || r.State != herd.StateBlocked {
		t.Fatalf("perm with hooks: %+v %v", r, err)
	}
	if _, err := h.c.SendKeys(h.ctx, "hk", "1"); err != nil {
		t.Fatal(err)
	}
	h.wait("hk", herd.StateDone)
	// The hooks reported: some event came with authority hook.
	sawHook := false
	for !sawHook {
		e := <-sub.Events()
		sawHook = e.Authority == herd.AuthorityHook
	}
	// The Stop hook's last_assistant_message is the task's artifact.
	store, err := openLedger(herd.HerdDir(h.home))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := h.c.Prompt(h.ctx, "hk", "flush the ledger queue", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	task, err := store.Task(r.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.Artifact == nil {
		t.Fatalf("task after Stop: %+v", task)
	}
	if task.Artifact.Source != "hook" || task.Artifact.Text == "" {
		t.Fatalf("artifact should be the Stop hook's last_assistant_message: %+v", task.Artifact)
	}
}

// A multi-line prompt to a Codex-style engine goes in bracketed paste: the newline inside it does
// not submit early, so one turn runs with the whole text.
func TestFakeCodexMultilinePrompt(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "codex", false)
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: "cx", Engine: "codex", Env: env, Argv: []string{"claude"}}); err != nil {
		t.Fatal(err)
	}
	h.wait("cx", herd.StateIdle)
	r, err := h.c.Prompt(h.ctx, "cx", "first line\nsecond line", herd.PromptOptions{Wait: true, States: []string{"done", "idle"}, Timeout: testTimeout})
	if err != nil || r.Outcome != herd.OutcomeMatched {
		t.Fatalf("prompt: %+v %v", r, err)
	}
	// Typed without bracketed paste, the newline would submit "first line" and the rest would
	// run as a second turn ("• second line"). The fake engine draws a turn by its first line.
	screen := h.read("cx")
	if strings.Count(screen, "• first line") != 1 || strings.Contains(screen, "second line") {
		t.Fatalf("the prompt did not arrive as one pasted turn:\n%s", screen)
	}
}
