package repl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/runtime"
)

// runLines runs a REPL on piped input and returns stdout, stderr and the error.
func runLines(t *testing.T, input string, o Options) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	o.Stdin = strings.NewReader(input)
	o.Stdout, o.Stderr = &out, &errOut
	err := Run(context.Background(), o)
	return out.String(), errOut.String(), err
}

func TestEval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, input, stdout, stderr string
	}{
		{"expressions print like node", "1 + 1\n'str'\n({a: [1, 'x']})\nundefined\n", "2\n'str'\n{ a: [ 1, 'x' ] }\nundefined\n", ""},
		{"let, const and class can be redeclared", "let a = 1\nlet a = 2\nconst a = 3\na\nclass C { v() { return 1 } }\nclass C { v() { return 2 } }\nnew C().v()\n", "undefined\nundefined\nundefined\n3\nundefined\nundefined\n2\n", ""},
		{"multi-line input", "function f() {\n  return 42\n}\nf()\n[1,\n 2]\n`a\nb`\n", "undefined\n42\n[ 1, 2 ]\n'a\\nb'\n", ""},
		{"promise results are awaited", "Promise.resolve(5)\nnew Promise(r => setTimeout(() => r('late'), 10))\n", "5\n'late'\n", ""},
		{"top-level await keeps declarations", "const r = await Promise.resolve(3)\nr * 2\nlet {x, y: [z]} = await {x: 1, y: [2]}\nx + z\nawait null; function g() { return 'g' }\ng()\n", "undefined\n6\nundefined\n3\nundefined\n'g'\n", ""},
		{"await expression value", "await new Promise(r => setTimeout(() => r(7), 5))\n", "7\n", ""},
		{"timers keep running between inputs", "setTimeout(() => console.log('tick'), 5)\nawait new Promise(r => setTimeout(r, 50))\n", "1\ntick\nundefined\n", ""},
		{"errors are printed and the session goes on", "throw new Error('boom')\n1\n", "1\n", "Uncaught Error: boom\n    at <repl>:1:7\n"},
		{"rejected promise result", "Promise.reject(new Error('no'))\n2\n", "2\n", "Uncaught Error: no\n    at <repl>:1:16\n"},
		{"syntax error with caret", "let z = ;\nawait 1; let y = ;\n3\n", "3\n", "<repl>:1:9: SyntaxError: Unexpected token ;\nlet z = ;\n        ^\n<repl>:1:18: SyntaxError: Unexpected token ;\nawait 1; let y = ;\n                 ^\n"},
		{"throwing timer is reported, session goes on", "setTimeout(() => { throw new Error('in timer') }, 1)\nawait new Promise(r => setTimeout(r, 30))\n'alive'\n", "1\nundefined\n'alive'\n", "Uncaught Error: in timer\n    at <repl>:1:26\n"},
		{"dot commands", ".help\n.nope\n.exit\n1\n", helpText, "unknown REPL command .nope (try .help)\n"},
		{"a line that starts with ( and awaits", "(await Promise.resolve([1, 2])).length\n((await Promise.resolve(3)))\nlet n = 2; (await Promise.resolve(n)) * 2\n", "2\n3\n4\n", ""},
		{"the rewrite never shows in an error", "await 1; let q = ;\nlet w = await 1; w +* 2\n", "",
			"<repl>:1:18: SyntaxError: Unexpected token ;\nawait 1; let q = ;\n                 ^\n<repl>:1:21: SyntaxError: Unexpected token *\nlet w = await 1; w +* 2\n                    ^\n"},
		{"imports of built-in modules", "import { ASSERT_TYPES as T } from \"mosh:test\"\nT.length\nconst m = await import(\"mosh:test\")\nm.ASSERT_TYPES[0]\nimport * as ns from 'mosh:test'; ns.double(4)\nimport \"mosh:test\"\n", "undefined\n2\nundefined\n'a'\n8\nundefined\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, err := runLines(t, c.input, Options{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out != c.stdout || errOut != c.stderr {
				t.Errorf("stdout %q\nstderr %q\nwant   %q\nstderr %q", out, errOut, c.stdout, c.stderr)
			}
		})
	}
}

func init() {
	runtime.RegisterModule("test", "export const ASSERT_TYPES = ['a', 'b']\nexport function double(x) { return 2 * x }\n")
}

// A module that does not exist is an error naming it, thrown by a static import and rejected by
// a dynamic one; the session goes on.
func TestImportErrors(t *testing.T) {
	t.Parallel()
	out, errOut, err := runLines(t, "import { x } from \"mosh:nope\"\nawait import(\"mosh:nope\")\n1\n", Options{})
	if err != nil || out != "1\n" || strings.Count(errOut, `no built-in module "mosh:nope"`) != 2 || strings.Contains(errOut, importFn) {
		t.Fatalf("stdout %q stderr %q err %v", out, errOut, err)
	}
}

func TestExit(t *testing.T) {
	t.Parallel()
	for _, input := range []string{"console.log('a')\nexit(3)\nconsole.log('never')\n", "setTimeout(() => exit(3), 1)\nawait new Promise(() => {})\n"} {
		out, _, err := runLines(t, input, Options{})
		if exitcode.Of(err) != 3 {
			t.Errorf("%q: exit code %d (%v), want 3; stdout %q", input, exitcode.Of(err), err, out)
		}
		if strings.Contains(out, "never") {
			t.Errorf("ran past exit: %q", out)
		}
	}
}

func TestInstallAndArgs(t *testing.T) {
	t.Parallel()
	out, _, err := runLines(t, "greet()\n", Options{Install: func(vu runtime.VU) error {
		return vu.Runtime().Set("greet", func() string { return "hi " + vu.Args()[0] })
	}, Args: []string{"bob"}})
	if err != nil || out != "'hi bob'\n" {
		t.Errorf("out %q err %v", out, err)
	}
}

func TestGoPanicInBuiltin(t *testing.T) {
	t.Parallel()
	out, errOut, err := runLines(t, "boom()\n1 + 1\n", Options{Install: func(vu runtime.VU) error {
		return vu.Runtime().Set("boom", func() { panic("kaboom") })
	}})
	if err != nil || out != "2\n" || !strings.Contains(errOut, "internal error: Go panic") || !strings.Contains(errOut, "kaboom") {
		t.Errorf("stdout %q stderr %q err %v", out, errOut, err)
	}
}

func TestHistoryFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mosh")
	path := filepath.Join(dir, "repl_history")
	if _, _, err := runLines(t, "1 + 1\nfunction f() {\n  return 1\n}\n secret()\n", Options{HistoryPath: path}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runLines(t, "2 + 2\n", Options{HistoryPath: path}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 + 1\nfunction f() { return 1 }\n2 + 2\n"; string(data) != want {
		t.Errorf("history %q, want %q", data, want)
	}
	// An entry whose lines cannot be joined (a // comment, a template literal) comes back whole
	// after a restart, not in fragments.
	multi := "function g() { // the answer\n  return `4\n2`\n}"
	if _, _, err := runLines(t, multi+"\n", Options{HistoryPath: path}); err != nil {
		t.Fatal(err)
	}
	h, err := openHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.entries; len(got) != 4 || got[3] != multi || got[1] != "function f() { return 1 }" {
		t.Errorf("history entries after a restart %q, want the last %q whole", got, multi)
	}
	st, _ := os.Stat(path)
	dst, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Errorf("history mode %v, dir mode %v; want 0600 and 0700", st.Mode().Perm(), dst.Mode().Perm())
	}
}

func TestIncomplete(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"function f() {": true, "foo(": true, "`abc": true, "x =": true, "[1,": true, "if (x)": true,
		"let z = ;": false, "1 + 1": false, "x // comment": false, "await f(": true, "}": false, "'unterminated": false,
	} {
		if got := incomplete(src); got != want {
			t.Errorf("incomplete(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestComplete(t *testing.T) {
	t.Parallel()
	sess, err := runtime.NewSession(context.Background(), "<repl>", runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	r := &replState{sess: sess}
	if err := sess.Do(func(vm *goja.Runtime) error {
		_, err := vm.RunString("var deep = {inner: {alpha: 1, alps: 2, beta: 3}}")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line string
		want []string
	}{
		{"cons", []string{"console", "const"}},
		{"x = console.lo", []string{"console.log"}},
		{"deep.inner.al", []string{"deep.inner.alpha", "deep.inner.alps"}},
		{"'s'.toUpper", nil},
		{"nothing.here.", nil},
		{"deep.inner.", []string{"deep.inner.alpha", "deep.inner.alps", "deep.inner.beta", "deep.inner.constructor"}},
	}
	for _, c := range cases {
		head, got, _ := r.complete(c.line, len(c.line))
		if !containsAll(got, c.want) || (c.want == nil && len(got) > 0 && c.line != "'s'.toUpper") {
			t.Errorf("complete(%q) = head %q %v, want %v", c.line, head, got, c.want)
		}
	}
}

func containsAll(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}
