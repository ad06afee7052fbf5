package snapshot

// Grid is the visible screen with its looks: each row as runs of cells that share a style, and
// the cursor. It is what the dashboard draws (herd/web), so a screen in the browser shows the
// colours, bold and cursor the terminal shows without re-emulating the member's output there.
type Grid struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
	// Lines has exactly Rows entries; trailing unstyled blanks are dropped.
	Lines        [][]Run `json:"lines"`
	CursorX      int     `json:"cursorX"`
	CursorY      int     `json:"cursorY"`
	CursorHidden bool    `json:"cursorHidden,omitempty"`
	AltScreen    bool    `json:"altScreen,omitempty"`
}

// Run is consecutive cells of one style. A wide character (two columns) is a run of its own
// with Wide set, so a renderer can give it two columns whatever its font does.
type Run struct {
	Text string `json:"t"`
	// Fg and Bg are "#rrggbb", or "" for the terminal's default.
	Fg        string `json:"fg,omitempty"`
	Bg        string `json:"bg,omitempty"`
	Bold      bool   `json:"b,omitempty"`
	Faint     bool   `json:"f,omitempty"`
	Italic    bool   `json:"i,omitempty"`
	Underline bool   `json:"u,omitempty"`
	Inverse   bool   `json:"r,omitempty"`
	Strike    bool   `json:"s,omitempty"`
	Wide      bool   `json:"w,omitempty"`
}
