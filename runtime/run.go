package runtime

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
)

// MaxCallStackSize bounds recursion: goja's default is unlimited, and runaway recursion would
// eat memory until the process dies instead of throwing a RangeError.
const MaxCallStackSize = 10000

// DefaultDrainGrace is Options.DrainGrace when it is left zero.
const DefaultDrainGrace = 2 * time.Second

// drainGrace is o.DrainGrace, or DefaultDrainGrace when it is zero.
func (o Options) drainGrace() time.Duration {
	if o.DrainGrace > 0 {
		return o.DrainGrace
	}
	return DefaultDrainGrace
}

// vu is the VU of one run or REPL session.
type vu struct {
	vm     *goja.Runtime
	loop   *loop
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	stdin  io.Reader
	args   []string
	env    map[string]string
	name   string
	dir    string

	endMu sync.Mutex
	ends  []func() // OnEnd's, run by runEnds
	ended bool
}

func (v *vu) Runtime() *goja.Runtime               { return v.vm }
func (v *vu) Context() context.Context             { return v.ctx }
func (v *vu) RegisterCallback() func(func() error) { return v.loop.reserve() }
func (v *vu) Stdout() io.Writer                    { return v.stdout }
func (v *vu) Stderr() io.Writer                    { return v.stderr }
func (v *vu) Stdin() io.Reader                     { return v.stdin }
func (v *vu) Args() []string                       { return v.args }
func (v *vu) Env() map[string]string               { return v.env }
func (v *vu) ScriptName() string                   { return v.name }
func (v *vu) Dir() string                          { return v.dir }

func (v *vu) OnEnd(f func()) {
	v.endMu.Lock()
	if !v.ended {
		v.ends = append(v.ends, f)
		v.endMu.Unlock()
		return
	}
	v.endMu.Unlock()
	f()
}

// runEnds runs the OnEnd functions, last registered first, and waits for them.
func (v *vu) runEnds() {
	v.endMu.Lock()
	ends := v.ends
	v.ends, v.ended = nil, true
	v.endMu.Unlock()
	for i := len(ends) - 1; i >= 0; i-- {
		ends[i]()
	}
}

// scriptDir is where relative imports of a script resolve by default.
func scriptDir(name, dir string) string {
	if dir != "" {
		return dir
	}
	if name == "" || strings.HasPrefix(name, "<") {
		return "."
	}
	return filepath.Dir(name)
}

// newVU makes a runtime with mosh's globals installed (not yet Options.Install).
func newVU(ctx context.Context, name string, o Options) *vu {
	vm := goja.New()
	vm.SetFieldNameMapper(FieldNameMapper{})
	vm.SetMaxCallStackSize(MaxCallStackSize)
	v := &vu{
		vm:     vm,
		loop:   newLoop(vm),
		ctx:    ctx,
		stdout: o.Stdout,
		stderr: o.Stderr,
		stdin:  o.Stdin,
		args:   o.Args,
		env:    o.Env,
		name:   name,
		dir:    scriptDir(name, o.Dir),
	}
	if v.stdout == nil {
		v.stdout = os.Stdout
	}
	if v.stderr == nil {
		v.stderr = os.Stderr
	}
	if v.stdin == nil {
		v.stdin = bytes.NewReader(nil)
	}
	if v.args == nil {
		v.args = []string{}
	}
	if v.env == nil {
		v.env = map[string]string{}
	}
	installGlobals(v)
	return v
}

// interruptCause maps the reason ctx ended to the error a run reports.
func interruptCause(ctx context.Context) error {
	cause := context.Cause(ctx)
	var to *timeoutError
	var coded *exitcode.Error
	switch {
	case errors.As(cause, &to), errors.As(cause, &coded):
		return cause
	case errors.Is(cause, context.DeadlineExceeded):
		return &exitcode.Error{Code: exitcode.Timeout, Err: errors.New("script timed out")}
	case cause == nil || errors.Is(cause, context.Canceled):
		return &exitcode.Error{Code: exitcode.Interrupted, Err: errors.New("interrupted")}
	default:
		return &exitcode.Error{Code: exitcode.Interrupted, Err: cause}
	}
}

// guard runs f on the loop goroutine and turns a Go panic into a *panicError: a builtin that
// panics with a non-goja value would otherwise crash the process.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, where: panickingFunc()}
		}
	}()
	return f()
}

// panickingFunc names the innermost Go function below the panic that is neither the Go runtime
// nor goja, so the message points at the builtin at fault. It must be called from the deferred
// function that recovered.
func panickingFunc() string {
	pcs := make([]uintptr, 64)
	n := goruntime.Callers(3, pcs)
	frames := goruntime.CallersFrames(pcs[:n])
	afterPanic := false
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.gopanic") {
			afterPanic = true
		} else if afterPanic && !strings.HasPrefix(f.Function, "runtime.") &&
			!strings.Contains(f.Function, "github.com/dop251/goja") {
			return f.Function
		}
		if !more {
			return ""
		}
	}
}

func run(parent context.Context, s Script, o Options) error {
	if parent == nil {
		parent = context.Background()
	}
	dir := scriptDir(s.Name, o.Dir)
	c, err := compileScript(s, dir)
	if err != nil {
		return exitcode.Wrap(err, exitcode.Script)
	}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(errDraining)
	if o.Timeout > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, o.Timeout, &timeoutError{after: o.Timeout})
		defer cancelTimeout()
	}

	v := newVU(ctx, s.Name, o)
	stopInterrupt := context.AfterFunc(ctx, func() { v.vm.Interrupt(interruptCause(ctx)) })
	defer stopInterrupt()

	var main *goja.Promise
	step := func(f func() error) error {
		err := guard(f)
		if ctx.Err() != nil {
			return interruptCause(ctx)
		}
		if v.loop.exit != nil {
			return v.loop.exit
		}
		if err != nil {
			return uncaught(v.vm, err)
		}
		if rejected := v.loop.takeRejections(); len(rejected) > 0 {
			return unhandledRejection(v.vm, rejected[0], rejected[0] == main)
		}
		return nil
	}
	start := func() error {
		if o.Install != nil {
			if err := o.Install(v); err != nil {
				return exitcode.Wrap(err, exitcode.Infra)
			}
		}
		res, err := v.vm.RunProgram(c.prog)
		if err != nil || !c.async {
			return err
		}
		fn, ok := goja.AssertFunction(res)
		if !ok {
			return errors.New("bundled script did not evaluate to a function")
		}
		res, err = fn(goja.Undefined())
		if err != nil {
			return err
		}
		if p, ok := res.Export().(*goja.Promise); ok {
			main = p
		}
		return nil
	}

	v.loop.submit(start)
	err = v.loop.run(ctx, step)
	if errors.Is(err, errContextDone) || (err == nil && ctx.Err() != nil) {
		err = interruptCause(ctx)
	}
	if err == nil && main != nil && main.State() == goja.PromiseStatePending {
		err = ErrUnsettled
	}
	if err != nil {
		cancel(err)
		v.loop.drain(o.drainGrace())
	}
	cancel(errDraining)
	v.runEnds()
	return asExitError(err)
}
