package runtime

import (
	"errors"
	"net/url"
	"strings"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
)

// A Go function handed to goja is named after its Go symbol
// ("github.com/mosh-dev/mosh/builtins.Install.(*install).wrap.func1"), which then shows in
// console.log(sh), String(sh) and stack frames. Every Go function a script can reach is named
// where it is installed instead (NameFunction, setNamed), so a script sees [Function: sh].

// NameFunction gives a Go function value the JS name a script knows it by. It returns fn.
func NameFunction(vm *goja.Runtime, fn goja.Value, name string) goja.Value {
	if o, ok := fn.(*goja.Object); ok {
		_ = o.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	return fn
}

// setNamed sets obj[name] to the Go function fn, named name.
func setNamed(vm *goja.Runtime, obj *goja.Object, name string, fn func(goja.FunctionCall) goja.Value) {
	must(obj.Set(name, NameFunction(vm, vm.ToValue(fn), name)))
}

// isGoSymbol reports whether a function name is a Go symbol rather than a JS name.
func isGoSymbol(name string) bool {
	return strings.Contains(name, "/") || strings.Contains(name, ".func") || strings.Contains(name, "(*")
}

// newGoError is goja's GoError for err (err stays reachable as .value) presented as a plain
// Error: scripts and users see "Error: message", never the library's "GoError".
func newGoError(vm *goja.Runtime, err error) *goja.Object {
	obj := vm.NewGoError(err)
	_ = obj.DefineDataProperty("name", vm.ToValue("Error"), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	var coded *exitcode.Error
	if errors.As(err, &coded) {
		// The exit code the error carries (3 gone, 5 infrastructure…), as the uncaught error
		// would exit with: a script can branch on e.code.
		_ = obj.DefineDataProperty("code", vm.ToValue(int(coded.Code)), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	if st := obj.Get("stack"); st != nil && !goja.IsUndefined(st) {
		if s := st.String(); strings.HasPrefix(s, "GoError") {
			_ = obj.DefineDataProperty("stack", vm.ToValue("Error"+strings.TrimPrefix(s, "GoError")), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		}
	}
	return obj
}

// displayFile is a script's file name as the user wrote it: frames built from source-mapped
// positions carry it URL-escaped ("%3Ceval%3E" for "<eval>", "%20" for a space).
func displayFile(name string) string {
	if !strings.Contains(name, "%") {
		return name
	}
	if u, err := url.PathUnescape(name); err == nil {
		return u
	}
	return name
}
