package state

import (
	"strings"
	"testing"
	"time"
)

// Codex has hooks: past the grace a screen that reads nothing clear does
// not end the claim, because the engine's UserPromptSubmit will; the timer
// then waits for the cap, not for the grace again.
func TestPromptClaimHoldsWhileScreenUnclear(t *testing.T) {
	tr, c, rec := newTestTracker(t, "codex")
	tr.Observe(snapOf(t, "codex idle at start"))
	p := tr.Prompted(time.Time{})
	c.add(100 * time.Millisecond)
	tr.Observe(plainSnap(t, "nothing the rules know"))
	c.add(DefaultGrace)
	tr.recheck() // what the grace timer does
	f := tr.Current()
	if f.State != Working || f.Authority != Runtime || !f.Prompt.Live || !strings.Contains(f.Reason, "nothing clear") {
		t.Fatalf("past the grace with an unclear screen: %+v / %+v", f, f.Prompt)
	}
	if want := p.Prompt.At.Add(PromptClaimCap); !tr.due.Equal(want) {
		t.Fatalf("timer armed for %v, want the cap %v", tr.due, want)
	}
	c.add(2 * time.Second)
	if f := tr.Observe(plainSnap(t, "still nothing the rules know")); f.Authority != Runtime || !f.Prompt.Live {
		t.Fatalf("another unclear frame: %+v", f)
	}
	f, err := tr.Report(HookReport{Payload: payload(`{"hook_event_name":"UserPromptSubmit"}`)})
	if err != nil || f.Prompt.Live || f.Prompt.EndedBy != "hook UserPromptSubmit" {
		t.Fatalf("the hook ends the claim: %+v %v", f.Prompt, err)
	}
	expectStates(t, rec, "idle/screen", "working/runtime", "working/hook")
}

// A clear reading past the grace still ends a held claim at once, and with
// no hook and no clear reading the cap does.
func TestPromptHeldClaimEndsByScreenOrCap(t *testing.T) {
	tr, c, rec := newTestTracker(t, "codex")
	tr.Observe(snapOf(t, "codex idle at start"))
	tr.Prompted(time.Time{})
	tr.Observe(plainSnap(t, "nothing the rules know"))
	c.add(3 * time.Second)
	tr.recheck()
	f := tr.Observe(snapOf(t, "codex idle at start"))
	if f.Prompt.Live || f.Prompt.EndedBy != f.Screen.Rule || f.State != Idle {
		t.Fatalf("an idle screen past the grace: %+v / %+v", f, f.Prompt)
	}
	expectStates(t, rec, "idle/screen", "working/runtime", "idle/screen")

	tr2, c2, rec2 := newTestTracker(t, "codex")
	tr2.Observe(snapOf(t, "codex idle at start"))
	tr2.Prompted(time.Time{})
	tr2.Observe(plainSnap(t, "nothing the rules know"))
	c2.add(DefaultGrace)
	tr2.recheck()
	c2.add(PromptClaimCap)
	tr2.recheck() // what the cap timer does
	f = tr2.Current()
	if f.Prompt.Live || f.Prompt.EndedBy != "cap" || f.State != Unknown || f.Authority != ScreenAuth {
		t.Fatalf("at the cap: %+v / %+v", f, f.Prompt)
	}
	if !tr2.due.IsZero() {
		t.Fatalf("nothing is left to wait for, yet the timer is armed for %v", tr2.due)
	}
	expectStates(t, rec2, "idle/screen", "working/runtime", "unknown/screen")
}

// OpenCode's first prompt, as the real engine draws it: the start screen
// with the input cleared stays up past 1.5 s, then a blank screen, then the
// session view without a turn — all before its first session.status busy.
// OpenCode's promptGraceMs keeps the claim through all of them, so the
// member never reads idle or unknown while the turn is starting.
func TestOpenCodeFirstPromptReadsWorking(t *testing.T) {
	tr, c, rec := newTestTracker(t, "opencode")
	tr.Observe(snapOf(t, "opencode idle at start"))
	tr.Prompted(time.Time{})
	c.add(1600 * time.Millisecond)
	tr.Observe(snapOf(t, "opencode idle at start"))
	tr.recheck()
	c.add(400 * time.Millisecond)
	tr.Observe(plainSnap(t, ""))
	c.add(1200 * time.Millisecond)
	session := plainSnap(t, "  ┃", "  ┃  say fake-plain", "  ┃", "", "", "  ┃  Build · GPT Fake Fake",
		"   /root/proj                          tab agents  ctrl+p commands")
	if f := tr.Observe(session); f.Screen.State != Idle || f.State != Working || f.Authority != Runtime {
		t.Fatalf("the session view before the first busy: %+v / screen %+v", f, f.Screen)
	}
	c.add(time.Second)
	tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"session.status","properties":{"status":{"type":"busy"}}}`)})
	expectStates(t, rec, "idle/screen", "working/runtime", "working/hook")

	// A prompt OpenCode never takes (no busy follows) reads its screen again
	// once the longer grace is over.
	tr2, c2, rec2 := newTestTracker(t, "opencode")
	tr2.Observe(snapOf(t, "opencode idle at start"))
	tr2.Prompted(time.Time{})
	c2.add(10 * time.Second)
	tr2.recheck()
	if f := tr2.Current(); f.Prompt.Live || f.Prompt.EndedBy != "grace" {
		t.Fatalf("after OpenCode's grace: %+v", f.Prompt)
	}
	expectStates(t, rec2, "idle/screen", "working/runtime", "idle/screen")
}

// promptGraceMs comes from the engines table and a user override; a
// negative one is a problem that names the fix, and the default applies.
func TestPromptGraceFromTheTable(t *testing.T) {
	if tr := Load("").NewTracker("opencode", nil); tr.promptGraceLocked() != 10*time.Second {
		t.Fatalf("opencode prompt grace %v", tr.promptGraceLocked())
	}
	if tr := Load("").NewTracker("claude", nil); tr.promptGraceLocked() != DefaultGrace {
		t.Fatalf("claude prompt grace %v", tr.promptGraceLocked())
	}
	dir := t.TempDir()
	writeFile(t, dir, "engines.json", `{"engines":[{"name":"pi","promptGraceMs":-5},{"name":"codex","promptGraceMs":4000}]}`)
	tab := Load(dir)
	if tr := tab.NewTracker("pi", nil); tr.promptGraceLocked() != DefaultGrace {
		t.Fatalf("pi with a negative override: %v", tr.promptGraceLocked())
	}
	if tr := tab.NewTracker("codex", nil); tr.promptGraceLocked() != 4*time.Second {
		t.Fatalf("codex override: %v", tr.promptGraceLocked())
	}
	probs := tab.Problems()
	if len(probs) != 1 || probs[0].Where != "pi promptGraceMs" || probs[0].Fix == "" {
		t.Fatalf("problems: %v", probs)
	}
}
