package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// OnLoop lets Async work build its JS result on the loop goroutine: when work returns a value of
// this type, Async calls it there and resolves with what it returns (or rejects with its error).
// Use it to return plain JS objects instead of wrapped Go values.
type OnLoop func(vm *goja.Runtime) (goja.Value, error)

// Async runs work on its own goroutine and returns a promise settled on the loop goroutine:
// resolved with vu.Runtime().ToValue(v) (or OnLoop's value), or rejected with an Error whose
// stack names the JS call site of the builtin that called Async ("Error: boom\n    at
// hello.mosh:3:5"). work receives the run's context: it is cancelled on Ctrl-C, timeout and
// when the script ends, and work must return soon after. A panic in work rejects the promise
// instead of crashing the process.
//
// Call Async on the loop goroutine, i.e. from inside a builtin.
func Async(vu VU, work func(ctx context.Context) (any, error)) *goja.Promise {
	vm := vu.Runtime()
	site := CallSite(vm)
	promise, resolve, reject := vm.NewPromise()
	done := vu.RegisterCallback()
	ctx := vu.Context()
	go func() {
		v, err := runWork(ctx, work)
		done(func() error {
			if err == nil {
				if build, ok := v.(OnLoop); ok {
					var val goja.Value
					val, err = build(vm)
					if err == nil {
						_ = resolve(val)
						return nil
					}
				} else {
					_ = resolve(v)
					return nil
				}
			}
			_ = reject(NewError(vm, err, site))
			return nil
		})
	}()
	return promise
}

func runWork(ctx context.Context, work func(context.Context) (any, error)) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, where: panickingFunc()}
		}
	}()
	return work(ctx)
}

// CallSite captures the JS frames of the current builtin call, innermost first, without the
// native frames. Call it on the loop goroutine from inside a builtin.
func CallSite(vm *goja.Runtime) []goja.StackFrame {
	frames := vm.CaptureCallStack(0, nil)
	out := frames[:0]
	for _, f := range frames {
		if p := f.Position(); p.Filename != "" || p.Line != 0 {
			out = append(out, f)
		}
	}
	return out
}

// NewError makes a JS error for err (a GoError named Error) (err stays reachable as the error's `value`), with its
// stack set to site when site is non-empty. An error that already is a JS exception is
// returned as its JS value, so rethrowing keeps the original error.
func NewError(vm *goja.Runtime, err error, site []goja.StackFrame) goja.Value {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return ex.Value()
	}
	obj := newGoError(vm, err)
	if len(site) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Error: %s", err.Error())
		for i := range site {
			p := site[i].Position()
			b.WriteString("\n\tat ")
			file := displayFile(p.Filename)
			if fn := site[i].FuncName(); fn != "" && fn != "<anonymous>" {
				fmt.Fprintf(&b, "%s (%s:%d:%d)", fn, file, p.Line, p.Column)
			} else {
				fmt.Fprintf(&b, "%s:%d:%d", file, p.Line, p.Column)
			}
		}
		_ = obj.DefineDataProperty("stack", vm.ToValue(b.String()), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	return obj
}
