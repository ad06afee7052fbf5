package builtins

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/runtime"
)

type result struct {
	stdout, stderr string
	err            error
}

// run runs src as a script with the vocabulary installed.
func run(t *testing.T, src string, cfg Config) result {
	t.Helper()
	return runCtx(t, context.Background(), src, cfg, 0)
}

func runCtx(t *testing.T, ctx context.Context, src string, cfg Config, timeout time.Duration) result {
	t.Helper()
	var out, errb bytes.Buffer
	if cfg.Env == nil {
		cfg.Env = map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()}
	}
	err := runtime.Run(ctx, runtime.Script{Name: "test.mosh", Source: []byte(src)}, runtime.Options{
		Stdout: &out, Stderr: &errb, Timeout: timeout, Env: cfg.Env, Args: cfg.Args,
		Install: func(vu runtime.VU) error { return Install(vu, cfg) },
	})
	return result{out.String(), errb.String(), err}
}

func expectOut(t *testing.T, r result, want string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("script failed: %v\nstderr: %s", r.err, r.stderr)
	}
	if r.stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr: %s", r.stdout, want, r.stderr)
	}
}

func TestValues(t *testing.T) {
	r := run(t, `
console.log(JSON.stringify(argv), Array.isArray(argv))
console.log(env.GREETING)
console.log(flags.name, flags["dry-run"], flags.dryRun, flags.wait)
`, Config{Args: []string{"a", "b c"}, Env: map[string]string{"GREETING": "hi"},
		Flags: map[string]any{"name": "x", "dry-run": true, "wait": int64(2000)}})
	expectOut(t, r, "[\"a\",\"b c\"] true\nhi\nx true true 2000\n")
}

func TestAliveBoundedByMax(t *testing.T) {
	r := run(t, `let n = 0; while (alive) n++; console.log(n); console.log(alive)`, Config{})
	expectOut(t, r, "3\nfalse\n")
	if r.stderr != "hit --max 3 — stopping (pass --max N to go longer, --max 0 for no cap)\n" {
		t.Fatalf("stderr = %q", r.stderr)
	}
	r = run(t, `let n = 0; while (alive) { n++; if (n == 2) stop() } console.log(n)`, Config{Max: 10})
	expectOut(t, r, "2\n")
	if r.stderr != "" {
		t.Fatalf("stop() must not print the --max notice: %q", r.stderr)
	}
	r = run(t, `let n = 0; while (alive) { n++; if (n == 4) alive = false } console.log(n)`, Config{Max: 10})
	expectOut(t, r, "4\n")
}

// TestAliveUnboundedWithNoMax: --max 0 (Config.Max NoMax) is an overnight loop: alive reads
// true until the script stops it, and nothing is printed about a cap.
func TestAliveUnboundedWithNoMax(t *testing.T) {
	r := run(t, `let n = 0; while (alive) { n++; if (n == 5000) stop() } console.log(n); console.log(alive)`, Config{Max: NoMax})
	expectOut(t, r, "5000\nfalse\n")
	if r.stderr != "" {
		t.Fatalf("no cap, no notice: stderr = %q", r.stderr)
	}
}

func TestSayAndSleep(t *testing.T) {
	r := run(t, `
say("hello", 42, {a: 1}, [1, 2], null)
const t0 = Date.now()
await sleep(20)
await sleep("10ms")
say("slept", Date.now() - t0 >= 30)
`, Config{})
	expectOut(t, r, "  💬 hello 42 {\"a\":1} [1,2] null\n  💬 slept true\n")
}

func TestMisuseThrowsTypeErrorWithUsage(t *testing.T) {
	cases := map[string]string{
		`sleep()`:                          `TypeError: sleep(ms | "2s"): missing the duration`,
		`sleep(-1)`:                        `TypeError: sleep(ms | "2s"): the duration must not be negative`,
		`sleep("soon")`:                    `TypeError: sleep(ms | "2s"): the duration: "soon" is not a duration`,
		`readText()`:                       `TypeError: readText(path): missing path`,
		`readText(3)`:                      `TypeError: readText(path): path must be a string, not a number`,
		`sh()`:                             `TypeError: sh(cmd, {cwd, env, timeout, input}): missing cmd`,
		`sh([])`:                           `TypeError: sh(cmd, {cwd, env, timeout, input}): cmd array is empty`,
		`sh("ls", {cdw: "/"})`:             `TypeError: sh(cmd, {cwd, env, timeout, input}): unknown option "cdw" (known: cwd, env, timeout, input)`,
		`query("{}")`:                      `TypeError: query(jsonTextOrValue, "a.b.#.c"): missing the path`,
		`table("x")`:                       `TypeError: table(rows, {columns}): rows must be an array of objects, not a string`,
		`writeJSON("x.json")`:              `TypeError: writeJSON(path, value, {mode}): missing value`,
		`writeText("x", 1)`:                `TypeError: writeText(path, text, {mode}): text must be a string, not a number`,
		`writeText("x", "", {mode: "rw"})`: `TypeError: writeText(path, text, {mode}): mode must be a permission number`,
	}
	for src, want := range cases {
		// Misuse throws synchronously: try/catch around the call (no await) sees it.
		r := run(t, `try { `+src+` ; console.log("no throw") } catch (e) { console.log(String(e)) }`, Config{})
		if r.err != nil || !strings.HasPrefix(r.stdout, want) {
			t.Errorf("%s:\n got %q (err %v)\nwant %q…", src, r.stdout, r.err, want)
		}
	}
}

func TestShResults(t *testing.T) {
	r := run(t, `
const ok = await sh("echo out; echo err >&2")
console.log(JSON.stringify(ok))
const bad = await sh("exit 3")
console.log(JSON.stringify(bad))
const argv = await sh(["printf", "%s|", "a b", "$HOME"])
console.log(argv.stdout)
const input = await sh("tr a-z A-Z", {input: "shout"})
console.log(input.stdout)
const envd = await sh("echo $FOO-$GREETING", {env: {FOO: "foo", GREETING: null}})
console.log(envd.stdout.trim())
const cwd = await sh("pwd", {cwd: "/"})
console.log(cwd.stdout.trim())
env.FROM_SCRIPT = "set in JS"
console.log((await sh("echo $FROM_SCRIPT")).stdout.trim())
const viaShell = await shell("true")
console.log(viaShell.ok)
`, Config{Env: map[string]string{"PATH": os.Getenv("PATH"), "GREETING": "hi"}})
	expectOut(t, r, `{"ok":true,"code":0,"stdout":"out\n","stderr":"err\n"}
{"ok":false,"code":3,"stdout":"","stderr":""}
a b|$HOME|
SHOUT
foo-
/
set in JS
true
`)
}

func TestShCannotStartRejects(t *testing.T) {
	r := run(t, `
try { await sh(["definitely-not-a-program-xyz"]) } catch (e) { console.log(e.message) }
try { await sh("true", {cwd: "/no/such/dir"}) } catch (e) { console.log(e.message) }
const r = await sh("definitely-not-a-program-xyz")
console.log(r.ok, r.code)
`, Config{})
	expectOut(t, r, `sh: cannot start "definitely-not-a-program-xyz": not found (is it installed and on PATH?)
sh: cwd "/no/such/dir" does not exist: create it or pass another {cwd}
false 127
`)
}

func TestShTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "survived")
	// The background child would create the marker after 1s if the group were not killed.
	r := run(t, `
const r = await sh("(sleep 1; touch `+marker+`) & sleep 30", {timeout: "200ms"})
console.log(JSON.stringify(r))
await sleep(1500)
`, Config{})
	expectOut(t, r, `{"ok":false,"code":124,"stdout":"","stderr":"","timedOut":true}`+"\n")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command's background child survived the timeout")
	}
}

func TestShCancelledByRunTimeout(t *testing.T) {
	start := time.Now()
	r := runCtx(t, context.Background(), `await sh("sleep 30")`, Config{}, 300*time.Millisecond)
	if exitcode.Of(r.err) != exitcode.Timeout {
		t.Fatalf("err = %v (code %d), want timeout", r.err, exitcode.Of(r.err))
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("sh kept the run alive after the run's timeout")
	}
}

func TestDryRunNarratesAndSkips(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "x.txt")
	r := run(t, `
const r = await sh("rm -rf x")
console.log(JSON.stringify(r))
const w = writeText("`+target+`", "hello")
console.log(w.ok, w.dryRun, w.bytes)
writeJSON("`+target+`", {a: 1})
console.log(exists("`+target+`"))
console.log((await sh("echo not run")).stdout === "")
`, Config{DryRun: true})
	expectOut(t, r, `{"ok":true,"code":0,"stdout":"","stderr":"","dryRun":true}
true true 5
false
true
`)
	want := `  ▶ sh("rm -rf x") → would run
  ▶ writeText("` + target + `", "hello") → would write 5 bytes
  ▶ writeJSON("` + target + `", {"a":1}) → would write 13 bytes
  ▶ sh("echo not run") → would run
`
	if r.stderr != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
	// Misuse still throws under --dry-run.
	r = run(t, `try { sh() } catch (e) { console.log(e.name) }`, Config{DryRun: true})
	expectOut(t, r, "TypeError\n")
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("secret.json"), []byte(`{"old":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, `
const d = "`+dir+`/"
console.log(JSON.stringify(writeJSON(d + "secret.json", {b: [1, 2], a: "x"})).includes('"ok":true'))
console.log(readText(d + "secret.json"))
console.log(readJSON(d + "secret.json").b[1])
writeText(d + "new.txt", "text")
console.log(readText(d + "new.txt"), exists(d + "new.txt"), exists(d + "nope"))
writeText(d + "private.txt", "p", {mode: 0o600})
console.log(readText(d + "missing.txt"), readJSON(d + "missing.json"))
writeText(d + "bad.json", "{not json")
console.log(readJSON(d + "bad.json"))
try { writeText(d + "no/such/dir/x", "x") } catch (e) { console.log(e.message.replace(d, "D/")) }
`, Config{})
	expectOut(t, r, `true
{
  "b": [
    1,
    2
  ],
  "a": "x"
}

2
text true false
null null
null
writeText: directory D/no/such/dir does not exist: create it first
`)
	for name, want := range map[string]os.FileMode{"secret.json": 0o600, "new.txt": 0o644, "private.txt": 0o600} {
		fi, err := os.Stat(p(name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s mode = %v (%v), want %v", name, fi.Mode().Perm(), err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestQuery(t *testing.T) {
	r := run(t, `
const text = '{"members":[{"name":"api","state":"done"},{"name":"web","state":"blocked"}]}'
console.log(JSON.stringify(query(text, "members.#.name")))
console.log(query(text, "members.1.state"), query(text, "members.#"))
console.log(query({a: {b: [5, 6]}}, "a.b.1"))
console.log(JSON.stringify(query(text, 'members.#(state=="blocked")')))
console.log(query(text, "nope.x"), query("not json", "a"))
`, Config{})
	expectOut(t, r, `["api","web"]
blocked 2
6
{"name":"web","state":"blocked"}
null null
`)
}

func TestTable(t *testing.T) {
	src := `table([{name: "api", state: "done", n: 1}, {name: "web-long", state: "blocked\tx", extra: {a: 1}}])
table([{name: "a", state: "s"}], {columns: ["state", "name"]})
table([["x", 1], ["yy", null]])`
	r := run(t, src, Config{})
	expectOut(t, r, "api\tdone\t1\t\nweb-long\tblocked x\t\t{\"a\":1}\ns\ta\nx\t1\nyy\t\n")
	r = run(t, src, Config{StdoutTTY: true})
	expectOut(t, r, "NAME      STATE      N  EXTRA\n"+
		"api       done       1  \n"+
		"web-long  blocked x     {\"a\":1}\n"+
		"STATE  NAME\n"+
		"s      a\n"+
		"x   1\n"+
		"yy  \n")
}

func TestReadVerbAsyncErrorsResolveEmpty(t *testing.T) {
	// A verb registered the way herd verbs are: async, read, [] on failure, TypeError on misuse.
	v := &Verb{
		Name: "testTasks", Usage: "testTasks(name)", Async: true, Read: true, Empty: EmptyList, Group: "test",
		Bind: func(c *Call) (Action, error) {
			name, err := c.String(0, "name")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(ctx context.Context) (any, error) {
				switch name {
				case "boom":
					return nil, os.ErrNotExist
				case "panic":
					panic("kaboom")
				}
				return []map[string]any{{"id": "t-1", "text": name}}, nil
			}}, nil
		},
	}
	Register(v)
	defer func() {
		registry.Lock()
		delete(registry.byName, v.Name)
		registry.verbs = registry.verbs[:len(registry.verbs)-1]
		registry.Unlock()
	}()
	r := run(t, `
console.log(JSON.stringify(await testTasks("api")))
console.log(JSON.stringify(await testTasks("boom")), Array.isArray(await testTasks("boom")))
console.log(JSON.stringify(await testTasks("panic")))
try { testTasks() } catch (e) { console.log(String(e)) }
`, Config{})
	expectOut(t, r, `[{"id":"t-1","text":"api"}]
[] true
[]
TypeError: testTasks(name): missing name
`)
	found := false
	for _, info := range List() {
		if info.Name == "testTasks" && info.Async && info.Read && info.Group == "test" && info.Usage == "testTasks(name)" {
			found = true
		}
	}
	if !found {
		t.Fatal("List() does not describe the registered verb")
	}
}

func TestGoPanicInSyncVerbDoesNotCrash(t *testing.T) {
	v := &Verb{Name: "testPanic", Bind: func(c *Call) (Action, error) {
		return Action{Do: func(context.Context) (any, error) { var m map[string]int; m["x"] = 1; return nil, nil }}, nil
	}}
	Register(v)
	defer func() {
		registry.Lock()
		delete(registry.byName, v.Name)
		registry.verbs = registry.verbs[:len(registry.verbs)-1]
		registry.Unlock()
	}()
	r := run(t, `try { testPanic() } catch (e) { console.log(e.message.split(":")[0]) }`, Config{})
	expectOut(t, r, "testPanic\n")
}

func TestListIncludesBaseVocabulary(t *testing.T) {
	names := map[string]Info{}
	for _, i := range List() {
		names[i.Name] = i
	}
	for _, want := range []string{"argv", "env", "flags", "alive", "stop", "say", "sleep", "sh", "shell", "readText", "writeText", "readJSON", "writeJSON", "exists", "query", "table"} {
		if _, ok := names[want]; !ok {
			t.Errorf("List() lacks %s", want)
		}
	}
	if i := names["sh"]; !i.Async || !i.SideEffect || i.Read {
		t.Errorf("sh = %+v", i)
	}
	if i := names["readJSON"]; !i.Read || i.Async || i.SideEffect {
		t.Errorf("readJSON = %+v", i)
	}
}

// sh keeps at most Config.ShCapture bytes per stream, keeps draining the child so it finishes,
// and says it cut the output (issue 11: 100 MB came back whole, 3.7 GB RSS, because os/exec's
// copy went through the embedded bytes.Buffer's ReadFrom around the cap).
func TestShCapsCaptureAndDrains(t *testing.T) {
	r := run(t, `
const r = await sh("head -c 1000000 /dev/zero; head -c 300000 /dev/zero >&2; echo tail >&2")
console.log(r.ok, r.code, r.stdout.length, r.stderr.length, r.truncated, r.stdoutBytes, r.stderrBytes)
const small = await sh("printf hi")
console.log(JSON.stringify(small))
`, Config{ShCapture: 64 << 10})
	expectOut(t, r, "true 0 65536 65536 true 1000000 300005\n"+`{"ok":true,"code":0,"stdout":"hi","stderr":""}`+"\n")
}

// BenchmarkShLargeOutput: a command writing 100 MB through sh (capture capped at 64 MiB).
// go test ./builtins -run '^$' -bench ShLargeOutput -benchtime 3x
func BenchmarkShLargeOutput(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var out, errb bytes.Buffer
		err := runtime.Run(context.Background(), runtime.Script{Name: "b.mosh", Source: []byte(
			`const r = await sh("head -c 100000000 /dev/zero"); if (r.stdout.length != 64 * 1024 * 1024 || !r.truncated) throw new Error("cap " + r.stdout.length)`)},
			runtime.Options{Stdout: &out, Stderr: &errb, Env: map[string]string{"PATH": os.Getenv("PATH")},
				Install: func(vu runtime.VU) error { return Install(vu, Config{}) }})
		if err != nil {
			b.Fatalf("%v %s", err, errb.String())
		}
	}
}

// Issue 11: console.log(sh) printed [Function: github.com/…wrap.func1]; every builtin shows its
// own name, in values, in String() and in stack frames.
func TestBuiltinsShowTheirNames(t *testing.T) {
	var calls []string
	for _, info := range List() {
		if info.Kind == "function" {
			calls = append(calls, info.Name)
		}
	}
	r := run(t, `
const names = [`+`"`+strings.Join(calls, `","`)+`"`+`]
const bad = names.filter(n => String(globalThis[n]) !== "function " + n + "() { [native code] }")
console.log(bad.length, JSON.stringify(bad))
console.log(sh, herdWait)
try { herdKill("X") } catch (e) { console.log(e.stack.split("\n")[1].trim()) }
`, Config{DryRun: true})
	expectOut(t, r, "0 []\n[Function: sh] [Function: herdWait]\nat herdKill (native)\n")
}
