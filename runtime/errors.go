package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
)

// exitRequest is the interrupt value of exit(n): goja's interrupts cannot be caught by try/catch
// and skip finally blocks, which is what "ends the script at once" means.
type exitRequest struct{ code int }

func (e *exitRequest) Error() string { return fmt.Sprintf("exit(%d)", e.code) }

// timeoutError is the context cause when Options.Timeout passes.
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string { return fmt.Sprintf("script timed out after %s", e.after) }

// panicError is a Go panic caught on the loop goroutine or in Async work.
type panicError struct {
	value any
	where string // the Go function that panicked, when known
}

func (e *panicError) Error() string {
	where := ""
	if e.where != "" {
		where = " in " + e.where
	}
	return fmt.Sprintf("internal error: Go panic%s: %v (this is a bug in mosh or one of its builtins, not in your script; please report it)", where, e.value)
}

// JSError is an uncaught exception or unhandled rejection, rendered like Node:
// "Uncaught Error: boom\n    at hello.mosh:3:5".
type JSError struct {
	Prefix  string // "Uncaught" or "Uncaught (in promise)"
	Message string // the error's stack (or the thrown value, inspected)
	Value   goja.Value
	// Go is the Go error a GoError carries (Throw, Async rejections), if any. When it has an
	// exit code (exitcode.New), the run exits with that code instead of exitcode.Script.
	Go error
}

func (e *JSError) Error() string { return e.Prefix + " " + e.Message }
func (e *JSError) Unwrap() error { return e.Go }

// goErrorOf returns the Go error inside a GoError value.
func goErrorOf(v goja.Value) error {
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	inner := obj.Get("value")
	if inner == nil {
		return nil
	}
	err, _ := inner.Export().(error)
	return err
}

// gojaFrameSuffix is goja's program counter in stack frames ("file:3:5(12)"), noise to a user.
var gojaFrameSuffix = lazyRegexp(`(:\d+:\d+)\(\d+\)`)

// cleanStack rewrites goja's stack text into the familiar V8 shape.
func cleanStack(s string) string {
	s = gojaFrameSuffix().ReplaceAllString(s, "$1")
	s = strings.ReplaceAll(s, "\tat ", "    at ")
	return strings.TrimRight(s, "\n")
}

// describeThrown renders a thrown value with its location: an Error's stack, or the inspected
// value followed by the frames of the exception that carried it (when there is one).
func describeThrown(vm *goja.Runtime, v goja.Value, frames []goja.StackFrame) string {
	if obj, ok := v.(*goja.Object); ok && isError(vm, obj) {
		if st := obj.Get("stack"); st != nil && !goja.IsUndefined(st) && !goja.IsNull(st) {
			return cleanStack(st.String())
		}
	}
	var b strings.Builder
	b.WriteString(Inspect(vm, v))
	writeFrames(&b, frames)
	return b.String()
}

func writeFrames(b *strings.Builder, frames []goja.StackFrame) {
	for i := range frames {
		f := &frames[i]
		p := f.Position()
		if p.Filename == "" && p.Line == 0 {
			continue // native frames say nothing about the script
		}
		b.WriteString("\n    at ")
		if fn := f.FuncName(); fn != "" && fn != "<anonymous>" && fn != "<native>" {
			fmt.Fprintf(b, "%s (%s:%d:%d)", fn, p.Filename, p.Line, p.Column)
		} else {
			fmt.Fprintf(b, "%s:%d:%d", p.Filename, p.Line, p.Column)
		}
	}
}

func isError(vm *goja.Runtime, obj *goja.Object) bool {
	errCtor := vm.Get("Error")
	if errCtor == nil {
		return false
	}
	ok, err := instanceOf(vm, obj, errCtor)
	return err == nil && ok
}

func instanceOf(vm *goja.Runtime, obj *goja.Object, ctor goja.Value) (ok bool, err error) {
	c, isObj := ctor.(*goja.Object)
	if !isObj {
		return false, nil
	}
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("instanceof: %v", r)
		}
	}()
	return vm.InstanceOf(obj, c), nil
}

// uncaught wraps an exception that escaped to the loop.
func uncaught(vm *goja.Runtime, err error) error {
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		var b strings.Builder
		b.WriteString("RangeError: Maximum call stack size exceeded")
		writeFrames(&b, so.Stack())
		return &JSError{Prefix: "Uncaught", Message: b.String()}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return &JSError{Prefix: "Uncaught", Message: describeThrown(vm, ex.Value(), ex.Stack()), Value: ex.Value(), Go: goErrorOf(ex.Value())}
	}
	return err
}

// unhandledRejection renders a promise rejected without a handler. The script's own promise
// (the top-level code) is reported as a plain uncaught exception.
func unhandledRejection(vm *goja.Runtime, p *goja.Promise, isMain bool) error {
	prefix := "Uncaught (in promise)"
	if isMain {
		prefix = "Uncaught"
	}
	return &JSError{Prefix: prefix, Message: describeThrown(vm, p.Result(), nil), Value: p.Result(), Go: goErrorOf(p.Result())}
}

// ErrUnsettled is the message when the script's top-level promise is still pending but nothing
// is left that could settle it.
var ErrUnsettled = errors.New("top-level await never settled: the script waits on a promise that nothing will resolve (no timers or pending work remain)")

// asExitError maps what ended a run to the error Run returns.
func asExitError(err error) error {
	if err == nil {
		return nil
	}
	var ir *goja.InterruptedError
	if errors.As(err, &ir) {
		if v, ok := ir.Value().(error); ok {
			err = v
		}
	}
	var exit *exitRequest
	if errors.As(err, &exit) {
		if exit.code == 0 {
			return nil
		}
		return exitcode.Silent(exitcode.Code(exit.code))
	}
	var to *timeoutError
	if errors.As(err, &to) {
		return &exitcode.Error{Code: exitcode.Timeout, Err: to}
	}
	var coded *exitcode.Error
	if errors.As(err, &coded) {
		var js *JSError
		if errors.As(err, &js) { // a builtin's coded error nobody caught: keep its code, show the JS report
			return &exitcode.Error{Code: coded.Code, Err: js}
		}
		return err
	}
	var pe *panicError
	if errors.As(err, &pe) {
		return &exitcode.Error{Code: exitcode.Script, Err: pe}
	}
	return &exitcode.Error{Code: exitcode.Script, Err: err}
}
