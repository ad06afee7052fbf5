package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// installGlobals adds what every moshscript sees regardless of builtins: console, timers,
// queueMicrotask and exit.
func installGlobals(v *vu) {
	vm := v.vm
	must(vm.Set("console", newConsole(v)))
	global := vm.GlobalObject()
	setNamed(vm, global, "setTimeout", func(call goja.FunctionCall) goja.Value { return setTimer(v, call, false) })
	setNamed(vm, global, "setInterval", func(call goja.FunctionCall) goja.Value { return setTimer(v, call, true) })
	clear := func(call goja.FunctionCall) goja.Value {
		if id := call.Argument(0); !goja.IsUndefined(id) && !goja.IsNull(id) {
			v.loop.clearTimer(id.ToInteger())
		}
		return goja.Undefined()
	}
	setNamed(vm, global, "clearTimeout", clear)
	setNamed(vm, global, "clearInterval", func(call goja.FunctionCall) goja.Value { return clear(call) })
	setNamed(vm, global, "exit", func(call goja.FunctionCall) goja.Value {
		code := 0
		if a := call.Argument(0); !goja.IsUndefined(a) {
			f := a.ToFloat()
			if f != math.Trunc(f) || f < 0 || f > 255 {
				panic(vm.NewTypeError("exit(code): code must be an integer from 0 to 255, got %s", a.String()))
			}
			code = int(f)
		}
		v.loop.exit = &exitRequest{code: code}
		vm.Interrupt(v.loop.exit)
		return goja.Undefined()
	})
	// queueMicrotask rides on the promise job queue so it interleaves with promise reactions in
	// the order the spec gives them. A throwing task surfaces as an unhandled rejection. The JS
	// half is compiled and run on first use: most scripts never call it, and every process start
	// would pay for it.
	var queue goja.Callable
	qm := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		if _, ok := goja.AssertFunction(call.Argument(0)); !ok {
			panic(vm.NewTypeError("queueMicrotask(fn): fn must be a function"))
		}
		if queue == nil {
			fn, err := vm.RunProgram(queueMicrotaskProgram())
			must(err)
			queue, _ = goja.AssertFunction(fn)
		}
		return must1(queue(goja.Undefined(), call.Argument(0)))
	}).ToObject(vm)
	must(qm.DefineDataProperty("name", vm.ToValue("queueMicrotask"), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	must(qm.DefineDataProperty("length", vm.ToValue(1), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE))
	must(vm.Set("queueMicrotask", qm))
	fixJSONStringifyIndent(vm)
}

// fixJSONStringifyIndent replaces JSON.stringify with one that indents correctly. goja's own
// indents everything after an empty [] or {} one level too deep (JSON.stringify({a:[],b:{c:1}},
// null, 2)), which corrupts every pretty-printed file a script writes. goja still produces the
// compact text (so replacers, toJSON and errors behave exactly as before); Go's json.Indent lays
// it out, and its layout is the one the spec gives ("[]" and "{}" for empty containers).
func fixJSONStringifyIndent(vm *goja.Runtime) {
	jsonObj := vm.Get("JSON").ToObject(vm)
	native, ok := goja.AssertFunction(jsonObj.Get("stringify"))
	if !ok {
		return
	}
	setNamed(vm, jsonObj, "stringify", func(call goja.FunctionCall) goja.Value {
		gap := jsonGap(call.Argument(2))
		if gap == "" {
			return must1(native(goja.Undefined(), call.Arguments...))
		}
		compact := must1(native(goja.Undefined(), call.Argument(0), call.Argument(1)))
		if goja.IsUndefined(compact) {
			return compact
		}
		var out bytes.Buffer
		if err := json.Indent(&out, []byte(compact.String()), "", gap); err != nil {
			return compact // cannot happen for goja's own output; never lose the value
		}
		return vm.ToValue(out.String())
	})
}

// must1 rethrows a JS exception from a native call unchanged (it is already a goja value).
func must1(v goja.Value, err error) goja.Value {
	if err != nil {
		panic(err)
	}
	return v
}

// jsonGap is JSON.stringify's space argument as the spec reads it: a number gives that many
// spaces (at most 10), a string its first 10 characters, anything else no indentation.
func jsonGap(space goja.Value) string {
	if space == nil || goja.IsUndefined(space) || goja.IsNull(space) {
		return ""
	}
	switch x := space.Export().(type) {
	case int64:
		return strings.Repeat(" ", int(min(max(x, 0), 10)))
	case float64:
		return strings.Repeat(" ", int(min(max(math.Trunc(x), 0), 10)))
	case string:
		if r := []rune(x); len(r) > 10 {
			return string(r[:10])
		}
		return x
	}
	return ""
}

// queueMicrotaskProgram is compiled once per process: a Program can run in many runtimes.
var queueMicrotaskProgram = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("queueMicrotask", `(function queueMicrotask(fn) {
		if (typeof fn !== "function") throw new TypeError("queueMicrotask(fn): fn must be a function");
		Promise.resolve().then(() => fn());
	})`, true)
})

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// setTimer implements setTimeout/setInterval(fn, ms, ...args).
func setTimer(v *vu, call goja.FunctionCall, repeat bool) goja.Value {
	name := "setTimeout"
	if repeat {
		name = "setInterval"
	}
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(v.vm.NewTypeError("%s(fn, ms, ...args): fn must be a function", name))
	}
	ms := call.Argument(1).ToFloat()
	if math.IsNaN(ms) || ms < 0 {
		ms = 0
	}
	var extra []goja.Value
	if len(call.Arguments) > 2 {
		extra = append(extra, call.Arguments[2:]...)
	}
	d := time.Duration(ms * float64(time.Millisecond))
	id := v.loop.addTimer(d, repeat, func() error {
		_, err := fn(goja.Undefined(), extra...)
		return err
	})
	return v.vm.ToValue(id)
}

// console writes without timestamps: log/info/debug to stdout, warn/error to stderr.
func newConsole(v *vu) *goja.Object {
	c := v.vm.NewObject()
	out := func(w func() io.Writer) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			line := FormatArgs(v.vm, call.Arguments)
			_, _ = io.WriteString(w(), line+"\n")
			return goja.Undefined()
		}
	}
	stdout := func() io.Writer { return v.stdout }
	stderr := func() io.Writer { return v.stderr }
	for name, w := range map[string]func() io.Writer{
		"log": stdout, "info": stdout, "debug": stdout, "trace": stderr,
		"warn": stderr, "error": stderr,
	} {
		setNamed(v.vm, c, name, out(w))
	}
	return c
}

// FormatArgs renders console.log's arguments: printf-style directives when the first argument
// is a string containing %, then the rest inspected and joined by spaces (strings bare).
func FormatArgs(vm *goja.Runtime, args []goja.Value) string {
	if len(args) == 0 {
		return ""
	}
	var parts []string
	rest := args
	if s, ok := args[0].Export().(string); ok && strings.Contains(s, "%") && len(args) > 1 {
		formatted, used := sprintf(vm, s, args[1:])
		parts = append(parts, formatted)
		rest = args[1+used:]
	} else {
		parts = append(parts, inspectTop(vm, args[0]))
		rest = args[1:]
	}
	for _, a := range rest {
		parts = append(parts, inspectTop(vm, a))
	}
	return strings.Join(parts, " ")
}

func inspectTop(vm *goja.Runtime, v goja.Value) string {
	if _, ok := v.(*goja.Symbol); ok {
		return Inspect(vm, v)
	}
	if s, ok := v.Export().(string); ok && !isObject(v) {
		return s
	}
	return Inspect(vm, v)
}

func isObject(v goja.Value) bool {
	_, ok := v.(*goja.Object)
	return ok
}

// sprintf handles %s %d %i %f %j %o %O %c %%; it returns how many arguments it consumed.
func sprintf(vm *goja.Runtime, f string, args []goja.Value) (string, int) {
	var b strings.Builder
	used := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		verb := f[i+1]
		if verb == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if !strings.ContainsRune("sdifjoOc", rune(verb)) {
			b.WriteByte('%')
			continue
		}
		i++
		if verb == 'c' { // CSS styling: consumed, not printed
			used++
			continue
		}
		if used >= len(args) {
			b.WriteByte('%')
			b.WriteByte(verb)
			continue
		}
		a := args[used]
		used++
		switch verb {
		case 's':
			b.WriteString(inspectTop(vm, a))
		case 'd', 'i':
			n := a.ToFloat()
			if verb == 'i' {
				n = math.Trunc(n)
			}
			b.WriteString(vm.ToValue(n).String())
		case 'f':
			b.WriteString(vm.ToValue(a.ToFloat()).String())
		case 'j':
			b.WriteString(jsonString(vm, a))
		default:
			b.WriteString(Inspect(vm, a))
		}
	}
	return b.String(), used
}

func jsonString(vm *goja.Runtime, v goja.Value) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = "[Circular]"
		}
	}()
	j := vm.Get("JSON").ToObject(vm)
	stringify, _ := goja.AssertFunction(j.Get("stringify"))
	res, err := stringify(j, v)
	if err != nil {
		return fmt.Sprintf("[%v]", err)
	}
	return res.String()
}
