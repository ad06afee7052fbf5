package state

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd/screen"
)

// clock is a hand-moved clock so fusion tests never depend on wall time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type recorder struct {
	mu  sync.Mutex
	got []Fused
}

func (r *recorder) on(f Fused) { r.mu.Lock(); r.got = append(r.got, f); r.mu.Unlock() }
func (r *recorder) states() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, f := range r.got {
		out = append(out, Format(f.State, f.Kind)+"/"+string(f.Authority))
	}
	return out
}

// newTestTracker is a tracker of a member past its start-up (the engines table's start-up
// debounce is over: startsettle_test.go covers it with newStartingTracker).
func newTestTracker(t *testing.T, engine string) (*Tracker, *clock, *recorder) {
	t.Helper()
	tr, c, rec := newStartingTracker(t, engine)
	tr.settled = true
	return tr, c, rec
}

// newStartingTracker is a tracker of a member that has just started.
func newStartingTracker(t *testing.T, engine string) (*Tracker, *clock, *recorder) {
	t.Helper()
	c := &clock{t: time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)}
	rec := &recorder{}
	tr := Load("").NewTracker(engine, rec.on)
	tr.now = c.now
	t.Cleanup(tr.Close)
	return tr, c, rec
}

var seqCounter uint64

func snapOf(t *testing.T, name string) screen.Snapshot {
	t.Helper()
	for _, group := range [][]fixture{claudeFixtures, codexFixtures, opencodeFixtures, piFixtures} {
		for _, f := range group {
			if f.name == name {
				s := f.snapshot(t)
				seqCounter++
				s.Seq = seqCounter
				return s
			}
		}
	}
	t.Fatalf("no fixture %q", name)
	return screen.Snapshot{}
}

func payload(kv string) json.RawMessage { return json.RawMessage(kv) }

func expectStates(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	if got := rec.states(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("changes:\n got %v\nwant %v", got, want)
	}
}

func TestScreenOnlyAndNoDuplicateChanges(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude idle at start"))
	c.add(time.Second)
	tr.Observe(snapOf(t, "claude idle at start"))
	tr.Observe(snapOf(t, "claude idle with typed text"))
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	tr.Observe(snapOf(t, "claude working, screen only (stale idle title)"))
	tr.Observe(snapOf(t, "claude permission, Bash"))
	tr.Observe(snapOf(t, "claude done"))
	expectStates(t, rec, "idle/screen", "working/screen", "blocked:permission/screen", "done/screen")
	f := tr.Current()
	if f.Screen == nil || f.Screen.Rule != "claude.done.turn" || !strings.Contains(f.Reason, "claude.done.turn") {
		t.Fatalf("explain data: %+v", f)
	}
}

// The Esc case: UserPromptSubmit says working, the screen catches up, then
// the user presses Esc. No hook fires; the interrupted idle screen ends the
// hook's working at once.
func TestScreenEndsHookAfterEsc(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude idle at start"))
	c.add(time.Second)
	if _, err := tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`)}); err != nil {
		t.Fatal(err)
	}
	c.add(50 * time.Millisecond)
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	c.add(200 * time.Millisecond)
	f := tr.Observe(snapOf(t, "claude interrupted by Esc after an earlier done"))
	expectStates(t, rec, "idle/screen", "working/hook", "idle/screen")
	if f.Hook == nil || f.Hook.Live || f.Hook.EndedBy != "claude.idle.interrupted" || !strings.Contains(f.Reason, "ended the hook") {
		t.Fatalf("fused after Esc: %+v / hook %+v", f, f.Hook)
	}
}

// A fresh UserPromptSubmit is not undone by the last idle frame painted
// before the spinner; if the spinner never shows and the screen stays at
// rest past the grace, the screen wins (Esc before the first paint).
func TestGraceProtectsFreshHook(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude idle at start"))
	c.add(time.Second)
	tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"UserPromptSubmit"}`)})
	c.add(30 * time.Millisecond)
	tr.Observe(snapOf(t, "claude idle with typed text"))
	if f := tr.Current(); f.State != Working || f.Authority != Hook || !strings.Contains(f.Reason, "has not shown working") {
		t.Fatalf("inside the grace the hook must stand: %+v", f)
	}
	c.add(DefaultGrace)
	tr.recheck() // what the grace timer does
	expectStates(t, rec, "idle/screen", "working/hook", "idle/screen")
}

// The deny case: PermissionRequest says blocked, the dialog shows, the user
// picks No. The interrupted screen ends the stale blocked.
func TestScreenEndsBlockedAfterDeny(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude idle at start"))
	tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"UserPromptSubmit"}`)})
	c.add(100 * time.Millisecond)
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	f, err := tr.Report(HookReport{State: Blocked, Payload: payload(`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}`)})
	if err != nil || f.Kind != Permission {
		t.Fatalf("PermissionRequest: %+v %v", f, err)
	}
	c.add(100 * time.Millisecond)
	tr.Observe(snapOf(t, "claude permission, Bash"))
	c.add(5 * time.Second)
	tr.Observe(snapOf(t, "claude interrupted after deny"))
	expectStates(t, rec, "idle/screen", "working/hook", "blocked:permission/hook", "idle/screen")
}

// Approve: the dialog goes, the spinner comes back, PostToolUse reports
// working, Stop reports done and the screen agrees: hook authority throughout.
func TestApproveKeepsHookAuthority(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"UserPromptSubmit"}`)})
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	tr.Report(HookReport{Payload: payload(`{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion"}`)})
	tr.Observe(snapOf(t, "claude question, AskUserQuestion"))
	c.add(3 * time.Second)
	tr.Report(HookReport{Payload: payload(`{"hook_event_name":"PostToolUse","tool_name":"AskUserQuestion"}`)})
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	c.add(time.Second)
	// Stop fires while the last spinner frame is still on screen.
	tr.Report(HookReport{Payload: payload(`{"hook_event_name":"Stop","last_assistant_message":"Red it is."}`)})
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	c.add(30 * time.Millisecond)
	f := tr.Observe(snapOf(t, "claude done"))
	expectStates(t, rec, "working/hook", "blocked:question/hook", "working/hook", "done/hook")
	if f.Hook == nil || !strings.Contains(string(f.Hook.Payload), "Red it is.") || f.Hook.Event != "Stop" {
		t.Fatalf("hook reading should carry the Stop payload: %+v", f.Hook)
	}
}

// After Stop (done, agreed by the screen) a turn the hooks do not report
// (hooks removed mid-session) is still seen: the screen moved on.
func TestScreenMovesOnFromAgreedHook(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Report(HookReport{State: Done, Payload: payload(`{"hook_event_name":"Stop"}`)})
	tr.Observe(snapOf(t, "claude done"))
	c.add(10 * time.Second)
	tr.Observe(snapOf(t, "claude new turn after done (spinner again)"))
	expectStates(t, rec, "done/hook", "working/screen")
}

// A done report is not ended by an idle screen that never showed done: the
// screen may simply lag, and done is not a state hooks leave stale.
func TestDoneHookNotEndedByLaggingScreen(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Report(HookReport{State: Done})
	c.add(5 * time.Second)
	tr.Observe(snapOf(t, "claude idle at start"))
	tr.recheck()
	expectStates(t, rec, "done/hook")
}

func TestIdlePromptNotificationIsNotBlocked(t *testing.T) {
	tr, _, rec := newTestTracker(t, "claude")
	tr.Observe(snapOf(t, "claude done"))
	_, err := tr.Report(HookReport{State: Blocked, Payload: payload(`{"hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`)})
	if !errors.Is(err, ErrIgnored) {
		t.Fatalf("idle_prompt must be ignored, got %v", err)
	}
	// Mapped through the hook spec (no explicit state), it maps to nothing.
	if _, err := tr.Report(HookReport{Payload: payload(`{"hook_event_name":"Notification","notification_type":"idle_prompt"}`)}); err == nil {
		t.Fatal("an idle_prompt payload without a state must not produce a state")
	}
	f, err := tr.Report(HookReport{Payload: payload(`{"hook_event_name":"Notification","notification_type":"permission_prompt"}`)})
	if err != nil || f.State != Blocked || f.Kind != Permission {
		t.Fatalf("permission_prompt: %+v %v", f, err)
	}
	expectStates(t, rec, "done/screen", "blocked:permission/hook")
}

func TestHookExpires(t *testing.T) {
	tr, c, rec := newTestTracker(t, "codex")
	tr.Observe(snapOf(t, "codex idle at start"))
	f, _ := tr.Report(HookReport{State: Working, TTL: time.Hour})
	if want := f.Hook.At.Add(MaxHookTTL); !f.Hook.Expires.Equal(want) {
		t.Fatalf("TTL not capped at 15m: expires %v want %v", f.Hook.Expires, want)
	}
	c.add(MaxHookTTL + time.Second)
	tr.recheck() // what the expiry timer does
	f = tr.Current()
	if f.State != Idle || f.Authority != ScreenAuth || !strings.Contains(f.Reason, "expired") {
		t.Fatalf("after expiry: %+v", f)
	}
	expectStates(t, rec, "idle/screen", "working/hook", "idle/screen")
}

func TestExitIsFinal(t *testing.T) {
	tr, _, rec := newTestTracker(t, "codex")
	tr.Observe(snapOf(t, "codex working"))
	f := tr.Exited(3)
	if f.State != Done || f.Authority != Runtime || f.ExitCode == nil || *f.ExitCode != 3 {
		t.Fatalf("exit: %+v", f)
	}
	tr.Report(HookReport{State: Working})
	tr.Observe(snapOf(t, "codex working"))
	expectStates(t, rec, "working/screen", "done/runtime")
}

func TestBadReports(t *testing.T) {
	tr, _, rec := newTestTracker(t, "claude")
	for _, r := range []HookReport{{State: "busy"}, {State: Unknown}, {State: Done, Kind: Menu}, {State: Blocked, Kind: "nap"}, {}} {
		if _, err := tr.Report(r); err == nil || errors.Is(err, ErrIgnored) {
			t.Errorf("report %+v accepted (%v)", r, err)
		}
	}
	expectStates(t, rec)
}

func TestCodexHookTrustAndTornFrames(t *testing.T) {
	tr, _, rec := newTestTracker(t, "codex")
	tr.Observe(snapOf(t, "codex hook trust menu"))
	torn := snapOf(t, "codex working")
	torn.InSync = true
	tr.Observe(torn) // ignored: may be half a frame
	tr.Observe(snapOf(t, "codex idle at start"))
	expectStates(t, rec, "blocked:menu/screen", "idle/screen")
}

// onChange may call back into the tracker, and concurrent callers never
// see changes out of order or twice.
func TestOnChangeReentrantAndOrdered(t *testing.T) {
	var tr *Tracker
	var mu sync.Mutex
	var got []State
	tr = Load("").NewTracker("claude", func(f Fused) {
		_ = tr.Current()
		mu.Lock()
		got = append(got, f.State)
		mu.Unlock()
	})
	defer tr.Close()
	idle, working := snapOf(t, "claude idle at start"), snapOf(t, "claude working, spinner and footer")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if (i+g)%2 == 0 {
					tr.Observe(idle)
				} else {
					tr.Observe(working)
				}
			}
		}(g)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("onChange repeated %s at %d", got[i], i)
		}
	}
	if last := tr.Current().State; len(got) == 0 || got[len(got)-1] != last {
		t.Fatalf("last change %v, current %s", got, last)
	}
}

// The dialog settles before its PermissionRequest report arrives and then
// stays still; after approval Claude fires nothing until the tool ends, so
// the screen's working must end the hook's blocked.
func TestApprovalAfterStillDialog(t *testing.T) {
	tr, c, rec := newTestTracker(t, "claude")
	tr.Report(HookReport{State: Working, Payload: payload(`{"hook_event_name":"UserPromptSubmit"}`)})
	tr.Observe(snapOf(t, "claude working, spinner and footer"))
	tr.Observe(snapOf(t, "claude permission, Bash"))
	c.add(150 * time.Millisecond)
	tr.Report(HookReport{Payload: payload(`{"hook_event_name":"PermissionRequest","tool_name":"Bash"}`)})
	c.add(300 * time.Millisecond) // the user approves quickly
	tr.Observe(snapOf(t, "claude working, tool running"))
	expectStates(t, rec, "working/hook", "blocked:permission/screen", "blocked:permission/hook", "working/screen")
}
