// Package repl is moshscript's interactive shell: one VM for the session whose event loop keeps
// running between inputs, history across sessions, multi-line input, awaited promise results,
// tab completion, Ctrl-C to clear a line or interrupt an evaluation, Ctrl-D to leave.
package repl

import (
	"context"
	"io"

	"github.com/mosh-dev/mosh/runtime"
)

// Options configure a REPL session.
type Options struct {
	// Stdin is read for input. When it is the process's terminal (os.Stdin on a tty, and Stdout
	// is a terminal too) the line editor is used; any other reader is read line by line
	// without prompts or editing (piped input).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// HistoryPath is the history file ("" = no history). Created 0600 in a 0700 directory.
	HistoryPath string
	// Install installs builtins into the session's VM, as runtime.Options.Install does.
	Install func(vu runtime.VU) error
	Env     map[string]string
	Args    []string
	// Banner is the first line an interactive session prints (not piped input); it should name
	// .help. Empty: DefaultBanner.
	Banner string
}

// DefaultBanner is the banner when Options.Banner is empty.
const DefaultBanner = "moshscript REPL: .help for help, .exit or Ctrl-D to leave"

// Run runs the REPL until Ctrl-D, .exit, exit(n) or ctx ends. It returns nil on a normal end,
// and the code of exit(n) as an *exitcode.Error. Ctrl-C is handled here (clear the line, or
// interrupt the running evaluation): the caller must not end ctx on SIGINT.
func Run(ctx context.Context, o Options) error {
	return run(ctx, o)
}
