package builtins

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/builtins/tools/toolstest"
)

func gradientEnv(t *testing.T, s *toolstest.Dir) map[string]string {
	t.Helper()
	home := t.TempDir()
	return s.Env(map[string]string{"HOME": home, "MOSH_HOME": filepath.Join(home, "mosh")})
}

func TestGradientResultsAndOptions(t *testing.T) {
	s := toolstest.Write(t)
	s.AddGradient(t)
	env := gradientEnv(t, s)
	dir := t.TempDir()
	r := run(t, `
const a = await gradient("exit", 3)
console.log(JSON.stringify(a))
const b = await gradient("env", {cwd: argv[0], env: {GRADIENT_X: "42"}})
console.log(JSON.stringify(b))
const c = await gradient("echo-stdin", 7, {input: "piped"})
console.log(JSON.stringify(c))
`, Config{Env: env, Args: []string{dir}})
	expectOut(t, r, `{"ok":false,"code":3,"stdout":"gradient exit 3\n","stderr":"to stderr\n"}`+"\n"+
		`{"ok":true,"code":0,"stdout":"GRADIENT_X=42\n`+dir+`\n","stderr":""}`+"\n"+
		`{"ok":true,"code":0,"stdout":"gradient echo-stdin 7\npiped","stderr":""}`+"\n")
	if got := strings.Join(s.Steps(t), "|"); got != "gradient exit 3|gradient env|gradient echo-stdin 7" {
		t.Fatalf("ran: %s", got)
	}
}

// The link `mosh install gradient` makes is what gradient() runs, before a gradient on PATH.
func TestGradientRunsTheInstalledLink(t *testing.T) {
	s := toolstest.Write(t)
	s.AddGradient(t)
	env := gradientEnv(t, s)
	link := filepath.Join(env["MOSH_HOME"], "bin", "gradient")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "gradient")
	if err := os.WriteFile(target, []byte("#!/bin/sh\necho linked \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	expectOut(t, run(t, `console.log((await gradient("agent", "run")).stdout)`, Config{Env: env}), "linked agent run\n\n")
}

func TestGradientNotInstalledRejectsWithTheFix(t *testing.T) {
	s := toolstest.Write(t)
	r := run(t, `
try { await gradient("agent", "deploy") } catch (e) { console.log(e.message) }
`, Config{Env: gradientEnv(t, s)})
	expectOut(t, r, "gradient: gradient is not installed: run `mosh install gradient` (it pip-installs gradient-adk into a virtual environment under $MOSH_HOME)\n")
}

func TestGradientDryRunNarrates(t *testing.T) {
	s := toolstest.Write(t)
	s.AddGradient(t)
	r := run(t, `console.log(JSON.stringify(await gradient("agent", "deploy")))`, Config{Env: gradientEnv(t, s), DryRun: true})
	expectOut(t, r, `{"ok":true,"code":0,"stdout":"","stderr":"","dryRun":true}`+"\n")
	if want := `  ▶ gradient("agent", "deploy") → would run: ` + filepath.Join(s.Bin, "gradient") + " agent deploy\n"; r.stderr != want {
		t.Fatalf("narration %q, want %q", r.stderr, want)
	}
	if steps := s.Steps(t); len(steps) != 0 {
		t.Fatalf("a dry run ran %v", steps)
	}
}

// gradient() runs off the event loop: the script goes on (and unblocks the command) while it runs.
func TestGradientDoesNotBlockTheLoop(t *testing.T) {
	s := toolstest.Write(t)
	s.AddGradient(t)
	flag := filepath.Join(t.TempDir(), "go")
	r := runCtx(t, context.Background(), `
const p = gradient("block", argv[0])
let ticks = 0
await new Promise(resolve => setTimeout(() => { ticks++; resolve() }, 10))
writeText(argv[0], "go")
const res = await p
console.log(ticks, res.stdout.trim())
`, Config{Env: gradientEnv(t, s), Args: []string{flag}}, 60*time.Second)
	expectOut(t, r, "1 unblocked\n")
}

func TestGradientMisuse(t *testing.T) {
	for src, want := range map[string]string{
		`gradient("agent", {bogus: 1})`: `unknown option "bogus"`,
		`gradient("agent", [1])`:        "argument 2 must be a string",
		`gradient({cwd: ""})`:           "cwd must be a directory path",
	} {
		r := run(t, src, Config{})
		if r.err == nil || !strings.Contains(r.err.Error(), "TypeError: gradient(...args, {cwd, env, timeout, input}): ") || !strings.Contains(r.err.Error(), want) {
			t.Errorf("%s: %v", src, r.err)
		}
	}
}
