package state

import (
	"strings"
	"sync"
	"testing"
)

// fakeProbe is a foreground process the test sets.
type fakeProbe struct {
	mu    sync.Mutex
	fg    *Foreground
	calls int
}

func (p *fakeProbe) set(reading bool, comm, how string) {
	p.mu.Lock()
	p.fg = &Foreground{Pid: 42, Comm: comm, Reading: reading, How: how}
	p.mu.Unlock()
}

func (p *fakeProbe) probe() *Foreground {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.fg == nil {
		return nil
	}
	f := *p.fg
	return &f
}

// A screen no rule matches is read from the foreground process: idle while
// it reads the terminal, working while it runs; the reason names it.
func TestForegroundDecidesUnmatchedScreens(t *testing.T) {
	tr, c, rec := newTestTracker(t, "sh-like-program")
	p := &fakeProbe{}
	p.set(false, "sleep", "sleeps in hrtimer_nanosleep, not reading the terminal")
	tr.SetProbe(p.probe)
	f := tr.Observe(plainSnap(t, "compiling things"))
	if f.State != Working || f.Screen.Rule != RuleTTYRunning || !strings.Contains(f.Reason, "foreground process sleep (pid 42)") {
		t.Fatalf("running: %+v", f)
	}
	// Silent: the re-probe (what the timer does) finds it reading now.
	if tr.reprobeAt.IsZero() {
		t.Fatal("no re-probe armed while the program runs silently")
	}
	p.set(true, "sh", "is blocked reading the terminal (wait_woken)")
	c.add(reprobeFirst)
	tr.recheck()
	f = tr.Current()
	if f.State != Idle || f.Screen.Rule != RuleTTYReading || !strings.Contains(f.Reason, "reading the terminal") {
		t.Fatalf("reading: %+v", f)
	}
	if !tr.reprobeAt.IsZero() {
		t.Fatalf("a program reading its terminal is not re-probed (armed for %v)", tr.reprobeAt)
	}
	expectStates(t, rec, "working/screen", "idle/screen")
}

// Re-probes back off to reprobeMax while the program runs without output.
func TestForegroundReprobeBacksOff(t *testing.T) {
	tr, c, _ := newTestTracker(t, "sh-like-program")
	p := &fakeProbe{}
	p.set(false, "make", "is running")
	tr.SetProbe(p.probe)
	tr.Observe(plainSnap(t, "building"))
	gap := reprobeFirst
	for i := 0; i < 8; i++ {
		c.add(gap)
		tr.recheck()
		gap = min(2*gap, reprobeMax)
		if got := tr.reprobeAt.Sub(c.now()); got != gap {
			t.Fatalf("re-probe %d armed %v ahead, want %v", i, got, gap)
		}
	}
}

// Rules and hooks win: a matched screen is not probed, and an engine with
// hooks is never read from its foreground process.
func TestForegroundOnlyWhereNoRuleAndNoHooks(t *testing.T) {
	tr, _, _ := newTestTracker(t, "sh-like-program")
	p := &fakeProbe{}
	p.set(true, "x", "reads")
	tr.SetProbe(p.probe)
	if f := tr.Observe(plainSnap(t, "Allow this? [y/n]")); f.State != Blocked || p.calls != 0 {
		t.Fatalf("a matched screen: %+v (probed %d times)", f, p.calls)
	}
	tc, _, _ := newTestTracker(t, "claude")
	pc := &fakeProbe{}
	pc.set(true, "claude", "reads")
	tc.SetProbe(pc.probe)
	if f := tc.Observe(plainSnap(t, "nothing the rules know")); f.State != Unknown || pc.calls != 0 {
		t.Fatalf("an engine with hooks: %+v (probed %d times)", f, pc.calls)
	}
}

// A program that prints nothing never settles a screen: the probe reads it
// from the start.
func TestForegroundWithoutAnyOutput(t *testing.T) {
	tr, c, rec := newTestTracker(t, "cat")
	p := &fakeProbe{}
	p.set(true, "cat", "is blocked reading the terminal (wait_woken)")
	tr.SetProbe(p.probe)
	if tr.due.IsZero() {
		t.Fatal("no first probe armed")
	}
	c.add(reprobeFirst)
	tr.recheck()
	if f := tr.Current(); f.State != Idle || f.Screen == nil || f.Screen.Rule != RuleTTYReading {
		t.Fatalf("before any output: %+v", f)
	}
	expectStates(t, rec, "idle/screen")
}
