package runtime

import (
	"context"
	"io"
	"time"
)

// Script is one program to run.
type Script struct {
	// Name is the path shown in errors and stack traces: "hello.mosh", "<eval>", "<stdin>".
	// A name ending in ".ts" is compiled as TypeScript; anything else as JavaScript.
	Name   string
	Source []byte
}

// Options configure one Run. The zero value runs with no arguments, an empty environment,
// os.Stdout/os.Stderr as the streams and no timeout.
type Options struct {
	Args   []string
	Env    map[string]string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Timeout bounds the whole run; 0 means none. On expiry Run returns an *exitcode.Error with
	// code exitcode.Timeout ("script timed out after 5s").
	Timeout time.Duration
	// Dir is the base directory for relative imports. Default: the directory of Script.Name
	// (the current directory for "<eval>" and "<stdin>").
	Dir string
	// Install installs globals (builtins.Install); it runs on the loop goroutine after the
	// runtime's own globals (console, timers, exit) and before the script.
	Install func(vu VU) error
	// DrainGrace is how long a run that ended early (exit, error, Ctrl-C, timeout) waits for Go
	// work that still holds a reservation; 0 means DefaultDrainGrace. Builtins see the run's
	// context cancelled first, so they normally return at once; the bound keeps a misbehaving
	// builtin from hanging the process.
	DrainGrace time.Duration
}

// Run compiles and runs s to completion: until the script's top-level code has finished, its
// promise has settled, and no timer or reserved callback is left. It returns nil on success
// and an *exitcode.Error otherwise:
//   - exitcode.Script (6): syntax error, uncaught exception, unhandled rejection, a top-level
//     await that can never settle, a Go panic in a builtin;
//   - the script's own code for exit(n) (nil for exit(0));
//   - exitcode.Timeout (2) when Options.Timeout passes;
//   - exitcode.Interrupted (130) when ctx is cancelled (Ctrl-C); if ctx's cause already carries
//     an exit code, that error is returned instead.
func Run(ctx context.Context, s Script, o Options) error {
	return run(ctx, s, o)
}
