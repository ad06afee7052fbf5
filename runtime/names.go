package runtime

import (
	"net/url"
	"strings"

	"github.com/dop251/goja"
)

// A Go function handed to goja is named after its Go symbol
// ("github.com/mosh-dev/mosh/builtins.Install.(*install).wrap.func1"), which then shows in
// console.log(sh), String(sh) and stack frames. nameGoFunctions renames every such function
// reachable from the global object (and from console and JSON) after the key it is installed
// under, so a script sees [Function: sh].
func nameGoFunctions(vm *goja.Runtime) {
	global := vm.GlobalObject()
	nameIn(vm, global)
	for _, holder := range []string{"console", "JSON"} {
		if o, ok := global.Get(holder).(*goja.Object); ok {
			nameIn(vm, o)
		}
	}
}

func nameIn(vm *goja.Runtime, o *goja.Object) {
	// Read each property through its descriptor: a Get would run accessors (alive counts reads).
	gopd, ok := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("getOwnPropertyDescriptor"))
	if !ok {
		return
	}
	for _, key := range o.GetOwnPropertyNames() {
		d, err := gopd(goja.Undefined(), o, vm.ToValue(key))
		if err != nil || goja.IsUndefined(d) {
			continue
		}
		fn, ok := d.ToObject(vm).Get("value").(*goja.Object)
		if !ok {
			continue
		}
		if _, isFn := goja.AssertFunction(fn); !isFn {
			continue
		}
		if n := fn.Get("name"); n != nil && isGoSymbol(n.String()) {
			_ = fn.DefineDataProperty("name", vm.ToValue(key), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
	}
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
