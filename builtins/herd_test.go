package builtins

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The herd verbs' contracts that need no daemon: misuse throws with the usage, --dry-run
// narrates and returns moshcode's dry-run shapes, reads never throw. The verbs against a real
// daemon are driven end to end by cmd/mosh's herd tests.

func TestHerdVerbsMisuseThrowsWithUsage(t *testing.T) {
	for _, c := range []struct{ call, usage string }{
		{`herdPrompt("api")`, "herdPrompt(name, ...text, {answer})"},
		{`herdPrompt()`, "herdPrompt(name, ...text, {answer})"},
		{`herdPrompt("Bad Name", "hi")`, "herdPrompt("},
		{`herdWait()`, "herdWait(name | [names]"},
		{`herdWait("Bad")`, "herdWait(name | [names]"},
		{`herdWait([])`, "herdWait(name | [names]"},
		{`herdWait("api", {state: ["done"]})`, "unknown option"},
		{`herdWait("api", {states: ["sleeping"]})`, "unknown state"},
		{`herdWait("api", {timeout: -1})`, "herdWait("},
		{`herdRun()`, "herdRun(cmd | [argv]"},
		{`herdRun("   ")`, "herdRun(cmd | [argv]"},
		{`herdRun(["sh"], {name: "X"})`, "invalid member name"},
		{`herdStart()`, "herdStart(engine"},
		{`herdStart("claude", {agents: true})`, "unknown option"},
		{`herdRead()`, "herdRead(name, {lines})"},
		{`herdRead("api", {lines: 0})`, "lines"},
		{`herdList(1)`, "herdList()"},
		{`herdKill()`, "herdKill(name"},
		{`herdSendKeys("api")`, "herdSendKeys(name, ...keys)"},
		{`herdSendKeys("api", 5)`, "herdSendKeys(name, ...keys)"},
	} {
		r := run(t, `try { `+c.call+`; console.log("no throw") } catch (e) { console.log(e.name + ": " + e.message) }`, Config{DryRun: true})
		if r.err != nil {
			t.Fatalf("%s: %v", c.call, r.err)
		}
		if !strings.HasPrefix(r.stdout, "TypeError: ") || !strings.Contains(r.stdout, c.usage) {
			t.Errorf("%s: want a TypeError naming %q, got %q", c.call, c.usage, r.stdout)
		}
	}
}

func TestHerdVerbsDryRunNarratesAndStartsNothing(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": home}
	r := run(t, `
const s = await herdStart("claude", {name: "api", agent: true})
console.log(JSON.stringify(s))
console.log(JSON.stringify(await herdRun("make test", {name: "build"})))
console.log(JSON.stringify(await herdPrompt("api", "port", "the", "routes")))
console.log(await herdWait("api"))
console.log(await herdWait(["api", "web"], {any: true}))
console.log(JSON.stringify(await herdWait(["api", "web"])))
console.log(JSON.stringify(await herdKill("api")))
console.log(JSON.stringify(await herdSendKeys("api", "Escape")))
console.log(JSON.stringify(await herdList()), JSON.stringify(await herdRead("api")))
`, Config{DryRun: true, Env: env})
	expectOut(t, r, `{"ok":true,"dryRun":true,"name":"api","engine":"claude"}
{"ok":true,"dryRun":true,"name":"build"}
{"ok":true,"dryRun":true,"task":null}
idle
api
[{"name":"api","outcome":"matched","state":"idle"},{"name":"web","outcome":"matched","state":"idle"}]
{"ok":true,"dryRun":true,"killed":["api"]}
{"ok":true,"dryRun":true,"bytes":0}
[] ""
`)
	for _, want := range []string{
		`▶ herdStart("claude", {"agent":true,"name":"api"}) → would start claude`,
		`▶ herdRun("make test", {"name":"build"}) → would run make test`,
		`▶ herdPrompt("api", "port", "the", "routes") → would type into api`,
		`▶ herdKill("api") → would kill api`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("narration lacks %q:\n%s", want, r.stderr)
		}
	}
	// A dry run never starts a daemon: the herd directory was not even created.
	if _, err := os.Stat(home + "/.mosh/herd"); !os.IsNotExist(err) {
		t.Fatalf("dry run touched %s/.mosh/herd: %v", home, err)
	}
}

func TestHerdRunCommandArgv(t *testing.T) {
	for in, want := range map[string][]string{
		"claude":             {"claude"},
		"npm  test":          {"npm", "test"},
		"make && make test":  {"/bin/sh", "-c", "make && make test"},
		"echo $HOME":         {"/bin/sh", "-c", "echo $HOME"},
		`grep "a b" file`:    {"/bin/sh", "-c", `grep "a b" file`},
		"FOO=1 ./run.sh":     {"/bin/sh", "-c", "FOO=1 ./run.sh"},
		"tail -f log | less": {"/bin/sh", "-c", "tail -f log | less"},
	} {
		if got := commandArgv(in); !reflect.DeepEqual(got, want) {
			t.Errorf("commandArgv(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHerdWaitOptions(t *testing.T) {
	for _, c := range []struct {
		mode     waitMode
		timeout  time.Duration
		any, all bool
		want     time.Duration
	}{
		{waitOne, 0, false, false, 0}, // 0 = never, as the daemon reads it
		{waitOne, 500 * time.Microsecond, false, false, time.Millisecond},
		{waitAny, 2 * time.Second, true, false, 2 * time.Second},
		{waitAll, time.Minute, false, true, time.Minute},
	} {
		o := waitOptions(c.mode, []string{"done"}, c.timeout)
		if o.Any != c.any || o.All != c.all || o.Timeout != c.want || !reflect.DeepEqual(o.States, []string{"done"}) {
			t.Errorf("waitOptions(%d, %v) = %+v", c.mode, c.timeout, o)
		}
	}
}

// Under --dry-run every side-effecting builtin returns its usual type: a promise when it
// returns one for real (issue 11: herdWait returned a bare string, so .then() threw).
func TestDryRunKeepsEveryVerbsReturnType(t *testing.T) {
	calls := map[string]string{
		"sh":               `sh("true")`,
		"shell":            `shell("true")`,
		"writeText":        `writeText(dir + "/a", "x")`,
		"writeJSON":        `writeJSON(dir + "/b", {})`,
		"mkdir":            `mkdir(dir + "/c")`,
		"removeFile":       `removeFile(dir + "/d")`,
		"herdStart":        `herdStart("claude", {name: "api"})`,
		"herdRun":          `herdRun("make test", {name: "build"})`,
		"herdPrompt":       `herdPrompt("api", "hi")`,
		"herdWait":         `herdWait("api")`,
		"herdAsk":          `herdAsk("api", "hi")`,
		"herdKill":         `herdKill("api")`,
		"herdSendKeys":     `herdSendKeys("api", "Enter")`,
		"herdRemoteAdd":    `herdRemoteAdd("far", "http://127.0.0.1:9/")`,
		"herdRemoteRemove": `herdRemoteRemove("far")`,
		"notify":           `notify("hi")`,
		"ask":              `ask("ok?")`,
		"gradient":         `gradient("--version")`,
		"ai":               `ai("hello")`,
	}
	var src strings.Builder
	src.WriteString("const dir = " + strconv.Quote(t.TempDir()) + "\nconst out = []\n")
	var names []string
	for _, info := range List() {
		if !info.SideEffect {
			continue
		}
		call, ok := calls[info.Name]
		if !ok {
			t.Errorf("side-effecting builtin %s has no dry-run call in this test: add one", info.Name)
			continue
		}
		names = append(names, info.Name)
		fmt.Fprintf(&src, "out.push(%q + ' ' + ((%s) instanceof Promise) + ' ' + %t)\n", info.Name, call, info.Async)
	}
	src.WriteString("console.log(out.join('\\n'))\n")
	r := run(t, src.String(), Config{DryRun: true, Env: map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()}})
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(names) {
		t.Fatalf("want %d lines, got %q", len(names), r.stdout)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if f[1] != f[2] {
			t.Errorf("%s under --dry-run: returns a promise = %s, but it is documented (and returns for real) as promise = %s", f[0], f[1], f[2])
		}
	}
	if r := run(t, `herdWait("api").then(s => console.log("then", s))`, Config{DryRun: true}); r.err != nil || r.stdout != "then idle\n" {
		t.Fatalf("herdWait(...).then under --dry-run: %v %q %s", r.err, r.stdout, r.stderr)
	}
}
