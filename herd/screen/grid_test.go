package screen

import (
	"testing"

	"github.com/mosh-dev/mosh/herd/screen/snapshot"
)

func TestGridCarriesColoursBoldWideAndCursor(t *testing.T) {
	s := New(20, 3, Options{})
	defer s.Close()
	s.Write([]byte("\x1b[1;31mred\x1b[0m plain 字x\r\n\x1b[44m  \x1b[0m\x1b[3;5H"))
	g := s.Grid()
	if g.Cols != 20 || g.Rows != 3 || len(g.Lines) != 3 {
		t.Fatalf("grid size %dx%d with %d lines", g.Cols, g.Rows, len(g.Lines))
	}
	row := g.Lines[0]
	if len(row) < 4 {
		t.Fatalf("row 0 runs = %+v", row)
	}
	if row[0].Text != "red" || !row[0].Bold || row[0].Fg == "" {
		t.Errorf("first run = %+v, want bold coloured \"red\"", row[0])
	}
	if row[1].Text != " plain " || row[1].Bold || row[1].Fg != "" {
		t.Errorf("second run = %+v, want plain \" plain \"", row[1])
	}
	if !row[2].Wide || row[2].Text != "字" {
		t.Errorf("third run = %+v, want the wide 字 alone", row[2])
	}
	if row[3].Text != "x" {
		t.Errorf("after the wide character = %+v, want x (its second column skipped)", row[3])
	}
	if got := g.Lines[1]; len(got) != 1 || got[0].Bg == "" || got[0].Text != "  " {
		t.Errorf("row 1 = %+v, want two blanks on a background (kept: they draw)", got)
	}
	if len(g.Lines[2]) != 0 {
		t.Errorf("row 2 = %+v, want empty (trailing blanks dropped)", g.Lines[2])
	}
	if g.CursorX != 4 || g.CursorY != 2 || g.CursorHidden {
		t.Errorf("cursor = (%d,%d hidden %v), want (4,2) shown", g.CursorX, g.CursorY, g.CursorHidden)
	}
	var _ snapshot.Grid = g
}
