package daemon

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// An engine's failed turn (Claude Code's StopFailure after an API error) ends its task failed,
// with the error as the artifact: prompt --wait says so (exit 3), the member itself reads done
// (its turn is over and it takes the next prompt), and the next turn ends done as usual.
func TestStopFailureEndsTheTaskFailed(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(60000)) // the hook, not the grace, ends the task
	startFake(t, h, "sf", fakeEnv(t, "claude", true))
	r, err := h.c.Prompt(h.ctx, "sf", "fail please", herd.PromptOptions{Wait: true, Timeout: testTimeout})
	wantCode(t, err, exitcode.Gone)
	if r.Outcome != herd.OutcomeEnded || r.TaskState != "failed" {
		t.Fatalf("prompt --wait on a failed turn: %+v %v", r, err)
	}
	task, err := h.c.Task(h.ctx, r.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.State != "failed" || task.Artifact == nil || task.Artifact.Source != "error" ||
		!strings.Contains(task.Artifact.Text, "API Error: 400") {
		t.Fatalf("the failed turn's task: %+v, artifact %+v; want failed with the engine's error", task, task.Artifact)
	}
	last := task.Transitions[len(task.Transitions)-1]
	if last.State != "failed" || last.Authority != herd.AuthorityHook || !strings.Contains(last.Note, "StopFailure") {
		t.Fatalf("the task's end %+v: want failed by hook, naming the engine's event", last)
	}
	if row := h.member("sf"); row.State != herd.StateDone {
		t.Fatalf("the member after a failed turn: %+v; want done (its turn is over)", row)
	}
	// A wait that starts now hears that the member's last turn failed: ended (exit 3), not a
	// done that never came of the prompt.
	w, err := h.c.Wait(h.ctx, []string{"sf"}, herd.WaitOptions{States: []string{"done"}, Timeout: testTimeout})
	wantCode(t, err, exitcode.Gone)
	if w == nil || w.Outcome != herd.OutcomeEnded {
		t.Fatalf("wait after the failed turn: %+v %v", w, err)
	}
	// The next turn is a turn like any other.
	task = promptAndAwaitEnd(t, h, "sf", "say hello")
	if task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text != "say hello" {
		t.Fatalf("the turn after the failed one: %+v, artifact %+v", task, task.Artifact)
	}
	// wait on the member does not see the old failure.
	w, err = h.c.Wait(h.ctx, []string{"sf"}, herd.WaitOptions{States: []string{"done"}, Timeout: testTimeout})
	if err != nil || w.Outcome != herd.OutcomeMatched {
		t.Fatalf("wait after the good turn: %+v %v", w, err)
	}
}
