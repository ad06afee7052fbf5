// Package snapshot is the picture of a member's screen at one moment, as plain data: what the
// emulator in herd/screen produces and what the classifier in herd/state reads. It is a leaf
// apart from herd/screen so that the engines table and the classifier, which the herd client
// shares, do not link the VT emulator (herd/deps_test.go keeps it so).
package snapshot

import (
	"strings"
	"time"
)

// Snapshot is the visible screen at one moment.
type Snapshot struct {
	// Lines has exactly Rows entries, one per visible row, with trailing
	// spaces trimmed; a wide character appears once.
	Lines []string `json:"lines"`
	Cols  int      `json:"cols"`
	Rows  int      `json:"rows"`
	// Title is the last OSC 0/2 title ("" if none was set).
	Title string `json:"title"`
	// Progress is the last OSC 9;4 progress report without the "4;" prefix
	// (e.g. "1;40", "0"), "" if none.
	Progress  string `json:"progress,omitempty"`
	AltScreen bool   `json:"altScreen"`
	// InSync is true while a synchronized-output frame (DEC 2026) is open:
	// the grid may be half drawn.
	InSync       bool `json:"inSync"`
	CursorX      int  `json:"cursorX"`
	CursorY      int  `json:"cursorY"`
	CursorHidden bool `json:"cursorHidden"`
	// Seq counts Writes and Resizes; equal Seq means an identical screen.
	Seq uint64 `json:"seq"`
	// Output is when output last arrived (zero before the first Write).
	Output time.Time `json:"output"`
}

// Text returns the visible lines joined by newlines, trailing empty lines
// dropped.
func (s Snapshot) Text() string {
	n := len(s.Lines)
	for n > 0 && s.Lines[n-1] == "" {
		n--
	}
	return strings.Join(s.Lines[:n], "\n")
}
