package screen

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestEmulatorTuned(t *testing.T) {
	s := New(120, 40, Options{})
	defer s.Close()
	if !tuneEmulator(s.emu) {
		t.Fatal("x/vt internals moved: the alternate screen's scrollback and the 4 MiB parser buffer are no longer tuned; update tuneEmulator")
	}
}

// Claude's idle title "✳ Claude Code" contains byte 0x9C (✳ = E2 9C B3).
// Unpatched, x/vt cuts the title after one byte and prints " Claude Code"
// at the cursor.
func TestTitleWithC1ByteInsideUTF8(t *testing.T) {
	if !bytes.Contains([]byte("✳"), []byte{0x9C}) {
		t.Fatal("test premise: ✳ must contain 0x9C")
	}
	for _, term := range []string{"\x07", "\x1b\\"} {
		for _, osc := range []string{"0", "2"} {
			s := New(120, 40, Options{})
			s.Write([]byte("\x1b[?1049h\x1b[H\x1b[2J"))
			s.Write([]byte("\x1b]" + osc + ";✳ Claude Code" + term))
			s.Write([]byte("\x1b[5;1H❯ "))
			snap := s.Snapshot()
			if snap.Title != "✳ Claude Code" {
				t.Errorf("OSC %s with %q: title %q, want %q", osc, term, snap.Title, "✳ Claude Code")
			}
			if txt := snap.Text(); strings.Contains(txt, "Claude Code") {
				t.Errorf("OSC %s with %q: title text leaked onto the screen:\n%s", osc, term, txt)
			}
			if snap.Lines[4] != "❯" {
				t.Errorf("prompt row = %q, want %q", snap.Lines[4], "❯")
			}
			s.Close()
		}
	}
}

// The title arrives split across writes at every byte, as pty reads may cut it.
func TestTitleSplitAcrossWrites(t *testing.T) {
	s := New(80, 24, Options{})
	defer s.Close()
	seq := []byte("\x1b]0;✳ Claude Code\x07hi")
	for i := range seq {
		s.Write(seq[i : i+1])
	}
	snap := s.Snapshot()
	if snap.Title != "✳ Claude Code" || snap.Lines[0] != "hi" {
		t.Fatalf("title %q line %q", snap.Title, snap.Lines[0])
	}
}

func TestTitleKeepsSemicolonsAndCodexSpinner(t *testing.T) {
	s := New(80, 24, Options{})
	defer s.Close()
	s.Write([]byte("\x1b]2;⠦ fix a; b | ~/src\x07"))
	if got := s.Title(); got != "⠦ fix a; b | ~/src" {
		t.Fatalf("title %q", got)
	}
	s.Write([]byte("\x1b]9;4;1;40\x07"))
	if p := s.Snapshot().Progress; p != "1;40" {
		t.Fatalf("progress %q", p)
	}
}

// Write must never block on terminal queries, with or without a reply sink.
func TestQueriesNeverBlockWrite(t *testing.T) {
	queries := "\x1b[c\x1b[>c\x1b[6n\x1b[?2026$p\x1b]10;?\x07\x1b]11;?\x07\x1b[5n"
	var mu sync.Mutex
	var got bytes.Buffer
	done := make(chan struct{})
	var once sync.Once
	s := New(80, 24, Options{OnReply: func(b []byte) {
		mu.Lock()
		got.Write(b)
		if got.Len() > 0 && bytes.Count(got.Bytes(), []byte("\x1b[?2026;")) >= 500 {
			once.Do(func() { close(done) })
		}
		mu.Unlock()
	}})
	for i := 0; i < 500; i++ {
		s.Write([]byte(queries))
	}
	<-done
	s.Close()
	mu.Lock()
	out := got.String()
	mu.Unlock()
	for _, want := range []string{"\x1b[?", "\x1b[1;1R", "\x1b]11;rgb:"} {
		if !strings.Contains(out, want) {
			t.Errorf("replies lack %q: %q", want, out[:min(len(out), 200)])
		}
	}

	discard := New(80, 24, Options{})
	for i := 0; i < 2000; i++ {
		discard.Write([]byte(queries))
	}
	discard.Close()
}

// A reply sink that blocks must not stall Write.
func TestBlockedReplySinkDoesNotStallWrite(t *testing.T) {
	release := make(chan struct{})
	s := New(80, 24, Options{OnReply: func([]byte) { <-release }})
	for i := 0; i < 5000; i++ {
		s.Write([]byte("\x1b[6n\x1b[c"))
	}
	if s.Snapshot().Seq != 5000 {
		t.Fatal("writes were lost")
	}
	close(release)
	s.Close()
}

func TestHistoryKeepsTextLines(t *testing.T) {
	// A small grid keeps the emulator's scrolling cheap; the history is the
	// full default size.
	s := New(40, 5, Options{})
	defer s.Close()
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "line %05d \x1b[31mred\x1b[0m\r\n", i)
		if b.Len() > 3000 {
			s.Write([]byte(b.String()))
			b.Reset()
		}
	}
	s.Write([]byte(b.String()))
	if n := s.HistoryLen(); n != DefaultHistory {
		t.Fatalf("history holds %d lines, want %d", n, DefaultHistory)
	}
	last := strings.Split(s.Text(3), "\n")
	if len(last) != 3 || last[2] != "line 19999 red" || last[0] != "line 19997 red" {
		t.Fatalf("Text(3) = %q", last)
	}
	all := strings.Split(s.Text(0), "\n")
	// 10,000 history lines + 4 screen lines (the 5th is the empty cursor row).
	if len(all) != DefaultHistory+4 {
		t.Fatalf("Text(0) has %d lines", len(all))
	}
	want := fmt.Sprintf("line %05d red", 20000-len(all))
	if all[0] != want {
		t.Fatalf("oldest kept line %q, want %q", all[0], want)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1] >= all[i] {
			t.Fatalf("history out of order at %d: %q then %q", i, all[i-1], all[i])
		}
	}
	if sb := s.emu.Scrollback().Len(); sb != 0 {
		t.Fatalf("emulator scrollback holds %d cell lines; they should have moved to text", sb)
	}
}

func TestOneWriteOfManyLinesLosesNothing(t *testing.T) {
	s := New(20, 3, Options{History: 50000})
	defer s.Close()
	var b strings.Builder
	for i := 0; i < 30000; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	s.Write([]byte(strings.ReplaceAll(b.String(), "\n", "\r\n")))
	lines := strings.Split(s.Text(0), "\n")
	if len(lines) != 30000 || lines[0] != "0" || lines[29999] != "29999" {
		t.Fatalf("got %d lines, first %q last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

func TestAltScreenKeepsNoHistory(t *testing.T) {
	s := New(120, 40, Options{})
	defer s.Close()
	s.Write([]byte("before\r\n\x1b[?1049h"))
	if !s.Snapshot().AltScreen {
		t.Fatal("alternate screen not reported")
	}
	for i := 0; i < 300; i++ {
		s.Write([]byte(fmt.Sprintf("\x1b[H\x1b[2Jframe %d\x1b[40;1H\n\n", i)))
	}
	s.Write([]byte("\x1b[?1049l"))
	snap := s.Snapshot()
	if snap.AltScreen || snap.Lines[0] != "before" {
		t.Fatalf("after leaving the alternate screen: alt=%v line0=%q", snap.AltScreen, snap.Lines[0])
	}
	if n := s.HistoryLen(); n != 0 {
		t.Fatalf("alternate-screen frames reached history: %d lines", n)
	}
}

// OnSettle never runs inside a synchronized-output frame, and runs once the
// frame closes even when the close is the last byte written.
func TestSettleNeverInsideSyncFrame(t *testing.T) {
	type obs struct {
		inSync bool
		text   string
	}
	settled := make(chan obs, 1000)
	s := New(120, 40, Options{SyncTimeout: time.Hour, SettleDelay: time.Millisecond, OnSettled: func(snap Snapshot) {
		settled <- obs{snap.InSync, snap.Text()}
	}})
	defer s.Close()
	for i := 0; i < 200; i++ {
		frame := fmt.Sprintf("\x1b[?2026h\x1b[H\x1b[2Jframe %d\x1b[20;1H? for shortcuts\x1b[?2026l", i)
		// Cut every frame in two, as pty reads do.
		cut := len(frame) / 2
		s.Write([]byte(frame[:cut]))
		s.Write([]byte(frame[cut:]))
	}
	// Open a frame and leave it open: no settle may report it.
	s.Write([]byte("\x1b[?2026h\x1b[H\x1b[2Jtorn"))
	s.Write([]byte("\x1b[?2026l"))
	for {
		o := <-settled
		if o.inSync {
			t.Fatalf("OnSettle ran inside a synchronized frame")
		}
		if strings.Contains(o.text, "torn") {
			break
		}
		if !strings.Contains(o.text, "? for shortcuts") {
			t.Fatalf("settled on a torn frame:\n%s", o.text)
		}
	}
}

func TestSyncTimeoutSettlesAbandonedFrame(t *testing.T) {
	settled := make(chan bool, 10)
	s := New(80, 24, Options{SyncTimeout: 5 * time.Millisecond, OnSettled: func(snap Snapshot) { settled <- snap.InSync }})
	defer s.Close()
	s.Write([]byte("\x1b[?2026hhalf a frame"))
	if inSync := <-settled; !inSync {
		t.Fatal("expected the abandoned frame to settle with InSync set")
	}
}

func TestRenderRedrawsScreen(t *testing.T) {
	src := New(60, 12, Options{})
	defer src.Close()
	src.Write([]byte("\x1b[?1049h\x1b[?2004h\x1b]0;✳ Claude Code\x07\x1b[H\x1b[2J"))
	src.Write([]byte("\x1b[1;31mred bold\x1b[0m plain \x1b[38;5;33mblue✳\x1b[0m\r\n"))
	src.Write([]byte("\x1b[5;3H──────────────────────────\x1b[6;1H❯ typed\x1b[6;8H"))
	want := src.Snapshot()
	r := src.Render()
	if !bytes.Contains(r, []byte("\x1b[?2004h")) || !bytes.Contains(r, []byte("\x1b[?1049h")) {
		t.Fatalf("render does not restore modes: %q", r)
	}
	if !bytes.Contains(r, []byte("31")) {
		t.Fatalf("render lost colour: %q", r)
	}
	dst := New(60, 12, Options{})
	defer dst.Close()
	dst.Write(r)
	got := dst.Snapshot()
	if strings.Join(got.Lines, "\n") != strings.Join(want.Lines, "\n") {
		t.Fatalf("redrawn screen differs:\n%s\n--- want\n%s", got.Text(), want.Text())
	}
	if got.CursorX != want.CursorX || got.CursorY != want.CursorY || got.Title != want.Title || !got.AltScreen {
		t.Fatalf("cursor/title/alt: got %d,%d %q %v want %d,%d %q", got.CursorX, got.CursorY, got.Title, got.AltScreen,
			want.CursorX, want.CursorY, want.Title)
	}
	if c := dst.emu.CellAt(0, 0); c == nil || c.Style.Fg == nil {
		t.Fatalf("first cell lost its colour: %+v", c)
	}
}

func TestResize(t *testing.T) {
	s := New(120, 40, Options{})
	defer s.Close()
	s.Write([]byte("hello"))
	s.Resize(80, 24)
	snap := s.Snapshot()
	if snap.Cols != 80 || snap.Rows != 24 || len(snap.Lines) != 24 || snap.Lines[0] != "hello" {
		t.Fatalf("after resize: %dx%d %d lines %q", snap.Cols, snap.Rows, len(snap.Lines), snap.Lines[0])
	}
}

// Readers and the writer run at once; go test -race checks the locking.
func TestConcurrentReadsAndWrites(t *testing.T) {
	var s *Screen
	s = New(120, 40, Options{OnSettle: func() { _ = s.Snapshot(); _ = s.Text(50) }})
	defer s.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = s.Snapshot()
				_ = s.Text(100)
				_ = s.Render()
				_ = s.Title()
			}
		}()
	}
	for i := 0; i < 300; i++ {
		s.Write([]byte(fmt.Sprintf("\x1b]0;⠦ step %d\x07line %d\r\n\x1b[6n", i, i)))
		if i%100 == 0 {
			s.Resize(100+i/100, 30)
		}
	}
	close(stop)
	wg.Wait()
}

func TestClosedScreenIgnoresWrites(t *testing.T) {
	s := New(80, 24, Options{})
	s.Write([]byte("kept"))
	s.Close()
	s.Close()
	s.Write([]byte("\r\nlost"))
	if txt := s.Snapshot().Text(); txt != "kept" {
		t.Fatalf("text after close: %q", txt)
	}
}

func TestFullResetClearsTrackedModes(t *testing.T) {
	s := New(80, 24, Options{})
	defer s.Close()
	s.Write([]byte("\x1b[?2004h\x1b[?2026hx"))
	if !s.Snapshot().InSync || !s.BracketedPaste() {
		t.Fatal("modes not tracked")
	}
	s.Write([]byte("\x1bc"))
	if s.Snapshot().InSync || s.BracketedPaste() {
		t.Fatal("RIS left stale modes")
	}
}
