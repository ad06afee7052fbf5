package state

import (
	"testing"
	"time"
)

// Codex's start-up flaps: 0–75 ms after its first idle frame it puts a spinner in its title for
// up to ~200 ms. The engines table's startupSettleMs debounces the start-up: the member reads idle
// only once the screen has rested that long, so the first idle reported is the settled one (a
// `wait --state idle` never matches the 5 ms idle before the flap).
func TestCodexStartUpFlapIsDebounced(t *testing.T) {
	e, _ := Load("").Lookup("codex")
	if e.StartupSettle() <= 200*time.Millisecond {
		t.Fatalf("codex startupSettleMs %s: the flap lasts up to ~260 ms after the first idle", e.StartupSettle())
	}
	tr, c, rec := newStartingTracker(t, "codex")
	settle := e.StartupSettle()
	tr.Observe(snapOf(t, "codex working")) // loading
	c.add(5 * time.Millisecond)
	tr.Observe(snapOf(t, "codex idle at start")) // the first idle frame
	c.add(40 * time.Millisecond)
	tr.Observe(snapOf(t, "codex working")) // the title spinner
	c.add(150 * time.Millisecond)
	tr.Observe(snapOf(t, "codex idle at start")) // settled
	expectStates(t, rec, "working/screen")
	c.add(settle - time.Millisecond)
	tr.recheck()
	expectStates(t, rec, "working/screen")
	c.add(time.Millisecond)
	tr.recheck()
	expectStates(t, rec, "working/screen", "idle/screen")

	// Once settled, the start-up is over: a later turn's idle is reported at once.
	tr.Observe(snapOf(t, "codex working"))
	c.add(10 * time.Millisecond)
	tr.Observe(snapOf(t, "codex idle at start"))
	expectStates(t, rec, "working/screen", "idle/screen", "working/screen", "idle/screen")
}

// A prompt typed during start-up (Codex holds it in its box) ends the debounce: the prompt claim
// decides from there, as after any prompt. An engine without startupSettleMs is not debounced.
func TestStartUpDebounceEndsAtAPromptAndOnlyForItsEngine(t *testing.T) {
	tr, c, rec := newStartingTracker(t, "codex")
	tr.Observe(snapOf(t, "codex idle at start"))
	expectStates(t, rec)
	c.add(10 * time.Millisecond)
	tr.Prompted(time.Time{})
	expectStates(t, rec, "working/runtime")

	tr2, _, rec2 := newStartingTracker(t, "claude")
	tr2.Observe(snapOf(t, "claude idle at start"))
	if got := rec2.states(); len(got) != 1 || got[0] != "idle/screen" {
		t.Fatalf("claude (no startupSettleMs) at start: %v", got)
	}
}
