package repl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
)

// historyLimit is how many entries are kept across sessions.
const historyLimit = 1000

// history is the REPL's input history, kept in a file (0600 in a 0700 directory: inputs can
// hold secrets).
type history struct {
	path    string
	entries []string
	liner   *liner.State // the editor's own history, when the line editor is used
}

func openHistory(path string) (*history, error) {
	h := &history{path: path}
	if path == "" {
		return h, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the REPL history directory: %w (set MOSH_HOME to a writable directory)", err)
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return h, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading REPL history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			h.entries = append(h.entries, decodeEntry(line))
		}
	}
	if len(h.entries) > historyLimit {
		h.entries = h.entries[len(h.entries)-historyLimit:]
	}
	return h, sc.Err()
}

// load hands the entries to the line editor.
func (h *history) load(l *liner.State) {
	h.liner = l
	for _, e := range h.entries {
		l.AppendHistory(e)
	}
}

// add records one evaluated input as one entry. A multi-line input is joined by spaces when that
// keeps its meaning (no // comment, no template literal), and kept with its newlines otherwise
// (the file stores such an entry as one JSON string: encodeEntry), so it comes back whole after
// a restart. Inputs starting with a space are not recorded (as in shells: a way to keep a
// secret out).
func (h *history) add(src string) {
	if src == "" || strings.HasPrefix(src, " ") {
		return
	}
	it := src
	if strings.Contains(src, "\n") && !strings.Contains(src, "//") && !strings.Contains(src, "`") {
		lines := strings.Split(src, "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		it = strings.Join(lines, " ")
	}
	if n := len(h.entries); n == 0 || h.entries[n-1] != it {
		h.entries = append(h.entries, it)
		if h.liner != nil {
			h.liner.AppendHistory(it)
		}
	}
	if len(h.entries) > historyLimit {
		h.entries = h.entries[len(h.entries)-historyLimit:]
	}
	_ = h.save() // after every input, so a crash or a kill loses nothing
}

// save writes the history file with mode 0600 (also tightening an existing file's mode).
func (h *history) save() error {
	if h.path == "" {
		return nil
	}
	tmp := h.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, e := range h.entries {
		_, _ = w.WriteString(encodeEntry(e))
		_ = w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, h.path)
}

// encodeEntry is an entry as one line of the history file: as it is, or, when it holds a
// newline, as a JSON string. decodeEntry reads either; a plain line that happens to be a JSON
// string without a newline ("x") stays as it is.
func encodeEntry(e string) string {
	if !strings.ContainsAny(e, "\n\r") {
		return e
	}
	b, _ := json.Marshal(e)
	return string(b)
}

func decodeEntry(line string) string {
	if !strings.HasPrefix(line, `"`) {
		return line
	}
	var s string
	if err := json.Unmarshal([]byte(line), &s); err != nil || !strings.ContainsAny(s, "\n\r") {
		return line
	}
	return s
}
