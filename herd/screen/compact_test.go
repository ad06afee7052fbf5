package screen

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
)

// gridSize is the number of live cells of emulator screen i (0 main, 1 alternate).
func gridSize(s *Screen, i int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	scrs := screens(s.emu)
	n := 0
	for _, l := range bufferOf(&scrs[i]).Lines {
		n += len(l)
	}
	return n
}

// rest puts s at rest now, as CompactAfter of quiet would.
func rest(s *Screen) {
	s.mu.Lock()
	s.restLocked()
	s.mu.Unlock()
}

// The alternate grid does not exist until a program enters the alternate screen; at rest the
// grid not in use is packed (main) or released (alternate).
func TestAlternateGridAllocatedOnUse(t *testing.T) {
	s := New(120, 40, Options{CompactAfter: -1})
	defer s.Close()
	s.Write([]byte("hello\r\n"))
	if n := gridSize(s, 1); n > 1 {
		t.Fatalf("the alternate grid holds %d cells before any program used it", n)
	}
	if n := gridSize(s, 0); n != 120*40 {
		t.Fatalf("the main grid in use holds %d cells, want %d", n, 120*40)
	}
	s.Write([]byte("\x1b[?1049hin the alternate screen"))
	if n := gridSize(s, 1); n != 120*40 {
		t.Fatalf("the alternate grid in use holds %d cells, want %d", n, 120*40)
	}
	rest(s)
	if n, m := gridSize(s, 0), gridSize(s, 1); n != 0 || m != 0 {
		t.Fatalf("at rest on the alternate screen %d main and %d alternate cells are live, want none", n, m)
	}
	if got := s.Snapshot().Lines[0]; got != "in the alternate screen" {
		t.Fatalf("alternate screen reads %q", got)
	}
	if n := gridSize(s, 0); n != 0 {
		t.Fatalf("reading the alternate screen unpacked the main grid (%d cells)", n)
	}
	s.Write([]byte("\x1b[?1049l"))
	if got := s.Snapshot().Lines[0]; got != "hello" {
		t.Fatalf("the main screen came back as %q, want hello", got)
	}
	rest(s)
	if n := gridSize(s, 1); n > 1 {
		t.Fatalf("at rest off the alternate screen its grid holds %d cells", n)
	}
	// A resize off the alternate screen does not bring its grid back.
	s.Resize(100, 30)
	if n := gridSize(s, 1); n > 1 {
		t.Fatalf("a resize allocated the unused alternate grid (%d cells)", n)
	}
	s.Write([]byte("\x1b[?1049h"))
	if n := gridSize(s, 1); n != 100*30 {
		t.Fatalf("the alternate grid after a resize holds %d cells, want %d", n, 100*30)
	}
}

// richOutput draws every kind of cell: colours of each kind, attributes, underline styles and
// colours, hyperlinks, wide characters and emoji, on both screens, with a scroll region.
func richOutput() []string {
	return []string{
		"\x1b[1;31mbold red\x1b[0m \x1b[38;5;174mindexed\x1b[0m \x1b[38;2;10;20;30mtruecolor\x1b[0m\r\n",
		"\x1b[4:3m\x1b[58;5;33mcurly\x1b[59m\x1b[24m \x1b[7mreverse\x1b[27m \x1b[3;9mitalic strike\x1b[0m\r\n",
		"\x1b]8;id=x;https://example.com/a\x1b\\link\x1b]8;;\x1b\\ 日本語 🚀 émoji ✳\r\n",
		"\x1b[44m\x1b[2Kfull blue line\x1b[0m\r\n",
		"\x1b[?1049h\x1b[H\x1b[2J\x1b[32m╭──────╮\x1b[0m\x1b[2;1H│ ❯\u00a0x │\x1b[5;10r\x1b[5;1Hregion",
		"\x1b[10;1H\x1b[1;33mscrolled\x1b[0m\n\n\n\n\x1b[r\x1b[20;5H\x1b[48;2;1;2;3m  \x1b[0m",
		"\x1b[?1049l\x1b[3;3Hback on main \x1b[35mmagenta",
	}
}

func cellsOf(s *Screen) [][]uv.Cell {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]uv.Cell
	for _, l := range bufferOf(&screens(s.emu)[0]).Lines {
		out = append(out, append([]uv.Cell(nil), l...))
	}
	return out
}

// Packing is lossless: every cell, with its colour values of the same types, comes back.
func TestPackRoundTrip(t *testing.T) {
	s := New(60, 20, Options{CompactAfter: -1})
	defer s.Close()
	for _, w := range richOutput() {
		s.Write([]byte(w))
	}
	before := cellsOf(s)
	s.mu.Lock()
	p := pack(bufferOf(&screens(s.emu)[0]).Lines)
	s.mu.Unlock()
	after := p.unpack()
	if len(after) != len(before) {
		t.Fatalf("%d lines came back, want %d", len(after), len(before))
	}
	for y := range before {
		if !reflect.DeepEqual([]uv.Cell(after[y]), before[y]) {
			t.Fatalf("line %d changed:\n got %#v\nwant %#v", y, after[y], before[y])
		}
	}
	if p.size() > 60*20*112/20 {
		t.Fatalf("a packed 60×20 grid takes %d bytes, more than a twentieth of its cells", p.size())
	}
}

// A screen packed between any two writes draws exactly what a screen never packed draws:
// the same text, the same rendering (colours, links, modes, cursor), the same history.
func TestPackedScreenDrawsLikeALiveOne(t *testing.T) {
	live := New(120, 40, Options{CompactAfter: -1})
	defer live.Close()
	packed := New(120, 40, Options{CompactAfter: -1})
	defer packed.Close()
	var chunks []string
	chunks = append(chunks, richOutput()...)
	work := string(Workload(256 << 10))
	for len(work) > 0 {
		n := min(len(work), 3000)
		chunks = append(chunks, work[:n])
		work = work[n:]
	}
	for i, c := range chunks {
		live.Write([]byte(c))
		packed.Write([]byte(c))
		packed.mu.Lock()
		packed.restLocked()
		packed.mu.Unlock()
		if i%7 == 3 {
			live.Resize(100+i%3, 38)
			packed.Resize(100+i%3, 38)
		}
		a, b := live.Snapshot(), packed.Snapshot()
		a.Output, b.Output = time.Time{}, time.Time{}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("after chunk %d the packed screen reads\n%s\nwant\n%s", i, b.Text(), a.Text())
		}
		if ra, rb := live.Render(), packed.Render(); string(ra) != string(rb) {
			t.Fatalf("after chunk %d the packed screen renders differently", i)
		}
	}
	if a, b := live.Text(0), packed.Text(0); a != b {
		t.Fatalf("history differs: %d vs %d bytes", len(a), len(b))
	}
}

// Once output has been quiet for CompactAfter the grid in use is packed; the next write
// unpacks it and carries on drawing where it was.
func TestGridPackedAtRest(t *testing.T) {
	told := make(chan struct{}, 16)
	s := New(120, 40, Options{CompactAfter: time.Millisecond, OnRest: func() { told <- struct{}{} }})
	defer s.Close()
	rested := make(chan struct{}, 16)
	s.mu.Lock()
	s.onCompact = func() { rested <- struct{}{} }
	s.mu.Unlock()
	s.Write([]byte("\x1b[?1049h\x1b[1;1H\x1b[32mwaiting for input\x1b[0m\x1b[2;1H❯ "))
	select {
	case <-rested:
	case <-time.After(time.Minute):
		t.Fatal("the grid was never packed")
	}
	if n, m := gridSize(s, 0), gridSize(s, 1); n != 0 || m != 0 {
		t.Fatalf("at rest %d main and %d alternate cells are live, want none", n, m)
	}
	select { // the daemon hears of it, to return the memory
	case <-told:
	case <-time.After(time.Minute):
		t.Fatal("OnRest was not called")
	}
	s.Write([]byte("typed"))
	if got := s.Snapshot().Lines; got[0] != "waiting for input" || got[1] != "❯ typed" {
		t.Fatalf("after rest the screen reads %q", got[:2])
	}
}

// history keeps its lines compressed and in order, and never more than it was asked to.
func TestHistoryIsCompact(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	var src []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, strings.Split(string(b), "\n")...)
	}
	h := newHistory(DefaultHistory)
	raw := 0
	var want []string
	for i := 0; i < DefaultHistory+1500; i++ {
		l := src[i%len(src)] + " " + strings.Repeat("x", i%7)
		want = append(want, l)
		raw += len(l) + 1
		h.push(l)
	}
	want = want[len(want)-DefaultHistory:]
	if h.len() != DefaultHistory {
		t.Fatalf("history holds %d lines, want %d", h.len(), DefaultHistory)
	}
	got := h.last(DefaultHistory)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("history lost or reordered lines")
	}
	if got := h.last(3); !reflect.DeepEqual(got, want[len(want)-3:]) {
		t.Fatalf("last 3 = %q", got)
	}
	stored := cap(h.open)
	for _, b := range h.blocks {
		stored += cap(b.z)
	}
	// Plain strings cost the text plus a 16-byte header and allocation slack per line.
	if plain := raw + 16*(DefaultHistory+1500); stored*2 > plain {
		t.Fatalf("history stores %d bytes for %d bytes of lines: not compact", stored, plain)
	}
}
