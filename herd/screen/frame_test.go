package screen

import (
	"strings"
	"testing"
	"time"
)

// settleRecorder returns a screen whose settle delay is far beyond any test's life, so only the
// frame logic can settle it, and the channel of its settled snapshots.
func settleRecorder(t *testing.T) (*Screen, chan Snapshot) {
	t.Helper()
	got := make(chan Snapshot, 64)
	s := New(80, 24, Options{SettleDelay: time.Hour, SyncTimeout: time.Hour, OnSettled: func(snap Snapshot) { got <- snap }})
	t.Cleanup(s.Close)
	return s, got
}

func nextSettle(t *testing.T, got chan Snapshot, what string) Snapshot {
	t.Helper()
	select {
	case snap := <-got:
		return snap
	case <-time.After(time.Minute):
		t.Fatalf("never settled: %s", what)
		return Snapshot{}
	}
}

// Codex brackets every frame and writes its title (and OSC 7501) outside the frames, often in
// a read of its own right after the frame. That write draws nothing: the grid is the closed
// frame's, so it settles at once rather than holding the decision back by the settle delay.
func TestFramedProgramTitleSettlesAtOnce(t *testing.T) {
	s, got := settleRecorder(t)
	s.Write([]byte("\x1b[?2026h\x1b[H\x1b[2J› Ask Codex to do anything\x1b[?2026l"))
	if snap := nextSettle(t, got, "the frame's end"); !strings.Contains(snap.Text(), "Ask Codex") {
		t.Fatalf("settled on %q", snap.Text())
	}
	s.Write([]byte("\x1b]0;[ . ] Action Required | proj\x07\x1b]7501;state=blocked:app=codex\x1b\\"))
	snap := nextSettle(t, got, "a title written outside the frames")
	if snap.Title != "[ . ] Action Required | proj" || !strings.Contains(snap.Text(), "Ask Codex") {
		t.Fatalf("settled on title %q, screen %q", snap.Title, snap.Text())
	}
}

// Output outside a frame that draws on the grid may be half a picture: it keeps the settle
// delay, and a title after it does not cut that delay short. The next frame's end decides.
func TestFramedProgramUnframedDrawingKeepsTheDelay(t *testing.T) {
	s, got := settleRecorder(t)
	s.Write([]byte("\x1b[?2026h\x1b[H\x1b[2Jframe one\x1b[?2026l"))
	nextSettle(t, got, "the first frame's end")
	s.Write([]byte("\x1b[5;1Hhalf drawn outside a frame"))
	s.Write([]byte("\x1b]0;working | proj\x07"))
	s.Write([]byte("\x1b[?2026h\x1b[H\x1b[2Jframe two\x1b[?2026l"))
	snap := nextSettle(t, got, "the second frame's end")
	if !strings.Contains(snap.Text(), "frame two") {
		t.Fatalf("settled before the frame that followed unframed drawing: %q", snap.Text())
	}
}

// A program that never bracketed a frame keeps the settle delay for every write, titles too:
// Claude writes its title and its redraw in separate reads.
func TestUnframedProgramTitleKeepsTheDelay(t *testing.T) {
	s, got := settleRecorder(t)
	s.Write([]byte("\x1b[H\x1b[2J✻ Working…"))
	s.Write([]byte("\x1b]0;✳ Claude Code\x07"))
	// A first frame: now the program brackets, and its end decides.
	s.Write([]byte("\x1b[?2026h\x1b[H\x1b[2J❯ idle prompt\x1b[?2026l"))
	snap := nextSettle(t, got, "the frame's end")
	if !strings.Contains(snap.Text(), "idle prompt") {
		t.Fatalf("a title of a program without frames settled early: %q", snap.Text())
	}
}

// A full reset forgets that the program bracketed its frames.
func TestFullResetForgetsFraming(t *testing.T) {
	s, got := settleRecorder(t)
	s.Write([]byte("\x1b[?2026h\x1b[H\x1b[2Jframe\x1b[?2026l"))
	nextSettle(t, got, "the frame's end")
	s.Write([]byte("\x1bc"))
	s.Write([]byte("\x1b]0;title after reset\x07"))
	s.Write([]byte("\x1b[?2026h\x1b[H\x1b[2Jnew frame\x1b[?2026l"))
	if snap := nextSettle(t, got, "the new frame's end"); !strings.Contains(snap.Text(), "new frame") {
		t.Fatalf("a title after a full reset settled early: %q", snap.Text())
	}
}
