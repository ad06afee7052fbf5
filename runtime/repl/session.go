package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/runtime"
)

const (
	prompt         = "> "
	continuePrompt = "... "
	replName       = "<repl>"
)

const helpText = `.help     this text
.exit     leave (or Ctrl-D on an empty line)

Enter evaluates a complete statement; an unfinished one (an open brace, bracket or template)
continues on the next line. Results are printed, promises awaited first; await works at the
top level. Tab completes globals and properties (a.b.<Tab>). Ctrl-C clears the line or stops
a running evaluation. Top-level let, const and class act like var, so they can be redeclared.
import { loadDataset } from "mosh:eval" and await import("./lib.mosh") work as in a script.
`

// replState is one interactive session.
type replState struct {
	ctx    context.Context
	sess   *runtime.Session
	ed     editor
	hist   *history
	stdout io.Writer
	stderr io.Writer
	sigint chan os.Signal
}

func run(ctx context.Context, o Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	// The loop goroutine (console.log from a timer between inputs) and this one (results,
	// errors) write to the same streams: one lock makes each write whole and race-free.
	var mu sync.Mutex
	stdout, stderr = &lockedWriter{mu: &mu, w: stdout}, &lockedWriter{mu: &mu, w: stderr}
	sess, err := runtime.NewSession(ctx, replName, runtime.Options{
		Args: o.Args, Env: o.Env, Stdout: stdout, Stderr: stderr, Install: func(vu runtime.VU) error {
			if err := installImport(vu); err != nil {
				return err
			}
			if o.Install != nil {
				return o.Install(vu)
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	defer sess.Close()

	hist, err := openHistory(o.HistoryPath)
	if err != nil {
		return err
	}
	r := &replState{ctx: ctx, sess: sess, hist: hist, stdout: stdout, stderr: stderr, sigint: make(chan os.Signal, 1)}
	r.ed = newEditor(o.Stdin, hist, r.complete)
	defer r.ed.Close()

	// Ctrl-C while an evaluation runs arrives as SIGINT (the line editor turns it into a key
	// only while it prompts).
	signal.Notify(r.sigint, os.Interrupt)
	defer signal.Stop(r.sigint)

	if r.ed.Interactive() {
		banner := o.Banner
		if banner == "" {
			banner = DefaultBanner
		}
		_, _ = fmt.Fprintln(r.stdout, banner)
	}
	return r.loop()
}

func (r *replState) loop() error {
	var buf []string
	for {
		p := prompt
		if len(buf) > 0 {
			p = continuePrompt
		}
		line, err := r.readLine(p)
		switch {
		case errors.Is(err, runtime.ErrSessionEnded), r.ctx.Err() != nil: // exit(n) in a timer; the caller ended ctx
			return r.end(nil)
		case errors.Is(err, errAborted): // Ctrl-C at the prompt: drop what was typed
			buf = nil
			continue
		case errors.Is(err, io.EOF): // Ctrl-D on an empty line, or the end of piped input
			if r.ed.Interactive() {
				_, _ = fmt.Fprintln(r.stdout)
			}
			return r.end(nil)
		case err != nil:
			return r.end(fmt.Errorf("reading input: %w", err))
		}
		if len(buf) == 0 {
			switch cmd := strings.TrimSpace(line); {
			case cmd == "":
				continue
			case cmd == ".exit":
				return r.end(nil)
			case cmd == ".help":
				_, _ = io.WriteString(r.stdout, helpText)
				continue
			case strings.HasPrefix(cmd, ".") && !strings.HasPrefix(cmd, ".."):
				if _, err := fmt.Sscanf(cmd, ".%d", new(int)); err != nil {
					_, _ = fmt.Fprintf(r.stderr, "unknown REPL command %s (try .help)\n", cmd)
					continue
				}
			}
		}
		buf = append(buf, line)
		src := strings.Join(buf, "\n")
		if incomplete(src) {
			continue
		}
		buf = nil
		r.hist.add(src)
		r.eval(src)
		select {
		case <-r.sess.Done():
			return r.end(r.sess.Err())
		default:
		}
	}
}

// readLine prompts for one line, giving up when the session ends meanwhile (exit(n) in a timer
// ends the REPL at once, as it would end a script). The abandoned read only matters until the
// process exits.
func (r *replState) readLine(p string) (string, error) {
	type read struct {
		line string
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		line, err := r.ed.Prompt(p)
		ch <- read{line, err}
	}()
	select {
	case rd := <-ch:
		return rd.line, rd.err
	case <-r.sess.Done():
		return "", runtime.ErrSessionEnded
	case <-r.ctx.Done():
		return "", r.ctx.Err()
	}
}

// end returns the session's outcome, saving the history first.
func (r *replState) end(err error) error {
	if herr := r.hist.save(); herr != nil && err == nil {
		_, _ = fmt.Fprintf(r.stderr, "mosh: could not save REPL history: %v\n", herr)
	}
	select {
	case <-r.sess.Done():
		if serr := r.sess.Err(); serr != nil {
			return serr
		}
	default:
	}
	return err
}

// installImport defines the REPL's import function (importFn): a module's namespace, modules
// resolved as a script in the current directory resolves them.
func installImport(vu runtime.VU) error {
	vm := vu.Runtime()
	return vm.Set(importFn, func(spec string) goja.Value {
		ns, err := runtime.ImportModule(vm, spec, vu.Dir())
		if err != nil {
			panic(vm.NewGoError(err))
		}
		return ns
	})
}

// outcome is what evaluating one input produced, delivered from the loop goroutine.
type outcome struct {
	text  string // the printed result or error
	isErr bool
}

// eval runs src on the session and prints its result, waiting for a promise result to settle.
// Ctrl-C interrupts a running evaluation; while awaiting a promise it stops the wait (the
// promise keeps running).
func (r *replState) eval(src string) {
	prog, _ := prepare(src)
	select { // a Ctrl-C that came while no evaluation ran is not meant for this one
	case <-r.sigint:
	default:
	}
	done := make(chan outcome, 1)
	returned := make(chan struct{}) // closed when the synchronous part has finished
	go func() {
		defer close(returned)
		err := r.sess.Do(func(vm *goja.Runtime) error {
			if prog.declare != "" {
				if _, err := vm.RunScript(replName, prog.declare); err != nil {
					return err
				}
			}
			compiled, err := runtime.Compile(replName, prog.src)
			if err != nil && prog.plain != "" {
				// The edits broke it (they never should): run the input as typed, its
				// declarations local, rather than show the rewrite.
				compiled, err = runtime.Compile(replName, prog.plain)
			}
			if err != nil {
				return fixWrappedPosition(err, prog.async)
			}
			v, err := vm.RunProgram(compiled)
			if err != nil {
				return err
			}
			if prog.async {
				fn, ok := goja.AssertFunction(v)
				if !ok {
					return errors.New("internal error: async input did not compile to a function")
				}
				if v, err = fn(goja.Undefined()); err != nil {
					return err
				}
			}
			return settle(vm, v, done)
		})
		if err != nil && !runtime.IsExit(err) {
			done <- outcome{text: r.describe(err), isErr: true}
		}
	}()
	for {
		select {
		case o := <-done:
			r.print(o)
			return
		case <-r.sigint:
			select {
			case <-returned:
				// Only a promise wait is left: stop waiting; the promise keeps running.
				_, _ = fmt.Fprintln(r.stderr, "Interrupted (the awaited promise keeps running)")
				go r.drainLate(done)
				return
			default:
				r.sess.Interrupt() // the evaluation ends with an interrupted error via done
			}
		case <-r.sess.Done():
			return
		}
	}
}

func (r *replState) print(o outcome) {
	w := r.stdout
	if o.isErr {
		w = r.stderr
	}
	_, _ = fmt.Fprintln(w, o.text)
}

// fixWrappedPosition removes the async wrapper from a syntax error's column and source line.
func fixWrappedPosition(err error, async bool) error {
	var se *runtime.ScriptError
	if async && errors.As(err, &se) && se.Line == 1 {
		se.Column -= len(asyncPrefix)
		se.Source = strings.TrimPrefix(se.Source, asyncPrefix)
	}
	return err
}

// drainLate prints nothing for a result nobody waits for anymore; it only empties the channel.
func (r *replState) drainLate(done chan outcome) {
	select {
	case <-done:
	case <-r.sess.Done():
	}
}

func (r *replState) describe(err error) string {
	if runtime.IsInterrupt(err) {
		return "Interrupted"
	}
	var se *runtime.ScriptError
	if errors.As(err, &se) {
		return se.Error()
	}
	var text string
	_ = r.sess.Do(func(vm *goja.Runtime) error {
		text = runtime.DescribeError(vm, err)
		return nil
	})
	if text == "" {
		text = err.Error()
	}
	return text
}

// settle delivers v (or, for a promise, what it settles to) to done, on the loop goroutine.
func settle(vm *goja.Runtime, v goja.Value, done chan<- outcome) error {
	if _, ok := v.Export().(*goja.Promise); !ok {
		done <- outcome{text: runtime.Inspect(vm, v)}
		return nil
	}
	obj := v.(*goja.Object)
	then, ok := goja.AssertFunction(obj.Get("then"))
	if !ok {
		done <- outcome{text: runtime.Inspect(vm, v)}
		return nil
	}
	// A handler is attached even when the promise has already settled: that marks a rejection
	// as handled, so the loop does not also report it as unhandled.
	onFulfilled := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		done <- outcome{text: runtime.Inspect(vm, call.Argument(0))}
		return goja.Undefined()
	})
	onRejected := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		done <- outcome{text: runtime.DescribeRejection(vm, call.Argument(0)), isErr: true}
		return goja.Undefined()
	})
	_, err := then(obj, onFulfilled, onRejected)
	return err
}

// lockedWriter serialises writes to w under mu (shared by stdout and stderr, so their lines
// interleave whole).
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
