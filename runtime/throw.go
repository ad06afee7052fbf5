package runtime

import (
	"errors"
	"fmt"

	"github.com/dop251/goja"
)

// Throw ends the current builtin call with a JS exception that scripts can catch: an Error
// (goja's GoError, named Error) carrying err (err is reachable as the error's `value`). Builtins must throw this way: a Go
// panic with anything but a goja value is not a JS exception (goja would let it crash the
// process; Run turns it into an internal-error failure). Throw does not return.
//
// Only call it on the loop goroutine, inside a builtin call.
func Throw(vm *goja.Runtime, err error) {
	if err == nil {
		err = errors.New("unknown error")
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		panic(ex)
	}
	panic(newGoError(vm, err))
}

// Throwf is Throw with a formatted message (%w wraps as in fmt.Errorf).
func Throwf(vm *goja.Runtime, format string, args ...any) {
	Throw(vm, fmt.Errorf(format, args...))
}

// ThrowTypeError throws a JS TypeError: the right error for misuse (a missing or mistyped
// argument), with the verb's usage in the message.
func ThrowTypeError(vm *goja.Runtime, format string, args ...any) {
	panic(vm.NewTypeError("%s", fmt.Sprintf(format, args...)))
}
