//go:build !windows

package main

// Output helpers shared by the herd verbs: one place decides how a table looks on a terminal
// (UPPERCASE header, padded columns, colour, relative times) and off one (tab-separated rows, no
// header, RFC3339 times), and how --json is written (indented, lowerCamel keys from the herd types).

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/runtime/scriptverb"
)

// outputStyle is what a verb knows about where its stdout goes.
type outputStyle struct {
	tty   bool // stdout is a terminal: header, padding, relative times
	color bool // tty and NO_COLOR unset and TERM != dumb
	home  string
	now   time.Time
}

// newOutputStyle decides the style from the terminal flag and the environment lookup. Colour is
// only used on a terminal, never with NO_COLOR set to a non-empty value (no-color.org) or TERM=dumb.
func newOutputStyle(tty bool, getenv func(string) string) outputStyle {
	color := tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	return outputStyle{tty: tty, color: color, home: getenv("HOME"), now: time.Now()}
}

// ANSI colours for states: amber blocked, green working, dim done/idle, red gone.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

func stateColor(state string) string {
	switch state {
	case herd.StateBlocked:
		return ansiYellow
	case herd.StateWorking:
		return ansiGreen
	case herd.StateGone:
		return ansiRed
	case herd.StateDone, herd.StateIdle:
		return ansiDim
	}
	return ""
}

// cell is one table value: Text is what is printed, Color (an ANSI prefix) is applied on a
// colour terminal after padding so alignment counts visible characters only.
type cell struct {
	Text  string
	Color string
}

func plain(s string) cell { return cell{Text: s} }

// table collects rows and writes them in the style's format.
type table struct {
	header []string
	rows   [][]cell
}

func newTable(header ...string) *table { return &table{header: header} }

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// write prints the table. Off a terminal every row is tab-separated with no header and tabs or
// newlines inside values replaced by spaces, so `cut -f` and `while IFS=$'\t' read` work.
func (t *table) write(w io.Writer, st outputStyle) error {
	var b strings.Builder
	if !st.tty {
		for _, r := range t.rows {
			for i, c := range r {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(tsvField(c.Text))
			}
			b.WriteByte('\n')
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	rows := make([][]cell, len(t.rows))
	for i, r := range t.rows {
		rows[i] = make([]cell, len(r))
		for j, c := range r {
			c.Text = escapeControls(c.Text, "")
			rows[i][j] = c
		}
	}
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = runewidth.StringWidth(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], runewidth.StringWidth(c.Text))
			}
		}
	}
	line := func(cells []cell, header bool) {
		for i, c := range cells {
			last := i == len(cells)-1
			text := c.Text
			if !last {
				text = runewidth.FillRight(text, widths[i])
			}
			switch {
			case header && st.color:
				text = ansiBold + text + ansiReset
			case c.Color != "" && st.color:
				// Colour only the value, not the padding, so trailing spaces stay plain.
				pad := text[len(c.Text):]
				text = c.Color + c.Text + ansiReset + pad
			}
			b.WriteString(text)
			if !last {
				b.WriteString("  ")
			}
		}
		b.WriteByte('\n')
	}
	hdr := make([]cell, len(t.header))
	for i, h := range t.header {
		hdr[i] = plain(strings.ToUpper(h))
	}
	line(hdr, true)
	for _, r := range rows {
		line(r, false)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func tsvField(s string) string {
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
	}
	if s == "" {
		return "-"
	}
	return escapeControls(s, "")
}

// escapeControls spells the control characters of s (C0 but those in keep, DEL, C1) as Go
// escapes (\x1b, \x03, \n), so text a member or a prompt carried can never drive the reader's
// terminal or break a parser reading our output.
func escapeControls(s, keep string) string {
	clean := true
	for _, r := range s {
		if isControl(r) && !strings.ContainsRune(keep, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isControl(r) || strings.ContainsRune(keep, r) {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			fmt.Fprintf(&b, `\x%02x`, r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }

// fmtTime renders a unix-millisecond instant: relative ("3m", "2h") on a terminal, RFC3339 off
// one, "-" when unknown.
func (st outputStyle) fmtTime(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	t := time.UnixMilli(ms)
	if !st.tty {
		return t.UTC().Format(time.RFC3339)
	}
	return fmtAge(st.now.Sub(t))
}

// fmtAge is a short human age: 12s, 5m, 3h, 2d.
func fmtAge(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// abbrevHome replaces the home directory prefix with ~ (only on a path boundary).
func (st outputStyle) abbrevHome(p string) string {
	h := strings.TrimRight(st.home, "/")
	if h == "" || p == "" {
		return p
	}
	if p == h {
		return "~"
	}
	if strings.HasPrefix(p, h+"/") {
		return "~" + p[len(h):]
	}
	return p
}

// paint colours s when the style allows it.
func (st outputStyle) paint(color, s string) string {
	if !st.color || color == "" {
		return s
	}
	return color + s + ansiReset
}

// stateLabel joins a state and its blocked sub-kind the way `herd report` spells it.
func stateLabel(state, blockedOn string) string {
	if blockedOn != "" {
		return state + ":" + blockedOn
	}
	return state
}

// parseCLIDuration reads a CLI duration: 500ms, 2s, 10m, 1h, or a bare number of seconds (the
// shared scriptverb rule). Empty or zero means no deadline.
func parseCLIDuration(s string) (time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	return scriptverb.ParseDuration(s, time.Second)
}
