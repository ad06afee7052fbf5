package builtins

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// Every registered builtin (function or value) carries its TypeScript type, and Declarations
// declares it; so does every global the runtime installs that ECMAScript does not (console,
// timers, exit), and every built-in module.
func TestTypesDeclareEveryGlobal(t *testing.T) {
	d := Declarations()
	for _, info := range List() {
		switch info.Kind {
		case "function":
			v := Lookup(info.Name)
			if v.Result == nil {
				t.Errorf("builtin %s has no Result type: set Params and Result in its Verb", info.Name)
			}
			if !regexp.MustCompile(`(?m)^declare function ` + info.Name + `\(`).MatchString(d) {
				t.Errorf("mosh.d.ts does not declare function %s", info.Name)
			}
		case "value":
			if !regexp.MustCompile(`(?m)^declare const ` + info.Name + `: [^a]`).MatchString(d) {
				t.Errorf("mosh.d.ts does not declare value %s with a type", info.Name)
			}
		}
	}

	// What a script's global object holds beyond a bare goja runtime's must all be declared.
	bare := map[string]bool{}
	for _, k := range goja.New().GlobalObject().GetOwnPropertyNames() {
		bare[k] = true
	}
	r := run(t, `console.log(Object.getOwnPropertyNames(globalThis).join("\n"))`, Config{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	var extra []string
	for _, k := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if !bare[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) < 20 {
		t.Fatalf("only %d script globals found: %v", len(extra), extra)
	}
	for _, k := range extra {
		if !regexp.MustCompile(`(?m)^declare (function|const) ` + regexp.QuoteMeta(k) + `[(:]`).MatchString(d) {
			t.Errorf("script global %s is not declared in mosh.d.ts", k)
		}
	}

	for _, info := range List() {
		want := map[string]string{"herdList": "() => Promise<Member[]>", "argv": "readonly string[]", "exists": "(path: string) => boolean"}[info.Name]
		if want != "" && info.Signature != want {
			t.Errorf("mosh commands --json: %s signature %q, want %q", info.Name, info.Signature, want)
		}
	}
	if !strings.Contains(d, "declare module \"mosh:eval\" {") || !strings.Contains(d, "export function loadDataset(path: string): Case[];") {
		t.Errorf("mosh:eval is not declared:\n%s", d)
	}
	for _, want := range []string{
		"declare function herdList(): Promise<Member[]>;",
		"declare function herdTask(id: string): Promise<Task | null>;",
		"declare function sh(cmd: string | string[], opts?: { cwd?: string; env?: Record<string, string>; timeout?: number | string; input?: string }): Promise<ShResult>;",
		"\ninterface Member {",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("mosh.d.ts lacks %q", want)
		}
	}
}

// tscPath finds TypeScript's compiler: $MOSH_TSC, else conformance/types/node_modules (CI
// installs it with `npm ci --prefix conformance/types`).
func tscPath(t *testing.T) string {
	if p := os.Getenv("MOSH_TSC"); p != "" {
		return p
	}
	p, err := filepath.Abs("../conformance/types/node_modules/.bin/tsc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("MOSH_TSC_REQUIRED") != "" {
			t.Fatalf("tsc is not installed (%v): run npm ci --prefix conformance/types", err)
		}
		t.Skipf("tsc is not installed: npm ci --prefix conformance/types (or set MOSH_TSC)")
	}
	return p
}

// tsc --noEmit accepts mosh.d.ts with real scripts (the bundled examples and hooks verb, as
// TypeScript modules), and refuses a script that misuses a builtin: the declarations check.
func TestTypesCompileWithTSC(t *testing.T) {
	tsc := tscPath(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mosh.d.ts"), []byte(Declarations()), 0o600); err != nil {
		t.Fatal(err)
	}
	scripts := []string{"../scripts/examples/fanout-mixed.mosh", "../scripts/examples/files.mosh", "../scripts/examples/timers.mosh"}
	var files []string
	for _, s := range scripts {
		src, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.TrimPrefix(string(src), "#!/usr/bin/env mosh\n")
		name := filepath.Join(dir, strings.TrimSuffix(filepath.Base(s), ".mosh")+".ts")
		// A .mosh script is a module for top-level await.
		if err := os.WriteFile(name, []byte(text+"\nexport {}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	example := `import { loadDataset, score } from "mosh:eval"
const cases = loadDataset("evals/x.jsonl")
const m = await herdList()
const names: string[] = m.map(x => x.name)
const p = await herdPrompt(names[0], "hi", { answer: true })
const t = p.task ? await herdTask(p.task) : null
const s = await score(cases[0], t?.artifact?.text ?? "")
const r = await sh(["echo", "x"], { timeout: "2s" })
console.log(s.pass, r.stdout.trim(), argv.length, env.HOME, flags.name, alive)
setTimeout(() => exit(0), 10)
export {}
`
	files = append(files, filepath.Join(dir, "example.ts"))
	if err := os.WriteFile(files[len(files)-1], []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	// Scripts are JavaScript: no strict null or implicit-any checks, as an editor checks a .js file.
	args := []string{"--noEmit", "--target", "es2022", "--module", "es2022", "--lib", "es2022",
		"--moduleResolution", "bundler", filepath.Join(dir, "mosh.d.ts")}
	out, err := exec.Command(tsc, append(args, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tsc refused the declarations or a script: %v\n%s", err, out)
	}

	// A misuse is caught: a herd* result used without await, a wrong argument type.
	bad := filepath.Join(dir, "bad.ts")
	if err := os.WriteFile(bad, []byte("const m = herdList()\nconsole.log(m.length)\nherdRead(42)\nexport {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(tsc, append(args, bad)...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.ts(2,") || !strings.Contains(string(out), "bad.ts(3,") {
		t.Fatalf("tsc accepted misuses of herdList and herdRead: %v\n%s", err, out)
	}
}

// Every export of mosh:eval (modules/eval.js) is declared in mosh.d.ts, so an export added to
// the module without its declaration fails here.
func TestTypesDeclareEveryModuleExport(t *testing.T) {
	d := Declarations()
	re := regexp.MustCompile(`(?m)^export\s+(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)`)
	exports := re.FindAllStringSubmatch(evalModule, -1)
	if len(exports) < 4 {
		t.Fatalf("found only %d exports in eval.js", len(exports))
	}
	for _, m := range exports {
		if !regexp.MustCompile(`export (?:function|const) ` + regexp.QuoteMeta(m[1]) + `[(:]`).MatchString(d) {
			t.Errorf("mosh:eval exports %s, but mosh.d.ts does not declare it: add it to evalModuleTypes", m[1])
		}
	}
}
