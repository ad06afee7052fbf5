package repl

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/peterh/liner"
	"golang.org/x/term"
)

// errAborted: Ctrl-C at the prompt.
var errAborted = errors.New("aborted")

// editor reads one line of input.
type editor interface {
	// Prompt shows p and returns the line typed, errAborted for Ctrl-C, io.EOF for Ctrl-D on an
	// empty line or the end of input.
	Prompt(p string) (string, error)
	// Interactive reports whether a person is typing (prompts are shown).
	Interactive() bool
	Close() error
}

// newEditor picks peterh/liner when stdin is the process's terminal and stdout is one too (liner
// drives fd 0 and 1 directly); otherwise input is read line by line with no prompts, so piped
// input and tests get plain text out.
func newEditor(in io.Reader, hist *history, complete func(line string, pos int) (string, []string, string)) editor {
	if in == nil {
		in = os.Stdin
	}
	if f, ok := in.(*os.File); ok && f.Fd() == os.Stdin.Fd() &&
		term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd())) && liner.TerminalSupported() {
		l := liner.NewLiner()
		l.SetCtrlCAborts(true)
		l.SetTabCompletionStyle(liner.TabPrints)
		l.SetWordCompleter(liner.WordCompleter(complete))
		hist.load(l)
		return &linerEditor{l: l}
	}
	return &lineEditor{sc: bufio.NewScanner(in)}
}

type linerEditor struct{ l *liner.State }

func (e *linerEditor) Prompt(p string) (string, error) {
	line, err := e.l.Prompt(p)
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", errAborted
	}
	return line, err
}

func (e *linerEditor) Interactive() bool { return true }
func (e *linerEditor) Close() error      { return e.l.Close() }

// lineEditor reads piped input.
type lineEditor struct{ sc *bufio.Scanner }

func (e *lineEditor) Prompt(string) (string, error) {
	if e.sc.Scan() {
		return e.sc.Text(), nil
	}
	if err := e.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

func (e *lineEditor) Interactive() bool { return false }
func (e *lineEditor) Close() error      { return nil }
