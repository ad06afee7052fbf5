package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// startFakeHooked starts the fake engine in style (its hooks report to this herd) as member name
// with extra environment, and waits for idle as `herd start` then `wait --state idle` does.
func (h *herdT) startFakeHooked(t *testing.T, style, name string, extraEnv ...string) {
	t.Helper()
	env := append(fakeEnv(t, style, true), extraEnv...)
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: name, Engine: style, Env: env, Argv: []string{"claude"}}); err != nil {
		t.Fatal(err)
	}
	h.wait(name, herd.StateIdle)
}

// promptAnswered types text with --wait and requires the task to end with the engine's own answer
// to it (the Stop hook's final message): a lost prompt ends its task idle with no hook answer.
func (h *herdT) promptAnswered(t *testing.T, name, text string) {
	t.Helper()
	sub, err := h.c.Subscribe(h.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r, err := h.c.Prompt(h.ctx, name, text, herd.PromptOptions{Wait: true, States: []string{"done", "idle", "blocked"}, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("prompt %q: %+v %v", text, r, err)
	}
	// The turn is over when the engine's Stop hook says so (the screen's done may come first):
	// the next prompt must not meet this turn's late hook (a fault of its own, not this test's).
	deadline := time.After(testTimeout)
	for done := false; !done; {
		select {
		case ev := <-sub.Events():
			done = ev.State == herd.StateDone && ev.Authority == herd.AuthorityHook
		case <-deadline:
			t.Fatalf("prompt %q: the engine's Stop hook never said done\n%s", text, h.read(name))
		}
	}
	task, err := h.c.Task(h.ctx, r.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.Artifact == nil || task.Artifact.Source != "hook" || !strings.Contains(task.Artifact.Text, text) {
		t.Fatalf("prompt %q ended %s (wait outcome %s/%s) with artifact %+v: want the engine's answer from its Stop hook\n%s",
			text, task.State, r.Outcome, r.State, task.Artifact, h.read(name))
	}
}

// A fresh member reads idle only once its engine takes a prompt. The fake engines draw the real
// start-up (FAKEENGINE_START): Claude a blank screen under its "✳" title, then its box before
// the "? for shortcuts" hint, losing keys meanwhile; Codex a "loading" header and a bare hint,
// holding a submitted prompt until start-up ends. A prompt typed after `wait --state idle` must
// be answered.
func TestFreshMemberIsIdleOnlyWhenItTakesAPrompt(t *testing.T) {
	for _, style := range []string{"claude", "codex"} {
		t.Run(style, func(t *testing.T) {
			h := newParallelHerd(t)
			h.startFakeHooked(t, style, "fresh", "FAKEENGINE_START=3s")
			h.promptAnswered(t, "fresh", "say first prompt")
		})
	}
}

// An Enter the engine loses leaves the prompt in the input box with the member at rest: the herd
// sees the text still there once the screen settled, with no hook since, and sends the engine's
// resubmit keys once more (engines table). FAKEENGINE_DROP_ENTER=1 loses the first one; the
// prompt then runs once. (A second prompt right after can meet the first turn's late hook or
// screen, the lead's open fault in tasks_record.go; not what this test proves.)
func TestLostEnterIsSentAgain(t *testing.T) {
	h := newParallelHerd(t)
	h.startFakeHooked(t, "claude", "lossy", "FAKEENGINE_DROP_ENTER=1")
	h.promptAnswered(t, "lossy", "say once")
	if screen := h.read("lossy"); strings.Count(screen, "❯ say once") != 1 {
		t.Fatalf("the prompt should have run once:\n%s", screen)
	}
}

// A loaded engine draws a pasted prompt late and the Enter right behind it meets an empty box: the
// text shows up in the box only after the screen was already at rest once. The watch keeps
// looking until the text is there, then re-sends the Enter (FAKEENGINE_PASTE_DELAY, longer than
// the entry's settle time).
func TestLateDrawnPromptIsSubmitted(t *testing.T) {
	h := newParallelHerd(t)
	h.startFakeHooked(t, "claude", "slow", "FAKEENGINE_PASTE_DELAY=900ms")
	h.promptAnswered(t, "slow", "say late")
}
