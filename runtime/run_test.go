package runtime

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
)

// result is what one Run produced.
type result struct {
	stdout, stderr string
	err            error
}

func (r result) code() exitcode.Code { return exitcode.Of(r.err) }

// runSource runs src named name (files, when given, are written to a temp dir first and name is
// resolved inside it).
func runSource(t *testing.T, name, src string, files map[string]string, o Options) result {
	t.Helper()
	if len(files) > 0 {
		dir := t.TempDir()
		for f, body := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		o.Dir = dir
	}
	var out, errOut bytes.Buffer
	o.Stdout, o.Stderr = &out, &errOut
	ctx := context.Background()
	err := Run(ctx, Script{Name: name, Source: []byte(src)}, o)
	return result{out.String(), errOut.String(), err}
}

func TestConsoleAndTimers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, stdout, stderr string
	}{
		{"log formats values like util.inspect",
			`console.log("s", 1, true, null, undefined, {a: 1, b: "x", c: [1, "2"]}, [], {})`,
			"s 1 true null undefined { a: 1, b: 'x', c: [ 1, '2' ] } [] {}\n", ""},
		{"nested depth and cycles",
			`const o = {a: {b: {c: {d: 1}}}}; o.self = o; console.log(o)`,
			"{ a: { b: { c: [Object] } }, self: [Circular] }\n", ""},
		{"functions, maps, sets, quoting",
			`function f(){}; console.log(f, () => 1, new Map([["k", 1]]), new Set([1]), {"a-b": "it's"})`,
			"[Function: f] [Function (anonymous)] Map(1) { 'k' => 1 } Set(1) { 1 } { 'a-b': \"it's\" }\n", ""},
		{"printf directives",
			`console.log("%s has %d items (%j) %%", "cart", 3.7, {a: 1}, "extra")`,
			"cart has 3.7 items ({\"a\":1}) % extra\n", ""},
		{"warn and error go to stderr",
			`console.warn("w"); console.error("e"); console.info("i"); console.debug("d")`,
			"i\nd\n", "w\ne\n"},
		{"timers fire by delay, ties in order set, args passed",
			`setTimeout(() => console.log("c"), 20)
			 setTimeout((x, y) => console.log("a", x, y), 0, "x", 2)
			 setTimeout(() => console.log("b"), 0)
			 console.log("sync")`,
			"sync\na x 2\nb\nc\n", ""},
		{"microtasks before timers",
			`setTimeout(() => console.log("timer"), 0)
			 queueMicrotask(() => console.log("micro"))
			 Promise.resolve().then(() => console.log("promise"))
			 console.log("sync")`,
			"sync\nmicro\npromise\ntimer\n", ""},
		{"clearTimeout and clearInterval",
			`const t = setTimeout(() => console.log("never"), 5); clearTimeout(t)
			 let n = 0; const i = setInterval(() => { n++; console.log("tick", n); if (n === 3) clearInterval(i) }, 1)`,
			"tick 1\ntick 2\ntick 3\n", ""},
		{"top-level await with timers",
			`const v = await new Promise(r => setTimeout(() => r(7), 5)); console.log("got", v)`,
			"got 7\n", ""},
		{"dates, symbols, bigint, typed arrays, classes, boxed values",
			`class Point { constructor() { this.x = 1 } }; console.log(new Date(0), Symbol("s"), {[Symbol("k")]: 1}, 10n, new Uint8Array([1, 2]), new Point(), Object.create(null), new String("s"), /a+/g)`,
			"1970-01-01T00:00:00.000Z Symbol(s) { [Symbol(k)]: 1 } 10n Uint8Array(2) [ 1, 2 ] Point { x: 1 } [Object: null prototype] {} [String: 's'] /a+/g\n", ""},
		{"long values break across lines",
			`console.log({ first: "aaaaaaaaaaaaaaaaaaaa", second: "bbbbbbbbbbbbbbbbbbbb", third: [1, 2, 3], fourth: { g: 1 } })`,
			"{\n  first: 'aaaaaaaaaaaaaaaaaaaa',\n  second: 'bbbbbbbbbbbbbbbbbbbb',\n  third: [ 1, 2, 3 ],\n  fourth: { g: 1 }\n}\n", ""},
		{"promises show their state",
			`console.log(Promise.resolve(1), new Promise(() => {}), class A {}, async function af() {})`,
			"Promise { 1 } Promise { <pending> } [class A] [Function: af]\n", ""},
		{"errors print their stack",
			`console.log(new Error("bad"))`,
			"Error: bad\n    at <eval>:1:13\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runSource(t, "<eval>", c.src, nil, Options{})
			if r.err != nil {
				t.Fatalf("Run: %v", r.err)
			}
			if r.stdout != c.stdout || r.stderr != c.stderr {
				t.Errorf("stdout %q stderr %q\nwant   %q stderr %q", r.stdout, r.stderr, c.stdout, c.stderr)
			}
		})
	}
}

// installWork adds work(ms, failWith) → Async promise, and panicNow() / panicLater() builtins.
func installWork(vu VU) error {
	vm := vu.Runtime()
	if err := vm.Set("work", func(call goja.FunctionCall) goja.Value {
		ms := call.Argument(0).ToInteger()
		fail := call.Argument(1).String()
		if goja.IsUndefined(call.Argument(1)) {
			fail = ""
		}
		return vm.ToValue(Async(vu, func(ctx context.Context) (any, error) {
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if fail != "" {
				return nil, errors.New(fail)
			}
			return map[string]any{"slept": ms}, nil
		}))
	}); err != nil {
		return err
	}
	if err := vm.Set("panicNow", func() { panic("kaboom") }); err != nil {
		return err
	}
	if err := vm.Set("panicLater", func(call goja.FunctionCall) goja.Value {
		return vm.ToValue(Async(vu, func(context.Context) (any, error) { panic("async kaboom") }))
	}); err != nil {
		return err
	}
	if err := vm.Set("throwGo", func(msg string) { Throw(vm, errors.New(msg)) }); err != nil {
		return err
	}
	if err := vm.Set("infraFail", func() *goja.Promise {
		return Async(vu, func(context.Context) (any, error) {
			return nil, exitcode.New(exitcode.Infra, "daemon unreachable")
		})
	}); err != nil {
		return err
	}
	return vm.Set("typeErr", func() { ThrowTypeError(vm, "typeErr(x): x is required, got %d args", 0) })
}

func TestAsync(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src      string
		stdout         string
		code           exitcode.Code
		errContains    []string
		stdoutContains []string
	}{
		{name: "resolves on the loop and is waited for",
			src:    "work(30).then(v => console.log('done', v.slept))\nconsole.log('first')",
			stdout: "first\ndone 30\n"},
		{name: "await at top level",
			src:    "const v = await work(5)\nconsole.log(v)",
			stdout: "{ slept: 5 }\n"},
		{name: "Promise.all runs work concurrently",
			src:    "const r = await Promise.all([work(20), work(10)])\nconsole.log(r.map(x => x.slept).join(','))",
			stdout: "20,10\n"},
		{name: "rejection carries the JS call site",
			src:            "try {\n  await work(1, 'boom')\n} catch (e) { console.log(e.stack) }",
			stdoutContains: []string{"Error: boom\n", "at hello.mosh:2:9"}},
		{name: "unhandled Async rejection fails with location",
			src:         "console.log('x')\n\nwork(1, 'boom')",
			code:        exitcode.Script,
			errContains: []string{"Uncaught (in promise) Error: boom", "at hello.mosh:3:5"}},
		{name: "an uncaught builtin error keeps its exit code",
			src:         "await infraFail()",
			code:        exitcode.Infra,
			errContains: []string{"Uncaught Error: daemon unreachable\n    at hello.mosh:1:7"}},
		{name: "Throw is catchable",
			src:    "try { throwGo('nope') } catch (e) { console.log(e instanceof Error, e.message) }",
			stdout: "true nope\n"},
		{name: "ThrowTypeError",
			src:    "try { typeErr() } catch (e) { console.log(e.name + ': ' + e.message) }",
			stdout: "TypeError: typeErr(x): x is required, got 0 args\n"},
		{name: "Go panic in a builtin is a clean error",
			src:         "console.log('before')\npanicNow()\nconsole.log('after')",
			stdout:      "before\n",
			code:        exitcode.Script,
			errContains: []string{"internal error: Go panic", "kaboom", "not in your script"}},
		{name: "Go panic in Async work rejects",
			src:            "try { await panicLater() } catch (e) { console.log(String(e)) }",
			stdoutContains: []string{"internal error: Go panic", "async kaboom"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runSource(t, "hello.mosh", c.src, nil, Options{Install: installWork})
			checkResult(t, r, c.code, c.errContains)
			if c.stdout != "" && r.stdout != c.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, c.stdout)
			}
			for _, s := range c.stdoutContains {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout %q lacks %q", r.stdout, s)
				}
			}
		})
	}
}

func checkResult(t *testing.T, r result, code exitcode.Code, errContains []string) {
	t.Helper()
	if got := r.code(); got != code {
		t.Fatalf("exit code %d, want %d (err: %v; stdout %q)", got, code, r.err, r.stdout)
	}
	msg := ""
	if r.err != nil {
		msg = r.err.Error()
	}
	for _, s := range errContains {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q lacks %q", msg, s)
		}
	}
}

func TestErrorsAndExit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src   string
		stdout      string
		code        exitcode.Code
		errContains []string
		silent      bool
	}{
		{name: "uncaught exception names file:line:col",
			src:         "function boom() {\n  throw new Error('boom')\n}\nboom()",
			code:        exitcode.Script,
			errContains: []string{"Uncaught Error: boom\n    at boom (hello.mosh:2:9)\n    at hello.mosh:4:5"}},
		{name: "thrown non-error value",
			src:         "throw 'just a string'",
			code:        exitcode.Script,
			errContains: []string{"Uncaught 'just a string'", "at hello.mosh:1:1"}},
		{name: "exception in a timer",
			src:         "setTimeout(() => {\n  null.x\n}, 1)",
			code:        exitcode.Script,
			errContains: []string{"Uncaught TypeError", "hello.mosh:2:"}},
		{name: "unhandled rejection",
			src:         "Promise.reject(new Error('nobody catches me'))",
			code:        exitcode.Script,
			errContains: []string{"Uncaught (in promise) Error: nobody catches me", "hello.mosh:1:"}},
		{name: "rejection handled later in the same tick is fine",
			src:    "const p = Promise.reject(new Error('x')); p.catch(e => console.log('caught', e.message))",
			stdout: "caught x\n"},
		{name: "top-level await rejection is uncaught, not (in promise)",
			src:         "await null\nthrow new Error('late')",
			code:        exitcode.Script,
			errContains: []string{"Uncaught Error: late", "hello.mosh:2:"}},
		{name: "exit(3) ends at once",
			src:    "console.log('a'); exit(3); console.log('b')",
			stdout: "a\n", code: 3, silent: true},
		{name: "exit(0) is success",
			src:    "console.log('a'); exit(0); console.log('b')",
			stdout: "a\n", code: 0},
		{name: "exit cannot be caught and skips finally",
			src:    "try { try { exit(4) } catch (e) { console.log('caught') } finally { console.log('finally') } } catch (e) { console.log('outer') }\nconsole.log('after')",
			stdout: "", code: 4, silent: true},
		{name: "exit inside a timer",
			src:    "setTimeout(() => { try { exit(5) } finally { console.log('no') } }, 1)\nsetTimeout(() => console.log('never'), 50)",
			stdout: "", code: 5, silent: true},
		{name: "exit inside a promise reaction after await",
			src:    "await new Promise(r => setTimeout(r, 1))\nPromise.resolve(7).then(exit)\nawait null\nconsole.log('not reached?')",
			stdout: "", code: 7, silent: true},
		{name: "exit with a bad code throws TypeError",
			src:         "exit(1.5)",
			code:        exitcode.Script,
			errContains: []string{"TypeError: exit(code)"}},
		{name: "unsettled top-level await exits instead of hanging",
			src:         "console.log('waiting')\nawait new Promise(() => {})\nconsole.log('never')",
			stdout:      "waiting\n",
			code:        exitcode.Script,
			errContains: []string{"top-level await never settled"}},
		{name: "runaway recursion is a RangeError, not an OOM",
			src:         "function f() { return f() + 1 }\nf()",
			code:        exitcode.Script,
			errContains: []string{"call stack"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runSource(t, "hello.mosh", c.src, nil, Options{})
			checkResult(t, r, c.code, c.errContains)
			if r.stdout != c.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, c.stdout)
			}
			if c.silent && !exitcode.IsSilent(r.err) {
				t.Errorf("exit(n) should carry no message, got %v", r.err)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"while (true) {}", "await new Promise(r => setTimeout(r, 60000))", "await work(60000)"} {
		t.Run(src, func(t *testing.T) {
			t.Parallel()
			r := runSource(t, "t.mosh", src, nil, Options{Timeout: 50 * time.Millisecond, Install: installWork})
			checkResult(t, r, exitcode.Timeout, []string{"script timed out after 50ms"})
		})
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"console.log('spin'); while (true) {}", "console.log('spin'); await work(60000)", "console.log('spin'); setInterval(() => {}, 1000)"} {
		t.Run(src, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(context.Background())
			out := &syncBuffer{started: make(chan struct{})}
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, Script{Name: "i.mosh", Source: []byte(src)}, Options{Stdout: out, Install: installWork})
			}()
			<-out.started // the script is running
			cancel(errors.New("interrupted"))
			err := <-done
			checkResult(t, result{err: err}, exitcode.Interrupted, []string{"interrupted"})
		})
	}
}

// syncBuffer closes started on its first write.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	started chan struct{}
	once    sync.Once
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.once.Do(func() { close(b.started) })
	return b.buf.Write(p)
}

func TestImports(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"lib.mosh":      "import { double } from './util/math.ts'\nexport const answer = double(21)\nexport function fail(msg) {\n  throw new Error('lib: ' + msg)\n}\n",
		"util/math.ts":  "export function double(n: number): number {\n  return n * 2\n}\nexport function explode(): never {\n  throw new TypeError('from ts')\n}\n",
		"plain.js":      "export default { kind: 'plain' }\n",
		"bad/syntax.js": "export const x = (1 +;\n",
	}
	cases := []struct {
		name, src   string
		stdout      string
		code        exitcode.Code
		errContains []string
	}{
		{name: "imports across three files incl. ts",
			src:    "import { answer } from './lib.mosh'\nimport plain from './plain.js'\nconsole.log(answer, plain.kind)",
			stdout: "42 plain\n"},
		{name: "stack names original files across imports",
			src:         "import { fail } from './lib.mosh'\n\nfail('boom')",
			code:        exitcode.Script,
			errContains: []string{"Uncaught Error: lib: boom\n    at fail (lib.mosh:4:9)\n    at main.mosh:3:1"}},
		{name: "stack into a ts file",
			src:         "import { explode } from './util/math.ts'\nawait null\nexplode()",
			code:        exitcode.Script,
			errContains: []string{"Uncaught TypeError: from ts", "at explode (util/math.ts:5:9)", "at main.mosh:3:1"}},
		{name: "missing import",
			src:         "import { x } from './nope.mosh'",
			code:        exitcode.Script,
			errContains: []string{"main.mosh:1:19: ImportError: Could not resolve \"./nope.mosh\"", "\nimport { x } from './nope.mosh'\n                  ^"}},
		{name: "syntax error in an imported file",
			src:         "import { x } from './bad/syntax.js'",
			code:        exitcode.Script,
			errContains: []string{"bad/syntax.js:1:22: SyntaxError: Unexpected \";\"\nexport const x = (1 +;\n                     ^"}},
		{name: "dynamic import of a relative file",
			src:    "const m = await import('./lib.mosh')\nconsole.log(m.answer)",
			stdout: "42\n"},
		{name: "entry may export",
			src:    "export const y = 1\nconsole.log('ok', y)",
			stdout: "ok 1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runSource(t, "main.mosh", c.src, files, Options{})
			checkResult(t, r, c.code, c.errContains)
			if r.stdout != c.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, c.stdout)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, src, want string }{
		{"direct path", "hello.mosh", "console.log('ok')\nlet z = ;\n",
			"hello.mosh:2:9: SyntaxError: Unexpected token ;\nlet z = ;\n        ^"},
		{"bundled path (top-level await)", "hello.mosh", "await 1\nlet z = ;\n",
			"hello.mosh:2:9: SyntaxError: Unexpected \";\"\nlet z = ;\n        ^"},
		{"non-ASCII before the error", "é.mosh", "const s = 'héé'; let = ;",
			"é.mosh:1:24: SyntaxError: Unexpected token ;\nconst s = 'héé'; let = ;\n                       ^"},
		{"TypeScript", "x.ts", "const n: number = ;",
			"x.ts:1:19: SyntaxError: Unexpected \";\"\nconst n: number = ;\n                  ^"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runSource(t, c.file, c.src, nil, Options{})
			checkResult(t, r, exitcode.Script, []string{c.want})
		})
	}
}

func TestBOMAndShebang(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"\ufeff#!/usr/bin/env mosh\nconsole.log('ok')\nthrow new Error('line 3')",
		"#!/usr/bin/env mosh\nawait null; console.log('ok')\nthrow new Error('line 3')",
	} {
		r := runSource(t, "s.mosh", src, nil, Options{})
		checkResult(t, r, exitcode.Script, []string{"Uncaught Error: line 3\n    at s.mosh:3:7"})
		if r.stdout != "ok\n" {
			t.Errorf("stdout %q", r.stdout)
		}
	}
}

func TestEarlyEndWaitsForGoWork(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"observe(); exit(0)", "observe(); throw new Error('x')"} {
		var sawCancel bool
		runSource(t, "w.mosh", src, nil, Options{Install: func(vu VU) error {
			return vu.Runtime().Set("observe", func() *goja.Promise {
				return Async(vu, func(ctx context.Context) (any, error) {
					<-ctx.Done() // work that only ends when the run tells it to
					sawCancel = true
					return nil, ctx.Err()
				})
			})
		}})
		if !sawCancel {
			t.Errorf("%q: Run returned before the Go work saw the cancellation and finished", src)
		}
	}
}

// TestRegisterCallbackOnce: a reserved callback runs once; settling it again is a bug in the
// builtin (a promise settled twice) and panics in tests, as k6's RegisterCallback does.
func TestRegisterCallbackOnce(t *testing.T) {
	t.Parallel()
	var calls int
	var panics atomic.Int32
	r := runSource(t, "once.mosh", "twice()", nil, Options{Install: func(vu VU) error {
		return vu.Runtime().Set("twice", func() {
			done := vu.RegisterCallback()
			all := vu.RegisterCallback() // keeps the run alive until every settle was tried
			go func() {
				defer all(func() error { return nil })
				var wg sync.WaitGroup
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer func() {
							if recover() != nil {
								panics.Add(1)
							}
						}()
						done(func() error { calls++; return nil })
					}()
				}
				wg.Wait()
			}()
		})
	}})
	checkResult(t, r, exitcode.OK, nil)
	if calls != 1 {
		t.Errorf("callback ran %d times, want 1", calls)
	}
	if n := panics.Load(); n != 3 {
		t.Errorf("%d of the 3 extra settles panicked, want all 3", n)
	}
}

// A run that ended early waits for Go work that still holds a reservation at most
// Options.DrainGrace: a builtin that ignores the cancellation does not hang the process. The
// reservation here is never settled while Run runs (the test releases it after).
func TestDrainGraceBoundsAStuckBuiltin(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	r := runSource(t, "stuck.mosh", "stuck(); throw new Error('boom')", nil, Options{DrainGrace: time.Millisecond, Install: func(vu VU) error {
		return vu.Runtime().Set("stuck", func() {
			done := vu.RegisterCallback()
			go func() {
				<-release // deaf to vu.Context()
				done(func() error { return nil })
			}()
		})
	}})
	checkResult(t, r, exitcode.Script, []string{"boom"})
}

func TestCallbackErrorFailsScript(t *testing.T) {
	t.Parallel()
	r := runSource(t, "cb.mosh", "fail()", nil, Options{Install: func(vu VU) error {
		return vu.Runtime().Set("fail", func() {
			done := vu.RegisterCallback()
			go done(func() error { return exitcode.New(exitcode.Infra, "daemon unreachable: start it with `mosh herd`") })
		})
	}})
	checkResult(t, r, exitcode.Infra, []string{"daemon unreachable"})
}

func TestInstallError(t *testing.T) {
	t.Parallel()
	r := runSource(t, "i.mosh", "1", nil, Options{Install: func(VU) error { return errors.New("no herd") }})
	checkResult(t, r, exitcode.Infra, []string{"no herd"})
}

func TestVUAccessors(t *testing.T) {
	t.Parallel()
	var got VU
	r := runSource(t, "dir/v.mosh", "1", nil, Options{Args: []string{"a"}, Env: map[string]string{"K": "v"}, Install: func(vu VU) error {
		got = vu
		return nil
	}})
	checkResult(t, r, exitcode.OK, nil)
	if got.ScriptName() != "dir/v.mosh" || got.Dir() != "dir" || got.Args()[0] != "a" || got.Env()["K"] != "v" || got.Stdin() == nil {
		t.Errorf("VU: name %q dir %q args %v env %v", got.ScriptName(), got.Dir(), got.Args(), got.Env())
	}
	if got.Context().Err() == nil {
		t.Error("the run's context should be cancelled once Run returns")
	}
}

func TestInspectGoValues(t *testing.T) {
	t.Parallel()
	type task struct {
		ID    string
		Count int
	}
	r := runSource(t, "g.mosh", "console.log(slice, goMap, st)", nil, Options{Install: func(vu VU) error {
		vm := vu.Runtime()
		if err := vm.Set("slice", []string{"a", "b"}); err != nil {
			return err
		}
		if err := vm.Set("goMap", map[string]int{"z": 1, "a": 2, "m": 3}); err != nil {
			return err
		}
		return vm.Set("st", &task{ID: "t-1", Count: 3})
	}})
	checkResult(t, r, exitcode.OK, nil)
	if want := "[ 'a', 'b' ] { a: 2, m: 3, z: 1 } { id: 't-1', count: 3 }\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}

func TestFieldNameMapper(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"ID": "id", "URL": "url", "UserID": "userID", "HTTPServer": "httpServer", "ExitCode": "exitCode", "A": "a", "already": "already"} {
		if got := LowerCamel(in); got != want {
			t.Errorf("LowerCamel(%q) = %q, want %q", in, got, want)
		}
	}
	type member struct {
		ID       string
		BaseURL  string
		Renamed  int `json:"count,omitempty"`
		Hidden   int `json:"-"`
		JSWins   int `js:"jsName" json:"jsonName"`
		ExitCode int
	}
	r := runSource(t, "m.mosh", "console.log(Object.keys(m).sort().join(','), m.id, m.count)", nil, Options{Install: func(vu VU) error {
		return vu.Runtime().Set("m", member{ID: "a1", Renamed: 3})
	}})
	checkResult(t, r, exitcode.OK, nil)
	if want := "baseURL,count,exitCode,id,jsName a1 3\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}

// TestRunWaitsForOnEnd: cleanup a builtin registers with OnEnd runs when the run ends, however
// it ends (done, an error, Ctrl-C), after the run's context was cancelled, and Run returns only
// once it finished: a process that exits when Run returns never cuts a cleanup short (an
// interrupted eval killing its members).
func TestRunWaitsForOnEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src string }{
		{"done", "register()"},
		{"error", "register(); throw new Error('x')"},
		{"interrupt", "register(); await new Promise(() => { interruptMe() })"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var order []string
			var cancelled bool
			gate, started := make(chan struct{}), make(chan struct{})
			returned := make(chan error, 1)
			go func() {
				returned <- Run(ctx, Script{Name: "end.mosh", Source: []byte(tc.src)}, Options{Install: func(vu VU) error {
					if err := vu.Runtime().Set("interruptMe", func() { cancel() }); err != nil {
						return err
					}
					return vu.Runtime().Set("register", func() {
						vu.OnEnd(func() { order = append(order, "first") })
						vu.OnEnd(func() {
							cancelled = vu.Context().Err() != nil
							close(started)
							<-gate
							order = append(order, "second")
						})
					})
				}})
			}()
			select {
			case err := <-returned:
				t.Fatalf("Run returned (%v) before its end functions ran", err)
			case <-started:
			}
			select {
			case err := <-returned:
				t.Fatalf("Run returned (%v) while an end function was still running", err)
			default:
			}
			close(gate)
			<-returned
			if strings.Join(order, ",") != "second,first" || !cancelled {
				t.Fatalf("end functions ran %v (want second,first: last registered first), context cancelled: %v", order, cancelled)
			}
		})
	}
}
