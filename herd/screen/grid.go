package screen

import (
	"fmt"
	"image/color"

	uv "github.com/charmbracelet/ultraviolet"

	"github.com/mosh-dev/mosh/herd/screen/snapshot"
)

// Grid returns the visible screen with its looks (snapshot.Grid): runs of same-styled cells per
// row, wide characters as runs of their own, and the cursor. It reads the emulator's cells under
// the screen's lock, like Render.
func (s *Screen) Grid() snapshot.Grid {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.useLocked()
	g := snapshot.Grid{Cols: s.cols, Rows: s.rows, Lines: make([][]snapshot.Run, s.rows),
		CursorHidden: s.emu.CursorHidden(), AltScreen: s.emu.IsAltScreen()}
	pos := s.emu.CursorPosition()
	g.CursorX, g.CursorY = pos.X, pos.Y
	for y := 0; y < s.rows; y++ {
		g.Lines[y] = gridRow(s.emu.CellAt, s.cols, y)
	}
	return g
}

// gridRow turns row y into runs. Continuation cells of a wide character (width 0) are skipped;
// trailing blanks with no background are dropped.
func gridRow(cellAt func(x, y int) *uv.Cell, cols, y int) []snapshot.Run {
	var runs []snapshot.Run
	var cur snapshot.Run
	open := false
	flush := func() {
		if open {
			runs = append(runs, cur)
			open = false
		}
	}
	for x := 0; x < cols; x++ {
		c := cellAt(x, y)
		text, st, width := " ", uv.Style{}, 1
		if c != nil {
			if c.Width == 0 && c.Content == "" {
				continue // the second column of a wide character
			}
			text, st, width = c.Content, c.Style, c.Width
			if text == "" {
				text = " "
			}
		}
		r := runOf(st)
		if width > 1 {
			flush()
			r.Text, r.Wide = text, true
			runs = append(runs, r)
			continue
		}
		if open && sameLook(cur, r) {
			cur.Text += text
			continue
		}
		flush()
		r.Text = text
		cur, open = r, true
	}
	flush()
	// Drop trailing blanks that draw nothing.
	for len(runs) > 0 {
		last := &runs[len(runs)-1]
		if last.Bg != "" || last.Inverse || last.Underline || last.Wide {
			break
		}
		trimmed := trimRightSpace(last.Text)
		if trimmed != "" {
			last.Text = trimmed
			break
		}
		runs = runs[:len(runs)-1]
	}
	return runs
}

func trimRightSpace(s string) string {
	i := len(s)
	for i > 0 && s[i-1] == ' ' {
		i--
	}
	return s[:i]
}

func runOf(st uv.Style) snapshot.Run {
	return snapshot.Run{
		Fg: hexColor(st.Fg), Bg: hexColor(st.Bg),
		Bold: st.Attrs&uv.AttrBold != 0, Faint: st.Attrs&uv.AttrFaint != 0, Italic: st.Attrs&uv.AttrItalic != 0,
		Inverse: st.Attrs&uv.AttrReverse != 0, Strike: st.Attrs&uv.AttrStrikethrough != 0,
		Underline: st.Underline != uv.UnderlineNone,
	}
}

func sameLook(a, b snapshot.Run) bool {
	a.Text, b.Text = "", ""
	return a == b
}

// hexColor is c as "#rrggbb" ("" for the default colour). Basic and indexed colours resolve to
// the xterm palette the emulator's colour types carry.
func hexColor(c color.Color) string {
	if c == nil {
		return ""
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}
