package main

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	s := newSandbox(t)
	o := s.run("", "--version")
	if o.code != 0 || o.stderr != "" {
		t.Fatalf("mosh --version: exit %d, stderr %q", o.code, o.stderr)
	}
	line := strings.TrimSpace(o.stdout)
	if !strings.HasPrefix(line, "mosh ") || !strings.Contains(line, " commit ") ||
		!strings.Contains(line, goruntime.Version()) || !strings.HasSuffix(line, goruntime.GOOS+"/"+goruntime.GOARCH) {
		t.Errorf("mosh --version = %q: want version, commit, Go version and platform", line)
	}
	// A commit the build stamped is shown, shortened.
	v := buildVersion{Version: "v1.2.3", Commit: "0123456789abcdef0123", Modified: true, Time: "2026-12-03T08:00:00Z", Go: "go1.99", Platform: "linux/amd64"}
	if got, want := v.String(), "mosh v1.2.3 commit 0123456789ab (modified) 2026-12-03T08:00:00Z go1.99 linux/amd64"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestCompletionScripts(t *testing.T) {
	s := newSandbox(t)
	for shell, marker := range map[string]string{"bash": "# bash completion V2 for mosh", "zsh": "#compdef mosh", "fish": "complete -c mosh"} {
		o := s.run("", "completion", shell)
		if o.code != 0 || !strings.Contains(o.stdout, marker) {
			t.Errorf("mosh completion %s: exit %d, stdout starts %.80q, stderr %q", shell, o.code, o.stdout, o.stderr)
		}
	}
	if o := s.run("", "completion"); o.code != 1 || !strings.Contains(o.stderr, "bash|zsh|fish") {
		t.Errorf("mosh completion (no shell): exit %d, stderr %q", o.code, o.stderr)
	}
	// Verbs, script verbs included, complete.
	s.addVerb("deploy", "// usage: mosh deploy\n// summary: ship it\nconsole.log(1)\n")
	o := s.run("", "__complete", "")
	for _, want := range []string{"herd\t", "ps\t", "deploy\t", "completion\t"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("__complete '': %q missing from\n%s", want, o.stdout)
		}
	}
}

// TestMemberNamesComplete: verbs that take NAME complete the running herd's member names, and
// completing never starts a daemon.
func TestMemberNamesComplete(t *testing.T) {
	e := newHerdEnv(t)
	out, _, _ := e.run("__complete", "herd", "kill", "")
	if strings.Contains(out, "\t") {
		t.Errorf("no daemon: completion offered %q", out)
	}
	if _, err := os.Stat(filepath.Join(e.home, "herd", "herd.sock")); err == nil {
		t.Fatal("completing started the daemon")
	}
	if out, _, _ := e.run("herd", "daemon", "status", "--json"); strings.Contains(out, `"running":true`) {
		t.Fatalf("completing started the daemon: %s", out)
	}
	e.ok("herd", "run", "--name", "api", "--", "/bin/sh")
	e.ok("herd", "run", "--name", "web", "--", "/bin/sh")
	for _, args := range [][]string{{"herd", "kill", ""}, {"attach", ""}, {"wait", "api", ""}, {"herd", "read", "w"}} {
		out, _, _ := e.run(append([]string{"__complete"}, args...)...)
		names := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if n, _, ok := strings.Cut(l, "\t"); ok && !strings.HasPrefix(l, ":") {
				names[n] = true
			}
		}
		switch args[len(args)-2] {
		case "api": // wait api <TAB>: api is given already
			if names["api"] || !names["web"] {
				t.Errorf("mosh %v: got %v", args, names)
			}
		case "read": // prefix w
			if names["api"] || !names["web"] {
				t.Errorf("mosh %v: got %v", args, names)
			}
		default:
			if !names["api"] || !names["web"] {
				t.Errorf("mosh %v: got %v", args, names)
			}
		}
	}
}

// TestMaxOnlyWhereScriptsRun: --max (how many times alive reads true) is offered by the commands
// that run a script (the root, run, script verbs) and by no other verb.
func TestMaxOnlyWhereScriptsRun(t *testing.T) {
	s := newSandbox(t)
	s.addVerb("loop", "// summary: loop\nlet n = 0; while (alive) n++; console.log(n)\n")
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"loop", "--help"}} {
		if o := s.run("", args...); o.code != 0 || !strings.Contains(o.stdout, "--max") {
			t.Errorf("mosh %v: exit %d, --max missing:\n%s", args, o.code, o.stdout)
		}
	}
	for _, args := range [][]string{{"herd", "kill", "--help"}, {"ps", "--help"}, {"herd", "tasks", "--help"}, {"commands", "--help"}} {
		if o := s.run("", args...); o.code != 0 || strings.Contains(o.stdout, "--max") {
			t.Errorf("mosh %v: exit %d, shows --max:\n%s", args, o.code, o.stdout)
		}
	}
	s.run("", "loop", "--max", "5").expect(t, "loop --max 5", 0, "5\n", "hit --max 5 — stopping (pass --max to go longer)\n")
	s.run("", "--max", "4", "loop").expect(t, "--max 4 loop", 0, "4\n", "hit --max 4 — stopping (pass --max to go longer)\n")
	s.run("", "run", "--max", "2", "-").expect(t, "run --max 2 -", 0, "", "")
}
