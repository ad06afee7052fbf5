package builtins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/runtime"
)

// DefaultMax bounds how many times `alive` reads true when --max is not given (moshcode's default).
const DefaultMax = 3

// NoMax as Config.Max lifts the cap: alive reads true until the script stops it (--max 0, for
// overnight loops).
const NoMax = -1

// Config is what one run's vocabulary needs to know.
type Config struct {
	Args   []string          // argv; default the VU's Args
	Env    map[string]string // env, and the base environment of sh; default the VU's Env
	Max    int               // alive reads true this many times; 0 means DefaultMax, NoMax no cap
	DryRun bool              // side-effecting verbs narrate instead of acting
	Flags  map[string]any    // a script verb's parsed flags (JS-ready values)
	Stdout io.Writer         // say, table; default the VU's Stdout
	Stderr io.Writer         // narration and notices; default the VU's Stderr
	// StdoutTTY makes table() print an aligned table with a header (a terminal) instead of
	// tab-separated rows.
	StdoutTTY bool
	// StderrTTY: stderr is a terminal (isTerminal("stderr"): a script may redraw a progress line).
	StderrTTY bool
	// StdinTTY: stdin is a terminal (ask() asks inline there, with StderrTTY).
	StdinTTY bool
	// ShCapture bounds each stream sh captures, in bytes; 0 means DefaultShCapture.
	ShCapture int

	// unrecordedAI runs ai() without its ledger task: BenchmarkAI's figure of ai() before it
	// was recorded, measured in the same run as the recorded one. Nothing else sets it.
	unrecordedAI bool
	// beforeLaunch runs in herdStart's Go work right before the start request is sent:
	// TestInterruptMidStartKillsTheMember lands Ctrl-C there. Nothing else sets it.
	beforeLaunch func(ctx context.Context)
}

// Install defines every registered verb and the values argv, env, flags and alive on the VU's
// global object. Call it from runtime.Options.Install.
func Install(vu runtime.VU, cfg Config) error {
	in := &install{vu: vu, cfg: cfg}
	if in.cfg.Args == nil {
		in.cfg.Args = vu.Args()
	}
	if in.cfg.Env == nil {
		in.cfg.Env = vu.Env()
	}
	if in.cfg.Max == 0 {
		in.cfg.Max = DefaultMax
	}
	if in.cfg.Stdout == nil {
		in.cfg.Stdout = vu.Stdout()
	}
	if in.cfg.Stderr == nil {
		in.cfg.Stderr = vu.Stderr()
	}
	vm := vu.Runtime()
	global := vm.GlobalObject()
	if err := in.installValues(vm, global); err != nil {
		return err
	}
	registry.Lock()
	verbs := append([]*Verb(nil), registry.verbs...)
	registry.Unlock()
	for _, v := range verbs {
		fn := runtime.NameFunction(vm, vm.ToValue(in.wrap(v)), v.Name)
		// Read-only so a stray `sh = …` cannot break later calls; configurable so a REPL `let`
		// may still shadow a name.
		if err := global.DefineDataProperty(v.Name, fn, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("installing %s: %w", v.Name, err)
		}
	}
	return nil
}

// install is the state of one run's vocabulary.
type install struct {
	vu  runtime.VU
	cfg Config

	ticks   int
	stopped bool
	warned  bool

	// The run's herd session (herdSessionFor), made on first use.
	herdOnce sync.Once
	herd     *herdSession
}

// Call is one invocation of a verb, as Bind sees it.
type Call struct {
	Verb *Verb
	Args []goja.Value
	in   *install
}

// VM is the runtime; only on the loop goroutine (in Bind, or in Do of a sync verb).
func (c *Call) VM() *goja.Runtime { return c.in.vu.Runtime() }

// VU is the run.
func (c *Call) VU() runtime.VU { return c.in.vu }

// Config is the run's configuration (env, dry-run, streams).
func (c *Call) Config() Config { return c.in.cfg }

// Misuse returns an error that throws "TypeError: USAGE: message".
func (c *Call) Misuse(format string, args ...any) error {
	return &misuseError{msg: fmt.Sprintf("%s: %s", c.Verb.Usage, fmt.Sprintf(format, args...))}
}

// Arg returns argument i, or undefined.
func (c *Call) Arg(i int) goja.Value {
	if i < len(c.Args) {
		return c.Args[i]
	}
	return goja.Undefined()
}

// Given reports whether argument i is present and neither undefined nor null.
func (c *Call) Given(i int) bool { return !goja.IsUndefined(c.Arg(i)) && !goja.IsNull(c.Arg(i)) }

// String returns argument i, which must be a non-empty string; what names it in the misuse error.
func (c *Call) String(i int, what string) (string, error) {
	v := c.Arg(i)
	if !c.Given(i) {
		return "", c.Misuse("missing %s", what)
	}
	s, ok := v.Export().(string)
	if !ok {
		return "", c.Misuse("%s must be a string, not %s", what, typeName(v))
	}
	if s == "" {
		return "", c.Misuse("%s must not be empty", what)
	}
	return s, nil
}

// Options returns argument i as an object, nil when absent; what names it in the misuse error.
func (c *Call) Options(i int, what string) (*goja.Object, error) {
	if !c.Given(i) {
		return nil, nil
	}
	o, ok := c.Arg(i).(*goja.Object)
	if !ok || o.ClassName() == "Array" || o.ClassName() == "Function" {
		return nil, c.Misuse("%s must be an object like {…}, not %s", what, typeName(c.Arg(i)))
	}
	return o, nil
}

// Known checks that an options object has only the given keys, so typos are reported.
func (c *Call) Known(o *goja.Object, keys ...string) error {
	if o == nil {
		return nil
	}
	for _, k := range o.Keys() {
		found := false
		for _, want := range keys {
			if k == want {
				found = true
				break
			}
		}
		if !found {
			return c.Misuse("unknown option %q (known: %s)", k, strings.Join(keys, ", "))
		}
	}
	return nil
}

func typeName(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if o, ok := v.(*goja.Object); ok {
		switch o.ClassName() {
		case "Array":
			return "an array"
		case "Function":
			return "a function"
		}
		return "an object"
	}
	switch v.Export().(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return v.String()
}

// wrap turns a Verb into the JS function that applies the registry's contracts.
func (in *install) wrap(v *Verb) func(goja.FunctionCall) goja.Value {
	return func(fc goja.FunctionCall) goja.Value {
		vm := in.vu.Runtime()
		c := &Call{Verb: v, Args: fc.Arguments, in: in}
		var act Action
		if err := guard(v, func() (err error) { act, err = v.Bind(c); return err }); err != nil {
			panic(in.throwable(v, err))
		}
		if v.SideEffect && in.cfg.DryRun {
			would := act.Would
			if would == "" {
				would = "would run"
			}
			fmt.Fprintf(in.cfg.Stderr, "  ▶ %s(%s) → %s\n", v.Name, formatArgs(fc.Arguments), would)
			res := act.DryRun
			switch res.(type) {
			case nil:
				res = map[string]any{"ok": true, "dryRun": true}
			case dryRunNull:
				res = nil
			}
			if v.Async || v.Promise {
				p, resolve, _ := vm.NewPromise()
				_ = resolve(toJS(vm, res))
				return vm.ToValue(p)
			}
			return toJS(vm, res)
		}
		if act.Do == nil {
			return goja.Undefined()
		}
		if v.Async {
			return in.async(v, act.Do)
		}
		var res any
		err := guard(v, func() (err error) { res, err = act.Do(in.vu.Context()); return err })
		if err != nil {
			if v.Read && !IsMisuse(err) && !isNoMember(err) {
				return toJS(vm, v.Empty)
			}
			panic(in.throwable(v, err))
		}
		return toJS(vm, res)
	}
}

// async runs do through runtime.Async and converts its result to a plain JS value once it is
// back on the loop goroutine.
func (in *install) async(v *Verb, do func(context.Context) (any, error)) goja.Value {
	p := runtime.Async(in.vu, func(ctx context.Context) (any, error) {
		var res any
		err := guard(v, func() (err error) { res, err = do(ctx); return err })
		if err != nil {
			if !v.Read || ctx.Err() != nil || isNoMember(err) {
				return nil, wrapVerbError(v, err)
			}
			res = v.Empty
		}
		return runtime.OnLoop(func(vm *goja.Runtime) (goja.Value, error) { return toJS(vm, res), nil }), nil
	})
	return in.vu.Runtime().ToValue(p)
}

// isNoMember: err names a member the roster does not list, which even a read verb rejects
// with rather than resolving to its empty answer.
func isNoMember(err error) bool {
	var nm *noMemberError
	return errors.As(err, &nm)
}

// guard runs f and turns a Go panic into an error: a builtin must never crash the process.
// JS exceptions and interrupts (exit(), Ctrl-C) raised through the VM pass on untouched.
func guard(v *Verb, f func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if isJSPanic(r) {
			panic(r)
		}
		err = fmt.Errorf("internal error in %s (please report it): %v", v.Name, r)
	}()
	return f()
}

func isJSPanic(r any) bool {
	switch x := r.(type) {
	case goja.Value, *goja.Exception, *goja.InterruptedError, *goja.StackOverflowError:
		return true
	case error:
		var ie *goja.InterruptedError
		var ex *goja.Exception
		return errors.As(x, &ie) || errors.As(x, &ex)
	}
	return false
}

// throwable makes the JS value thrown for err: a TypeError naming the usage for misuse; for a
// failure, the same GoError (message prefixed with the verb's name, err as .value) that an
// async verb rejects with.
func (in *install) throwable(v *Verb, err error) goja.Value {
	vm := in.vu.Runtime()
	if IsMisuse(err) {
		return vm.NewTypeError(err.Error())
	}
	return runtime.NewError(vm, wrapVerbError(v, err), nil)
}

// toJS converts a Go result into a plain JS value: primitives directly, goja values as they
// are, anything else through JSON so objects are ordinary (enumerable, JSON.stringify-able,
// struct fields in declaration order, map keys sorted).
func toJS(vm *goja.Runtime, v any) goja.Value {
	switch x := v.(type) {
	case nil:
		return goja.Null()
	case goja.Value:
		return x
	case string, bool, int, int64, float64:
		return vm.ToValue(x)
	case jsValuer:
		return x.jsValue(vm)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return vm.ToValue(v)
	}
	parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	out, err := parse(goja.Undefined(), vm.ToValue(string(b)))
	if err != nil {
		return vm.ToValue(v)
	}
	return out
}

// jsValuer is a result that builds its JS value itself, skipping the JSON round trip (sh's
// captured output can be 64 MiB per stream: through JSON it would be copied four times over).
type jsValuer interface {
	jsValue(vm *goja.Runtime) goja.Value
}

// formatArgs renders call arguments for narration: JSON, each cut to 60 characters.
func formatArgs(args []goja.Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		var s string
		switch {
		case goja.IsUndefined(a):
			s = "undefined"
		default:
			if _, isFn := goja.AssertFunction(a); isFn {
				s = "[function]"
				break
			}
			b, err := json.Marshal(a.Export())
			if err != nil {
				s = a.String()
			} else {
				s = string(b)
			}
		}
		if utf8.RuneCountInString(s) > 60 {
			r := []rune(s)
			s = string(r[:59]) + "…"
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}
