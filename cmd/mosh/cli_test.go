package main

// End-to-end tests of the CLI: the real mosh binary, built once in TestMain, run the way a user
// runs it, with exact stdout, stderr and exit codes.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/builtins"
	"github.com/mosh-dev/mosh/exitcode"
)

// moshBin is the binary TestMain built; repoRoot the repository (examples run from there).
var moshBin, repoRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "moshbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	moshBin = filepath.Join(dir, "mosh")
	if out, err := exec.Command("go", "build", "-o", moshBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build mosh: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	repoRoot, _ = filepath.Abs("../..")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sandbox is one hermetic environment: its own HOME and MOSH_HOME.
type sandbox struct {
	t    *testing.T
	home string
	env  []string
	dir  string // working directory of the runs (default the repository root)
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	home := t.TempDir()
	s := &sandbox{t: t, home: home, dir: repoRoot}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "MOSH_HOME", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR":
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env, "HOME="+home, "MOSH_HOME="+filepath.Join(home, "mosh"))
	return s
}

func (s *sandbox) moshHome() string { return filepath.Join(s.home, "mosh") }

// addVerb writes a user script verb.
func (s *sandbox) addVerb(name, src string) {
	s.t.Helper()
	dir := filepath.Join(s.moshHome(), "scripts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".mosh"), []byte(src), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

type outcome struct {
	stdout, stderr string
	code           int
}

func (s *sandbox) run(stdin string, args ...string) outcome {
	s.t.Helper()
	return s.runCmd(exec.Command(moshBin, args...), stdin)
}

func (s *sandbox) runCmd(cmd *exec.Cmd, stdin string) outcome {
	s.t.Helper()
	if cmd.Env == nil {
		cmd.Env = s.env
	}
	cmd.Dir = s.dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := outcome{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
	default:
		s.t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return o
}

func (o outcome) expect(t *testing.T, what string, code int, stdout, stderr string) {
	t.Helper()
	if o.code != code || o.stdout != stdout || o.stderr != stderr {
		t.Errorf("%s:\n exit %d, want %d\n stdout %q\n   want %q\n stderr %q\n   want %q", what, o.code, code, o.stdout, stdout, o.stderr, stderr)
	}
}

func TestExamples(t *testing.T) {
	cases := []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{args: []string{"scripts/examples/hello.mosh"},
			stdout: "hello, world\n  💬 scripts are JavaScript, with a few shell-friendly globals\n"},
		{args: []string{"scripts/examples/hello.mosh", "Ada", "--not-a-flag"},
			stdout: "hello, Ada\nhello, --not-a-flag\n  💬 scripts are JavaScript, with a few shell-friendly globals\n"},
		{args: []string{"scripts/examples/timers.mosh"}, stdout: "" +
			"1. a microtask runs as soon as the script yields\n" +
			"2. await sleep(20) resumed\n" +
			"3. setTimeout(…, 50) fired\n" +
			"4. awaited a 100 ms timer\n" +
			"5. setInterval ran 3 times, then clearInterval; nothing is pending, so the script ends\n"},
		{args: []string{"scripts/examples/imports.mosh"},
			stdout: "hello from imports\nDEFAULT EXPORTS WORK TOO!\nsum 10, mean 2.5\n"},
		{args: []string{"scripts/examples/sh-fail.mosh"}, stdout: "" +
			"ok=false code=3\n" +
			"stdout: partial output\n" +
			"stderr: something broke\n" +
			"via /bin/sh: ok=false code=127\n" +
			"argv form: sh: cannot start \"no-such-program-for-mosh-example\": not found (is it installed and on PATH?)\n" +
			"timeout: ok=false code=124 timedOut=true\n"},
		{args: []string{"scripts/examples/files.mosh"}, stdout: "" +
			"core: 3 members\n" +
			"names: api, web, docs\n" +
			"busiest: api\n" +
			"missing file reads as null\n" +
			"api\t12\nweb\t7\ndocs\t3\n"},
		{args: []string{"--dry-run", "scripts/examples/dry-run.mosh"}, stdout: "" +
			"sh: ok=true code=0 dryRun=true\n" +
			"writeText: ok=true dryRun=true bytes=5\n" +
			"the file exists: false\n" +
			"rounds: 3\n",
			stderr: "" +
				"  ▶ sh(\"true\") → would run\n" +
				"  ▶ sh(\"rm -rf /tmp/mosh-example-never-deleted\") → would run\n" +
				"  ▶ writeText(\"/tmp/mosh-example-never-written.txt\", \"hello\") → would write 5 bytes\n" +
				"hit --max 3 — stopping (pass --max N to go longer, --max 0 for no cap)\n"},
		{args: []string{"scripts/examples/dry-run.mosh"}, code: 1,
			stderr: "this example deletes and writes files unless you pass --dry-run:\n  mosh --dry-run scripts/examples/dry-run.mosh\n"},
		// The fan-out needs a herd: conformance/remote runs it against local and remote members;
		// here, its usage error (no daemon is started for it).
		{args: []string{"scripts/examples/fanout-mixed.mosh"}, code: 1, stderr: "" +
			"missing the prompt and the member names\n" +
			"usage: mosh scripts/examples/fanout-mixed.mosh PROMPT NAME…\n" +
			"  sends PROMPT to each named herd member (local or remote) and prints name, state and answer\n"},
		// A verb script run as a file gets its header's flag defaults; its arguments stay in argv.
		{args: []string{"scripts/examples/greet.mosh", "--loud"}, stdout: "hello, world and --loud\n"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.args[len(c.args)-1]] = true
		for _, a := range c.args {
			covered[a] = true
		}
		s := newSandbox(t)
		s.run("", c.args...).expect(t, strings.Join(c.args, " "), c.code, c.stdout, c.stderr)
	}
	// Every example has a case here: a new example cannot go untested.
	files, _ := filepath.Glob(filepath.Join(repoRoot, "scripts/examples/*.mosh"))
	for _, f := range files {
		rel, _ := filepath.Rel(repoRoot, f)
		if !covered[rel] {
			t.Errorf("example %s has no case in TestExamples", rel)
		}
	}
}

func TestExampleVerbWithFlags(t *testing.T) {
	s := newSandbox(t)
	src, err := os.ReadFile(filepath.Join(repoRoot, "scripts/examples/greet.mosh"))
	if err != nil {
		t.Fatal(err)
	}
	s.addVerb("greet", string(src))
	s.run("", "greet", "--name", "X", "--loud").expect(t, "greet --name X --loud", 0, "HELLO, X!\n", "")
	s.run("", "greet", "Bob", "--times", "2", "--pause", "0.01", "--name=Ada").
		expect(t, "greet with positionals, int and duration flags", 0, "hello, Ada and Bob\nhello, Ada and Bob\n", "")
	s.run("", "greet", "--", "--loud").expect(t, "greet -- --loud", 0, "hello, world and --loud\n", "")
	s.run("", "greet", "--bogus").expect(t, "unknown verb flag", 1, "", "mosh: unknown flag: --bogus (see 'mosh greet --help')\n")
	s.run("", "greet", "--times", "many").expect(t, "bad int", 1, "",
		"mosh: invalid value \"many\" for --times: want a whole number (see 'mosh greet --help')\n")
	o := s.run("", "help", "greet")
	if o.code != 0 || !strings.Contains(o.stdout, "greet someone, optionally loudly") ||
		!strings.Contains(o.stdout, "mosh greet [--name NAME] [--loud] [--times N] [--pause DUR] [OTHERS...]") ||
		!strings.Contains(o.stdout, "--name string") || !strings.Contains(o.stdout, `who to greet (default "world")`) {
		t.Errorf("help greet: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}

func TestHelpNeverRunsTheScript(t *testing.T) {
	s := newSandbox(t)
	marker := filepath.Join(s.home, "ran")
	s.addVerb("marker", "// summary: leaves a marker when it runs\n// @flag x bool false a flag\nwriteText("+fmt.Sprintf("%q", marker)+", \"ran\")\n")
	for _, args := range [][]string{{"help", "marker"}, {"marker", "--help"}, {"marker", "-h"}, {"commands"}, {"commands", "--json"}} {
		o := s.run("", args...)
		if o.code != 0 || !strings.Contains(o.stdout, "leaves a marker when it runs") {
			t.Errorf("%v: exit %d\n%s%s", args, o.code, o.stdout, o.stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%v executed the script", args)
		}
	}
	s.run("", "marker").expect(t, "marker", 0, "", "")
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("running the verb did not run the script")
	}
}

func TestUserVerbsUnderHerdAndBrokenHeaders(t *testing.T) {
	s := newSandbox(t)
	s.addVerb("fan", "// parent: herd\n// summary: a herd verb\nconsole.log('fan', argv.join(' '))\n")
	s.addVerb("broken", "// summary: fine so far\n// @flag loud boolean false oops\nconsole.log('never')\n")
	s.addVerb("ok", "// summary: still works\nconsole.log('ok')\n")
	s.addVerb("run", "// summary: cannot take the name of a Go command\nconsole.log('never')\n")
	s.run("", "herd", "fan", "a", "b").expect(t, "herd fan", 0, "fan a b\n", "")
	s.run("", "fan").expect(t, "fan at the top level", 1, "", "mosh: fan is a herd verb: run 'mosh herd fan'\n")
	brokenFile := filepath.Join(s.moshHome(), "scripts", "broken.mosh")
	s.run("", "broken").expect(t, "broken", 1, "",
		"mosh: "+brokenFile+":2: flag \"loud\" has unknown type \"boolean\" (use bool, string, int, duration or list) (fix the header: see 'mosh help script-headers')\n")
	s.run("", "ok").expect(t, "ok next to a broken verb", 0, "ok\n", "")
	s.run("", "run").expect(t, "a Go command wins", 1, "", "mosh: run needs a script: mosh run FILE.mosh [args...] (or - for stdin)\n")
	o := s.run("", "commands")
	if o.code != 0 || !strings.Contains(o.stdout, "mosh ok") || !strings.Contains(o.stdout, "mosh herd fan") ||
		!strings.Contains(o.stderr, "mosh: skipped a script verb: "+brokenFile+":2: flag \"loud\" has unknown type") ||
		!strings.Contains(o.stderr, "run.mosh: \"mosh run\" is a built-in command, which wins over the script: rename the file\n") {
		t.Errorf("commands: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
}

// A verb that declares --dry-run itself takes the flag over: the script decides what a dry run
// means, and builtins act normally.
func TestVerbFlagShadowsGlobalFlag(t *testing.T) {
	s := newSandbox(t)
	s.addVerb("tidy", "// summary: tidy up\n// @flag dry-run bool false print a diff and change nothing\n"+
		"const r = await sh('echo ran')\nconsole.log(flags.dryRun, flags['dry-run'], r.stdout.trim())\n")
	s.run("", "tidy", "--dry-run").expect(t, "tidy --dry-run", 0, "true true ran\n", "")
	s.run("", "tidy").expect(t, "tidy", 0, "false false ran\n", "")
}

func TestUserVerbShadowsBundled(t *testing.T) {
	s := newSandbox(t)
	s.addVerb("new", "// summary: mine\nconsole.log('user new')\n")
	s.run("", "new").expect(t, "user new", 0, "user new\n", "")
}

func TestBundledNewVerb(t *testing.T) {
	s := newSandbox(t)
	file := filepath.Join(s.moshHome(), "scripts", "hi.mosh")
	s.run("", "--dry-run", "new", "hi").expect(t, "new --dry-run", 0,
		file+"\nrun it: mosh hi --loud hi    help: mosh hi --help\n",
		"  ▶ mkdir(\""+filepath.Dir(file)+"\") → would create it\n"+
			"  ▶ writeText(\""+file+"\", \"// summary: what hi does, in one line\\n// usage: hi [--lou…) → would write 272 bytes\n")
	if _, err := os.Stat(file); err == nil {
		t.Fatal("--dry-run wrote the file")
	}
	s.run("", "new", "hi", "--summary", "say hi").expect(t, "new hi", 0, file+"\nrun it: mosh hi --loud hi    help: mosh hi --help\n", "")
	s.run("", "hi", "--loud", "there").expect(t, "the new verb", 0, "  💬 THERE\n", "")
	s.run("", "new", "hi").expect(t, "new over an existing verb", 1, "", "mosh new: "+file+" already exists (pass --force to overwrite it)\n")
	s.run("", "new", "Hi").expect(t, "bad name", 1, "", "mosh new: \"Hi\" is not a verb name: use lowercase letters, digits and dashes, starting with a letter\n")
}

func TestBadInvocations(t *testing.T) {
	s := newSandbox(t)
	s.run("", "--bogus").expect(t, "unknown global flag", 1, "", "mosh: unknown flag: --bogus (see 'mosh --help')\n")
	s.run("", "nope.mosh").expect(t, "missing file", 1, "", "mosh: nope.mosh: no such file\n")
	s.run("", "nope").expect(t, "missing file or verb", 1, "",
		"mosh: nope: no such command or file (run 'mosh commands' to list verbs, or give the path of a .mosh file)\n")
	s.run("", "run").expect(t, "run without a file", 1, "", "mosh: run needs a script: mosh run FILE.mosh [args...] (or - for stdin)\n")
	s.run("", "scripts").expect(t, "a directory", 1, "", "mosh: scripts is a directory, not a script\n")
	s.run("", "--timeout", "soon", "-e", "0").expect(t, "bad duration", 1, "",
		"mosh: invalid value \"soon\" for --timeout: want a duration (500ms, 2s, 10m, 1h; a bare number is seconds) (see 'mosh --help')\n")
	s.run("", "--max", "-1", "-e", "0").expect(t, "--max -1", 1, "", "mosh: --max must be 0 (no cap) or a positive count of how many times alive reads true, not -1\n")
	s.run("", "help", "nothing-like-this").expect(t, "help unknown", 1, "",
		"mosh: no help for \"nothing-like-this\": it is not a verb, a script function or a topic (run 'mosh commands')\n")
}

func TestScriptErrorsAndExitCodes(t *testing.T) {
	s := newSandbox(t)
	s.dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(s.dir, "bad.mosh"), []byte("const a = 1\nlet y = ;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := s.run("", "bad.mosh")
	want := "mosh: bad.mosh:2:9: SyntaxError: Unexpected token ;\nlet y = ;\n        ^\n"
	if o.code == 0 || o.stderr != want || o.stdout != "" {
		t.Errorf("syntax error: exit %d\nstderr %q\n  want %q", o.code, o.stderr, want)
	}
	s.run("", "-e", "exit(7)").expect(t, "exit(7)", 7, "", "")
	s.run("", "-e", "console.log('before'); exit(0); console.log('after')").expect(t, "exit(0)", 0, "before\n", "")
	o = s.run("", "-e", "throw new Error('boom')")
	if o.code != int(exitcode.Script) || !strings.HasPrefix(o.stderr, "mosh: Uncaught Error: boom\n") || !strings.Contains(o.stderr, "<eval>:1:") {
		t.Errorf("uncaught: exit %d stderr %q", o.code, o.stderr)
	}
	o = s.run("", "--timeout", "200ms", "-e", "await sleep(60000)")
	o.expect(t, "--timeout", int(exitcode.Timeout), "", "mosh: script timed out after 200ms\n")
	o = s.run("", "--timeout", "0.2", "-e", "await sh('sleep 60')")
	o.expect(t, "--timeout with a child process", int(exitcode.Timeout), "", "mosh: script timed out after 200ms\n")
}

func TestEvalStdinAndArgs(t *testing.T) {
	s := newSandbox(t)
	s.run("", "-e", "console.log(argv.join(','))", "a", "--b", "run").expect(t, "-e with args", 0, "a,--b,run\n", "")
	s.run("", "--eval=console.log(1+1)").expect(t, "--eval=", 0, "2\n", "")
	s.run("console.log('from stdin', argv.join(','))", "-", "x", "y").expect(t, "-", 0, "from stdin x,y\n", "")
	s.run("console.log('piped')").expect(t, "no args, stdin not a terminal", 0, "piped\n", "")
	s.run("", "run", "scripts/examples/hello.mosh", "Z").
		expect(t, "run FILE", 0, "hello, Z\n  💬 scripts are JavaScript, with a few shell-friendly globals\n", "")
	s.run("", "--max", "5", "-e", "let n = 0; while (alive) n++; console.log(n)").
		expect(t, "--max 5", 0, "5\n", "hit --max 5 — stopping (pass --max N to go longer, --max 0 for no cap)\n")
	s.run("", "--max", "0", "-e", "let n = 0; while (alive) { n++; if (n == 2000) break } console.log(n)").
		expect(t, "--max 0: no cap", 0, "2000\n", "")
	s.run("", "-e", "console.log(env.MOSH_HOME === "+fmt.Sprintf("%q", s.moshHome())+")").expect(t, "MOSH_HOME in env", 0, "true\n", "")
}

func TestShebangScript(t *testing.T) {
	s := newSandbox(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "tool")
	src := "\uFEFF#!/usr/bin/env mosh\nconsole.log('shebang', argv.join(' '))\n"
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "one", "--two")
	// BOM before #! is not something the kernel accepts; the BOM case is tested through mosh.
	if err := os.WriteFile(script, []byte(strings.TrimPrefix(src, "\uFEFF")), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + filepath.Dir(moshBin) + ":" + os.Getenv("PATH")}
	for _, kv := range s.env {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	s.runCmd(cmd, "").expect(t, "shebang", 0, "shebang one --two\n", "")
	bom := filepath.Join(dir, "bom.mosh")
	if err := os.WriteFile(bom, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s.run("", bom, "x").expect(t, "BOM and shebang through mosh", 0, "shebang x\n", "")
}

func TestCommandsJSON(t *testing.T) {
	s := newSandbox(t)
	src, _ := os.ReadFile(filepath.Join(repoRoot, "scripts/examples/greet.mosh"))
	s.addVerb("greet", string(src))
	s.addVerb("Bad", "// summary: x\n")
	o := s.run("", "commands", "--json")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	var l commandsListing
	if err := json.Unmarshal([]byte(o.stdout), &l); err != nil {
		t.Fatalf("%v\n%s", err, o.stdout)
	}
	byPath := map[string]verbInfo{}
	for _, v := range l.Verbs {
		byPath[v.Path] = v
	}
	greet, ok := byPath["mosh greet"]
	if !ok || greet.Origin != "user" || greet.Summary != "greet someone, optionally loudly" || len(greet.Flags) != 4 {
		t.Errorf("greet = %+v", greet)
	}
	var flagNames []string
	for _, f := range greet.Flags {
		flagNames = append(flagNames, f.Name+":"+f.Type+"="+f.Default)
	}
	sort.Strings(flagNames)
	if got := strings.Join(flagNames, " "); got != "loud:bool=false name:string=world pause:DUR= times:int64=1" {
		t.Errorf("greet flags = %s", got)
	}
	if v, ok := byPath["mosh new"]; !ok || v.Origin != "bundled" || v.File != "scripts/new.mosh" {
		t.Errorf("new = %+v", v)
	}
	if v, ok := byPath["mosh run"]; !ok || v.Origin != "go" {
		t.Errorf("run = %+v", v)
	}
	fns := map[string]bool{}
	for _, f := range l.Functions {
		fns[f.Name+" "+f.Usage] = true
	}
	for _, want := range []string{"sh sh(cmd, {cwd, env, timeout, input})", "sleep sleep(ms | \"2s\")", "query query(jsonTextOrValue, \"a.b.#.c\")"} {
		if !fns[want] {
			t.Errorf("functions lack %q", want)
		}
	}
	if len(l.Errors) != 1 || !strings.Contains(l.Errors[0].Message, `"Bad" is not a verb name`) {
		t.Errorf("errors = %+v", l.Errors)
	}
}

func TestHelpTopicsAndFunctions(t *testing.T) {
	s := newSandbox(t)
	o := s.run("", "help", "exit-codes")
	for _, e := range exitcode.Table {
		if !strings.Contains(o.stdout, fmt.Sprintf("  %-4d %-12s %s\n", e.Code, e.Name, e.Meaning)) {
			t.Errorf("help exit-codes lacks %d %s:\n%s", e.Code, e.Name, o.stdout)
		}
	}
	o = s.run("", "help", "sh")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "sh(cmd, {cwd, env, timeout, input})\n\nrun a command") || !strings.Contains(o.stdout, "narrated and skipped under --dry-run") {
		t.Errorf("help sh: %d\n%s", o.code, o.stdout)
	}
	o = s.run("", "help", "alive")
	if o.code != 0 || !strings.Contains(o.stdout, "--max") {
		t.Errorf("help alive: %d\n%s", o.code, o.stdout)
	}
	o = s.run("", "help", "script-headers")
	if o.code != 0 || !strings.Contains(o.stdout, "@flag NAME TYPE DEFAULT DESCRIPTION") {
		t.Errorf("help script-headers: %d\n%s", o.code, o.stdout)
	}
}

// TestCtrlCEndsTheRun sends a real SIGINT to a running script whose sh() child would sleep a
// minute: the run ends with 130 and the child is gone.
func TestCtrlCEndsTheRun(t *testing.T) {
	s := newSandbox(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(moshBin, "-e", `const p = sh("echo $$ > `+pidFile+`; exec sleep 60"); console.log("ready"); await p`)
	cmd.Env = s.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("first line %q", line)
	}
	var pid int
	for i := 0; i < 200 && pid == 0; i++ { // the child writes its pid once it runs
		b, _ := os.ReadFile(pidFile)
		fmt.Sscan(string(b), &pid)
		if pid == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != int(exitcode.Interrupted) {
		t.Fatalf("exit: %v, stderr %q", err, errb.String())
	}
	if errb.String() != "mosh: interrupted\n" {
		t.Errorf("stderr %q", errb.String())
	}
	if pid > 0 && syscall.Kill(pid, 0) == nil {
		t.Errorf("the sh child %d outlived Ctrl-C", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestREPLOnATerminal: bare `mosh` on a terminal is the REPL; it evaluates, keeps history in
// $MOSH_HOME/repl_history (0600) and ends on Ctrl-D.
func TestREPLOnATerminal(t *testing.T) {
	s := newSandbox(t)
	cmd := exec.Command(moshBin)
	cmd.Env = append(s.env, "TERM=dumb")
	cmd.Dir = s.dir
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out syncBuffer
	go func() { _, _ = io.Copy(&out, f) }()
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(out.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("REPL never printed %q; got:\n%s", what, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(200 * time.Millisecond)
	fmt.Fprint(f, "6 * 7\r")
	waitFor("42")
	fmt.Fprint(f, "await sleep(1).then(() => argv.length + 100)\r")
	waitFor("100")
	fmt.Fprint(f, "\x04")
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("REPL exit: %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("REPL did not end on Ctrl-D:\n%s", out.String())
	}
	fi, err := os.Stat(filepath.Join(s.moshHome(), "repl_history"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(filepath.Join(s.moshHome(), "repl_history"))
	if !strings.Contains(string(b), "6 * 7") {
		t.Errorf("history lacks the input: %q", b)
	}
}

// `mosh commands` and `mosh help` say the herd vocabulary's one rule: every herd* function
// returns a promise and never blocks the event loop.
func TestCommandsAndHelpSayTheHerdRule(t *testing.T) {
	s := newSandbox(t)
	o := s.run("", "commands")
	if o.code != 0 || !strings.Contains(o.stdout, "Rule: "+builtins.HerdRule+"\n") {
		t.Errorf("commands does not say the herd rule: exit %d\n%s", o.code, o.stdout)
	}
	o = s.run("", "commands", "--json")
	var l commandsListing
	if err := json.Unmarshal([]byte(o.stdout), &l); err != nil || l.Rules["herd"] != builtins.HerdRule {
		t.Errorf("commands --json rules = %v (%v)", l.Rules, err)
	}
	for _, name := range []string{"herdList", "herdPrompt", "herdRead", "herdHookPlans", "herdWait"} {
		o = s.run("", "help", name)
		if o.code != 0 || !strings.Contains(o.stdout, builtins.HerdRule) {
			t.Errorf("help %s does not say the herd rule:\n%s", name, o.stdout)
		}
	}
}

// `mosh types` prints the registry's TypeScript declarations (mosh types > mosh.d.ts), and
// --json wraps them; `mosh commands` lists the verb.
func TestTypesVerb(t *testing.T) {
	s := newSandbox(t)
	o := s.run("", "types")
	if o.code != 0 || o.stdout != builtins.Declarations() || !strings.Contains(o.stdout, "declare function herdList(): Promise<Member[]>;") {
		t.Fatalf("types: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	o = s.run("", "types", "--json")
	var j struct{ File, Text string }
	if err := json.Unmarshal([]byte(o.stdout), &j); err != nil || j.File != "mosh.d.ts" || j.Text != builtins.Declarations() {
		t.Fatalf("types --json: %v %q", err, o.stdout[:min(len(o.stdout), 200)])
	}
	if o = s.run("", "commands"); !strings.Contains(o.stdout, "mosh types") {
		t.Errorf("commands does not list types:\n%s", o.stdout)
	}
}

// Every verb that prints a result takes --json (and so --jq); the exceptions print no result a
// program could read, each for a reason named here.
func TestEveryVerbThatPrintsTakesJSON(t *testing.T) {
	noResult := map[string]string{
		"mosh attach":      "an interactive terminal",
		"mosh herd attach": "an interactive terminal",
		"mosh completion":  "prints a shell script",
		"mosh gradient":    "passes the tool's own output through",
		"mosh run":         "a script's output is the script's",
		"mosh herd daemon": "--foreground runs the daemon; status and stop take --json",
		"mosh herd remote": "prints its subcommands' help",
		"mosh herd notify": "prints its subcommands' help",
	}
	s := newSandbox(t)
	o := s.run("", "commands", "--json")
	var l commandsListing
	if err := json.Unmarshal([]byte(o.stdout), &l); err != nil {
		t.Fatalf("%v\n%s", err, o.stdout)
	}
	for _, v := range l.Verbs {
		has := false
		for _, f := range v.Flags {
			has = has || f.Name == "json"
		}
		if why := noResult[v.Path]; why != "" {
			if has {
				t.Errorf("%s takes --json now: drop it from the exceptions (%s)", v.Path, why)
			}
			continue
		}
		if !has {
			t.Errorf("%s (%s) prints a result but takes no --json", v.Path, v.Origin)
		}
	}
	// The ones added here: mosh new --json and herd serve --json --dry-run.
	file := filepath.Join(s.moshHome(), "scripts", "hi.mosh")
	s.run("", "new", "hi", "--json").expect(t, "new --json", 0, `{"file":"`+file+`","verb":"mosh hi"}`+"\n", "")
	o = s.run("", "--dry-run", "herd", "serve", "--port", "0", "--json")
	var dry struct {
		DryRun bool   `json:"dryRun"`
		Verb   string `json:"verb"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &dry); err != nil || !dry.DryRun || dry.Verb != "herd serve" {
		t.Errorf("serve --dry-run --json: %v %q %q", err, o.stdout, o.stderr)
	}
}
