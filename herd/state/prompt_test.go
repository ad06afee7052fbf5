package state

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd/screen"
)

// A screen-only engine: the prompt claims working at once, the idle frame
// painted before the spinner does not undo it, the spinner hands the state
// to the screen, and a done line inside the grace is believed because the
// screen showed the turn first.
func TestPromptClaimsWorkingUntilScreenShowsTurn(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude idle at start"))
	c.add(time.Second)
	f := tr.Prompted(time.Time{})
	if f.State != Working || f.Authority != Runtime || f.Prompt == nil || !f.Prompt.Live || !strings.Contains(f.Reason, "prompt was typed") {
		t.Fatalf("right after the prompt: %+v", f)
	}
	c.add(20 * time.Millisecond)
	if f := tr.Observe(snapOf(t, "claude idle with typed text")); f.State != Working || f.Authority != Runtime {
		t.Fatalf("the frame before the spinner must not end the claim: %+v", f)
	}
	c.add(100 * time.Millisecond)
	f = tr.Observe(snapOf(t, "claude working, spinner and footer"))
	if f.Prompt == nil || f.Prompt.Live || f.Prompt.EndedBy == "" {
		t.Fatalf("the spinner should end the claim: %+v", f.Prompt)
	}
	c.add(200 * time.Millisecond) // still inside the grace
	tr.Observe(snapOf(t, "claude done"))
	expectStates(t, rec, "idle/screen", "working/runtime", "working/screen", "done/screen")
}

// Past the grace a settled idle screen decides: the engine never took the
// turn (the text was swallowed, or the spinner came and went unseen).
func TestPromptIdleAfterGraceEndsClaim(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude idle at start"))
	tr.Prompted(c.now())
	c.add(DefaultGrace)
	f := tr.Observe(snapOf(t, "claude idle with typed text"))
	if f.Prompt == nil || f.Prompt.Live || f.Prompt.EndedBy != f.Screen.Rule {
		t.Fatalf("claim after the grace: %+v / screen %+v", f.Prompt, f.Screen)
	}
	expectStates(t, rec, "idle/screen", "working/runtime", "idle/screen")
}

// plainSnap draws lines the way a plain program (cat) leaves them: no engine
// rules know the screen.
func plainSnap(t *testing.T, lines ...string) screen.Snapshot {
	t.Helper()
	s := screen.New(80, 24, screen.Options{})
	defer s.Close()
	s.Write([]byte(strings.Join(lines, "\r\n")))
	seqCounter++
	snap := s.Snapshot()
	snap.Seq = seqCounter
	return snap
}

// cat never shows working: at the end of the grace its screen decides again,
// whatever it reads, with no further output.
func TestPromptPlainProgramFallsBackAfterGrace(t *testing.T) {
	tr, c, rec := newTestTracker(t, "cat")
	before := tr.Observe(plainSnap(t, "hello"))
	tr.Prompted(c.now())
	c.add(10 * time.Millisecond)
	tr.Observe(plainSnap(t, "hello", "again", "again"))
	if f := tr.Current(); f.State != Working || f.Authority != Runtime {
		t.Fatalf("inside the grace the claim stands: %+v", f)
	}
	c.add(DefaultGrace)
	tr.recheck() // what the grace timer does
	f := tr.Current()
	if f.State != before.State || f.Authority != ScreenAuth || f.Prompt.Live || f.Prompt.EndedBy != "grace" {
		t.Fatalf("after the grace: %+v / %+v", f, f.Prompt)
	}
	want := []string{"working/runtime", Format(before.State, before.Kind) + "/screen"}
	if before.State != Unknown { // the tracker starts at unknown/screen
		want = append([]string{want[1]}, want...)
	}
	expectStates(t, rec, want...)
}

// The same without a hand-moved clock: the tracker's own timer ends the claim.
func TestPromptGraceTimerFires(t *testing.T) {
	changes := make(chan Fused, 8)
	tr := Load("").NewTracker("cat", func(f Fused) { changes <- f })
	defer tr.Close()
	tr.grace = 20 * time.Millisecond
	tr.Observe(plainSnap(t, "$ "))
	<-changes
	tr.Prompted(time.Time{})
	if f := <-changes; f.State != Working || f.Authority != Runtime {
		t.Fatalf("prompt: %+v", f)
	}
	select {
	case f := <-changes:
		if f.Authority != ScreenAuth || f.Prompt == nil || f.Prompt.EndedBy != "grace" {
			t.Fatalf("after the grace timer: %+v", f)
		}
	case <-time.After(30 * time.Second): // a failsafe against a hang, not a speed assertion
		t.Fatal("the grace timer never ended the prompt claim")
	}
}

// A prompt supersedes the previous turn's Stop (done, live for 15 minutes):
// a wait for done right after the prompt must not see it. The engine's
// UserPromptSubmit then takes over, and its Stop ends the turn.
func TestPromptSupersedesHookAndHookSupersedesPrompt(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Report(HookReport{State: Done, Payload: payload(`{"hook_event_name":"Stop"}`)})
	tr.Observe(snapOf(t, "claude done"))
	c.add(5 * time.Second)
	f := tr.Prompted(time.Time{})
	if f.State != Working || f.Hook == nil || f.Hook.Live || f.Hook.EndedBy != "prompt" {
		t.Fatalf("prompt over a live Stop: %+v / %+v", f, f.Hook)
	}
	c.add(10 * time.Millisecond)
	tr.Observe(snapOf(t, "claude done")) // the stale frame, inside the grace
	f, err := tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"UserPromptSubmit"}`)})
	if err != nil || f.Prompt.Live || f.Prompt.EndedBy != "hook UserPromptSubmit" {
		t.Fatalf("UserPromptSubmit after the prompt: %+v %v", f.Prompt, err)
	}
	c.add(50 * time.Millisecond)
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	c.add(2 * time.Second)
	tr.Report(HookReport{State: Done, Payload: payload(`{"hook_event_name":"Stop"}`)})
	expectStates(t, rec, "done/hook", "working/runtime", "working/hook", "done/hook")

	// Once the claim ended, the old Stop does not come back.
	tr.Prompted(time.Time{})
	c.add(100 * time.Millisecond)
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	c.add(DefaultGrace)
	tr.recheck()
	if f := tr.Current(); f.State != Working || f.Authority != ScreenAuth {
		t.Fatalf("after the claim the screen decides, not the superseded Stop: %+v", f)
	}
}

// A dialog that appears after the prompt ends the claim at once; the dialog
// the prompt answers does not, until the grace passes.
func TestPromptAndDialogs(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude idle at start"))
	tr.Prompted(time.Time{})
	c.add(50 * time.Millisecond)
	tr.Observe(snapOf(t, "claude permission, Bash"))
	expectStates(t, rec, "idle/screen", "working/runtime", "blocked:permission/screen")

	tr2, c2, rec2 := newTestTracker(t, "claude")
	tr2.Observe(snapOf(t, "claude question, AskUserQuestion"))
	tr2.Prompted(time.Time{}) // the answer
	c2.add(50 * time.Millisecond)
	tr2.Observe(snapOf(t, "claude question, AskUserQuestion"))
	if f := tr2.Current(); f.State != Working || f.Authority != Runtime {
		t.Fatalf("the answered dialog's last frame must not end the claim: %+v", f)
	}
	c2.add(DefaultGrace)
	tr2.recheck()
	expectStates(t, rec2, "blocked:question/screen", "working/runtime", "blocked:question/screen")
}

// The exit is final: it ends the claim, and a prompt after it claims nothing.
func TestPromptAndExit(t *testing.T) {
	tr, _, rec := newTestTracker(t, "codex")
	tr.Observe(snapOf(t, "codex idle at start"))
	tr.Prompted(time.Time{})
	f := tr.Exited(0)
	if f.Prompt == nil || f.Prompt.Live || f.Prompt.EndedBy != "exit" {
		t.Fatalf("exit: %+v", f.Prompt)
	}
	tr.Prompted(time.Time{})
	expectStates(t, rec, "idle/screen", "working/runtime", "done/runtime")
	if !tr.due.IsZero() {
		t.Fatalf("nothing can change after the exit, yet the timer is armed for %v", tr.due)
	}
}

// One timer serves every deadline: after the grace re-check the report's
// expiry is still armed.
func TestTimerKeepsTheNextDeadline(t *testing.T) {
	tr, c, _ := newTestTracker(t, "codex")
	tr.Observe(snapOf(t, "codex idle at start"))
	f, _ := tr.Report(HookReport{State: Working, TTL: time.Minute})
	if want := f.Hook.At.Add(DefaultGrace); !tr.due.Equal(want) {
		t.Fatalf("armed for %v, want the grace end %v", tr.due, want)
	}
	c.add(DefaultGrace / 2)
	tr.Observe(plainSnap(t, "nothing the rules know"))
	c.add(DefaultGrace)
	tr.recheck()
	if f := tr.Current(); f.Authority != Hook {
		t.Fatalf("the hook should stand: %+v", f)
	}
	if want := f.Hook.Expires; !tr.due.Equal(want) {
		t.Fatalf("armed for %v after the grace, want the expiry %v", tr.due, want)
	}
}

// Gemini's ToolPermission Notification is in its hook spec: blocked on
// permission, whether the hook names the state or leaves it to the spec.
// A notification type no spec maps is ignored.
func TestNotificationsFollowTheHookSpec(t *testing.T) {
	tr, _, rec := newTestTracker(t, "gemini")
	tool := `{"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Allow run_shell_command?"}`
	f, err := tr.Report(HookReport{State: Blocked, Payload: payload(tool)})
	if err != nil || f.State != Blocked || f.Kind != Permission {
		t.Fatalf("ToolPermission with a state: %+v %v", f, err)
	}
	tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"AfterTool"}`)})
	if f, err := tr.Report(HookReport{Payload: payload(tool)}); err != nil || f.State != Blocked || f.Kind != Permission {
		t.Fatalf("ToolPermission through the spec: %+v %v", f, err)
	}
	if _, err := tr.Report(HookReport{State: Blocked, Payload: payload(`{"hook_event_name":"Notification","notification_type":"idle_prompt"}`)}); !errors.Is(err, ErrIgnored) {
		t.Fatalf("gemini does not map idle_prompt: %v", err)
	}
	expectStates(t, rec, "blocked:permission/hook", "working/hook", "blocked:permission/hook")

	// Claude's spec does not map ToolPermission.
	cl, _, _ := newTestTracker(t, "claude")
	if _, err := cl.Report(HookReport{State: Blocked, Payload: payload(tool)}); !errors.Is(err, ErrIgnored) {
		t.Fatalf("claude must ignore ToolPermission: %v", err)
	}
	// A member whose engine is unknown (a wrapper script) goes by every spec.
	wr, _, _ := newTestTracker(t, "my-claude-wrapper")
	if f, err := wr.Report(HookReport{State: Blocked, Payload: payload(`{"hook_event_name":"Notification","notification_type":"permission_prompt"}`)}); err != nil || f.Kind != Permission {
		t.Fatalf("wrapper, permission_prompt: %+v %v", f, err)
	}
	if _, err := wr.Report(HookReport{State: Blocked, Payload: payload(`{"hook_event_name":"Notification","notification_type":"idle_prompt"}`)}); !errors.Is(err, ErrIgnored) {
		t.Fatalf("wrapper, idle_prompt: %v", err)
	}
}
