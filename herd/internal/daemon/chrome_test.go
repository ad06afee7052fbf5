package daemon

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// A screen artifact is what the turn printed, never the engine's chrome (the engines table's
// chrome regions: Claude's input box between its rules and the footer under it). A prompt queued
// while the member works has a baseline with the working footer, so the idle footer and box
// differ from it and used to end up in the artifact.
func TestScreenArtifactLeavesTheChromeOut(t *testing.T) {
	h := newParallelHerd(t)
	startFake(t, h, "ch", append(fakeEnv(t, "claude", false), "FAKEENGINE_SLOW=1s"))
	sub, err := h.c.Subscribe(h.ctx, "ch")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := h.c.Prompt(h.ctx, "ch", "tell a slow story", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wait("ch", herd.StateWorking)
	pr, err := h.c.Prompt(h.ctx, "ch", "say queued", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task := awaitTaskEnd(t, h, sub, pr.Task)
	if task.Artifact == nil || task.Artifact.Source != "screen" || !strings.Contains(task.Artifact.Text, "say queued") {
		t.Fatalf("the queued task: %+v, artifact %+v", task, task.Artifact)
	}
	for _, chrome := range []string{"? for shortcuts", "manual mode", "esc to interrupt", "────"} {
		if strings.Contains(task.Artifact.Text, chrome) {
			t.Errorf("the screen artifact carries the engine's chrome %q:\n%s", chrome, task.Artifact.Text)
		}
	}
}
