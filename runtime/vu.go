// Package runtime runs moshscript: JavaScript on goja with an event loop that mosh owns.
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
	// goroutine. An error returned by that argument fails the script.
	RegisterCallback() func(func() error)
	// Stdout and Stderr are the script's streams (console.log writes to Stdout).
	Stdout() io.Writer
	Stderr() io.Writer
}
