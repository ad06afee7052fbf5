// Package runtime runs moshscript: JavaScript on goja with an event loop that mosh owns.
//
// The language is JavaScript as goja runs it, plus top-level await and import/export between
// local files (relative paths: ./lib.mosh, ../x.js, ./y.ts). A script that uses neither is
// compiled by goja directly; one that does is bundled by esbuild first (ESM, ESNext, with a
// source map), so stack traces and errors still name the original file, line and column. In a
// bundled script, top-level let/const/function are local to the script rather than globals.
//
// The event loop runs until the queue is empty, no timer is pending and no Go work holds a
// reservation (VU.RegisterCallback, Async). A top-level promise that is still pending when
// nothing is left to settle it ends the run with an error instead of hanging.
//
// Builtins (package builtins) are installed through Options.Install. They run on the loop
// goroutine; slow work goes through Async, errors through Throw, never a bare Go panic.
package runtime

import (
	"context"
	"io"

	"github.com/dop251/goja"
)

// VU is what a builtin sees of one script run (the name follows k6's "virtual user"): the goja
// runtime, which only the loop goroutine may touch, the run's context, and the loop's callback
// reservation.
type VU interface {
	// Runtime is the VM. Only call it on the loop goroutine (inside a builtin call or a callback).
	Runtime() *goja.Runtime
	// Context is cancelled on Ctrl-C, on --timeout, and when the run ends. Go work started by a
	// builtin must watch it.
	Context() context.Context
	// RegisterCallback reserves a slot: the loop will not finish while a slot is open. The returned
	// function must be called exactly once, from any goroutine; its argument then runs on the loop
	// goroutine. An error returned by that argument fails the script. Calling it a second time
	// is a bug: it panics in tests (as k6's does) and does nothing in the mosh binary. Call RegisterCallback itself only on the loop goroutine.
	RegisterCallback() func(func() error)
	// Stdout and Stderr are the script's streams (console.log writes to Stdout).
	Stdout() io.Writer
	Stderr() io.Writer
	// Stdin is the script's standard input (never nil: an empty reader when none was given).
	Stdin() io.Reader
	// Args are the script's arguments (after the file name); Env its environment.
	Args() []string
	Env() map[string]string
	// ScriptName is Script.Name ("hello.mosh", "<eval>", "<stdin>"); Dir the base directory for
	// relative paths the script names (Options.Dir, default the script's directory).
	ScriptName() string
	Dir() string
	// OnEnd registers f to run once when the run ends, however it ends (done, an error, exit,
	// Ctrl-C, --timeout): after the run's context is cancelled and its pending Go work drained,
	// last registered first. Run (and Session.Close) return only after every f returned, so
	// cleanup a builtin owes (killing a script's temporary members) is finished before the
	// process can exit. f runs off the loop goroutine and must not touch the VM. Safe from any
	// goroutine; registered after the end, f runs at once.
	OnEnd(f func())
}
