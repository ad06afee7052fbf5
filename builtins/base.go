package builtins

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/runtime/scriptverb"
)

func init() {
	registerValue(Value{Name: "argv", Type: "readonly string[]", Usage: "argv", Summary: "the script's arguments (strings after the file name)"})
	registerValue(Value{Name: "env", Type: "Record<string, string>", Usage: "env", Summary: "the environment, as an object of strings"})
	registerValue(Value{Name: "flags", Type: "Record<string, any>", Usage: "flags", Summary: "a script verb's flags, by declared name and camelCase (durations in ms)"})
	registerValue(Value{Name: "alive", Type: "boolean", Usage: "while (alive) { … }", Summary: "true until stop() or --max reads (default 3)",
		Detail: "Each read counts. After --max N reads (default 3) alive is false and mosh says so once on stderr.\nAssigning alive = false is the same as stop()."})

	Register(&Verb{
		Name: "stop", Usage: "stop()", Summary: "make alive false from now on",
		Params: "", Result: TSType("void"),
		Bind: func(c *Call) (Action, error) {
			return Action{Do: func(context.Context) (any, error) {
				c.in.stopped = true
				return goja.Undefined(), nil
			}}, nil
		},
	})
	Register(&Verb{
		Name: "say", Usage: "say(...parts)", Summary: "print a line: 💬 parts joined by spaces",
		Params: "...parts: unknown[]", Result: TSType("void"),
		Bind: func(c *Call) (Action, error) {
			parts := make([]string, len(c.Args))
			for i, a := range c.Args {
				parts[i] = display(c.VM(), a)
			}
			return Action{Do: func(context.Context) (any, error) {
				_, err := fmt.Fprintf(c.in.cfg.Stdout, "  💬 %s\n", strings.Join(parts, " "))
				return goja.Undefined(), err
			}}, nil
		},
	})
	Register(&Verb{
		Name: "sleep", Usage: `sleep(ms | "2s")`, Summary: "a promise that resolves after a while",
		Params: "ms: number | string", Result: TSType("void"),
		Detail: "A number is milliseconds; a string is a duration: 500ms, 2s, 10m, 1h.\nCtrl-C and --timeout end the wait.",
		Async:  true,
		Bind: func(c *Call) (Action, error) {
			d, err := durationArg(c, 0, "the duration")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(ctx context.Context) (any, error) {
				t := time.NewTimer(d)
				defer t.Stop()
				select {
				case <-t.C:
					return goja.Undefined(), nil
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
			}}, nil
		},
	})
}

// installValues defines argv, env, flags and the alive accessor.
func (in *install) installValues(vm *goja.Runtime, global *goja.Object) error {
	args := make([]any, len(in.cfg.Args))
	for i, a := range in.cfg.Args {
		args[i] = a
	}
	env := vm.NewObject()
	for k, v := range in.cfg.Env {
		_ = env.Set(k, v)
	}
	flags := vm.NewObject()
	for k, v := range in.cfg.Flags {
		jv := toJS(vm, v)
		_ = flags.Set(k, jv)
		if cc := camelCase(k); cc != k {
			_ = flags.Set(cc, jv)
		}
	}
	for name, val := range map[string]goja.Value{"argv": vm.NewArray(args...), "env": env, "flags": flags} {
		if err := global.DefineDataProperty(name, val, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	getter := vm.ToValue(func(goja.FunctionCall) goja.Value { return vm.ToValue(in.tick()) })
	setter := vm.ToValue(func(fc goja.FunctionCall) goja.Value {
		if !fc.Argument(0).ToBoolean() {
			in.stopped = true
		}
		return goja.Undefined()
	})
	return global.DefineAccessorProperty("alive", getter, setter, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// tick is one read of alive.
func (in *install) tick() bool {
	if in.stopped {
		return false
	}
	if in.cfg.Max != NoMax && in.ticks >= in.cfg.Max {
		if !in.warned {
			in.warned = true
			fmt.Fprintf(in.cfg.Stderr, "hit --max %d — stopping (pass --max N to go longer, --max 0 for no cap)\n", in.cfg.Max)
		}
		return false
	}
	in.ticks++
	return true
}

// camelCase turns "dry-run" into "dryRun".
func camelCase(s string) string {
	if !strings.Contains(s, "-") {
		return s
	}
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '-' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// display renders a value the way say and table show it: strings raw, objects as JSON.
func display(vm *goja.Runtime, v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		if v == nil {
			return "undefined"
		}
		return v.String()
	}
	if o, ok := v.(*goja.Object); ok {
		if _, isFn := goja.AssertFunction(o); !isFn && o.ClassName() != "Error" && o.ClassName() != "Date" {
			stringify, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
			if s, err := stringify(goja.Undefined(), o); err == nil && !goja.IsUndefined(s) {
				return s.String()
			}
		}
	}
	return v.String()
}

// durationArg reads argument i as a duration: a number of milliseconds or a duration string.
func durationArg(c *Call, i int, what string) (time.Duration, error) {
	if !c.Given(i) {
		return 0, c.Misuse("missing %s", what)
	}
	return durationValue(c, c.Arg(i), what)
}

// optDuration reads option key of o as durationValue does; def when o or the option is absent
// (undefined or null).
func optDuration(c *Call, o *goja.Object, key, what string, def time.Duration) (time.Duration, error) {
	if o == nil {
		return def, nil
	}
	v := o.Get(key)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return def, nil
	}
	return durationValue(c, v, what)
}

func durationValue(c *Call, v goja.Value, what string) (time.Duration, error) {
	switch x := v.Export().(type) {
	case int64:
		if x < 0 {
			return 0, c.Misuse("%s must not be negative", what)
		}
		return time.Duration(x) * time.Millisecond, nil
	case float64:
		if x < 0 || x != x {
			return 0, c.Misuse("%s must be a number of milliseconds ≥ 0", what)
		}
		return time.Duration(x * float64(time.Millisecond)), nil
	case string:
		d, err := scriptverb.ParseDuration(x, time.Millisecond)
		if err != nil {
			return 0, c.Misuse("%s: %v", what, err)
		}
		return d, nil
	}
	return 0, c.Misuse(`%s must be milliseconds or a string like "2s", not %s`, what, typeName(v))
}
