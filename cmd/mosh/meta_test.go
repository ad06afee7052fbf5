package main

import (
	"encoding/json"
	"os"
	"os/exec"
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
	if _, err := os.Stat(filepath.Join(e.home, "herd", "mosh.sock")); err == nil {
		t.Fatal("completing started the daemon")
	}
	if out, _, _ := e.run("herd", "daemon", "status", "--json"); !strings.Contains(out, `"running": false`) {
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
	s.run("", "loop", "--max", "5").expect(t, "loop --max 5", 0, "5\n", "hit --max 5 — stopping (pass --max N to go longer, --max 0 for no cap)\n")
	s.run("", "--max", "4", "loop").expect(t, "--max 4 loop", 0, "4\n", "hit --max 4 — stopping (pass --max N to go longer, --max 0 for no cap)\n")
	s.run("", "run", "--max", "2", "-").expect(t, "run --max 2 -", 0, "", "")
}

// TestJSONOnErrors: a verb run with --json prints JSON on stdout even when it fails: kill its
// own result shape, the others {"error": {message, exitCode}}; the message is on stderr too.
func TestJSONOnErrors(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "api", "--", "/bin/sh")
	out, errs, code := e.run("kill", "ghost", "--json")
	var kr struct {
		Killed  []string `json:"killed"`
		Missing []string `json:"missing"`
	}
	if code != 3 || json.Unmarshal([]byte(out), &kr) != nil || len(kr.Killed) != 0 || len(kr.Missing) != 1 || kr.Missing[0] != "ghost" {
		t.Errorf("kill ghost --json: exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errs, "no member named ghost") {
		t.Errorf("kill ghost --json: stderr %q", errs)
	}
	for _, args := range [][]string{{"herd", "read", "ghost", "--json"}, {"herd", "explain", "ghost", "--json"}, {"herd", "task", "t-999", "--json"}} {
		out, errs, code := e.run(args...)
		var er struct {
			Error struct {
				Message  string `json:"message"`
				ExitCode int    `json:"exitCode"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(out), &er); err != nil || er.Error.ExitCode != code || code == 0 || er.Error.Message == "" || !strings.Contains(errs, er.Error.Message) {
			t.Errorf("mosh %v: exit %d, stdout %q (%v), stderr %q", args, code, out, err, errs)
		}
	}
	// Without --json, stdout stays empty on failure.
	if out, _, code := e.run("herd", "read", "ghost"); code != 3 || out != "" {
		t.Errorf("herd read ghost: exit %d, stdout %q", code, out)
	}
}

// TestJQ: every --json verb takes --jq EXPR (a gjson path), which implies --json and filters the
// output through one helper: strings raw, other values compact JSON; failures are filtered too.
func TestJQ(t *testing.T) {
	e := newHerdEnv(t)
	if got := strings.TrimSpace(e.ok("herd", "run", "--name", "api", "--jq", "name", "--", "/bin/sh")); got != "api" {
		t.Errorf("herd run --jq name = %q", got)
	}
	e.ok("herd", "run", "--name", "web", "--", "/bin/sh")
	if got := e.ok("ps", "--jq", "#.name"); got != "[\"api\",\"web\"]\n" {
		t.Errorf("ps --jq #.name = %q", got)
	}
	if got := e.ok("ps", "--jq", `#(name=="web").name`); got != "web\n" {
		t.Errorf("ps --jq query = %q", got)
	}
	if out, _, code := e.run("kill", "ghost", "--jq", "missing"); code != 3 || out != "[\"ghost\"]\n" {
		t.Errorf("kill ghost --jq missing: exit %d, %q", code, out)
	}
	if out, _, code := e.run("herd", "read", "ghost", "--jq", "error.exitCode"); code != 3 || out != "3\n" {
		t.Errorf("read ghost --jq error.exitCode: exit %d, %q", code, out)
	}
	if out, errs, code := e.run("ps", "--jq", ""); code != 1 || out != "" || !strings.Contains(errs, "gjson path") {
		t.Errorf("ps --jq '': exit %d, %q, %q", code, out, errs)
	}
	// Only verbs with --json take it.
	if _, errs, code := e.run("attach", "api", "--jq", "x"); code != 1 || !strings.Contains(errs, "unknown flag: --jq") {
		t.Errorf("attach --jq: exit %d, %q", code, errs)
	}
}

// TestJSONOnFlagErrors: a flag error prints the JSON error too, wherever --json stands on the
// line (before or after the bad flag); --json=false and no --json keep stdout empty.
func TestJSONOnFlagErrors(t *testing.T) {
	s := newSandbox(t)
	for _, args := range [][]string{
		{"herd", "ps", "--bogus", "--json"},
		{"herd", "ps", "--json", "--bogus"},
		{"herd", "wait", "api", "--timeout", "soon", "--json"},
		{"herd", "tasks", "--json=true", "--limit", "x"},
	} {
		o := s.run("", args...)
		var er struct {
			Error struct {
				Message  string `json:"message"`
				ExitCode int    `json:"exitCode"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(o.stdout), &er); err != nil || o.code != 1 || er.Error.ExitCode != 1 || er.Error.Message == "" || !strings.Contains(o.stderr, er.Error.Message) {
			t.Errorf("mosh %v: exit %d, stdout %q (%v), stderr %q", args, o.code, o.stdout, err, o.stderr)
		}
	}
	for _, args := range [][]string{{"herd", "ps", "--bogus"}, {"herd", "ps", "--bogus", "--json=false"}} {
		if o := s.run("", args...); o.code != 1 || o.stdout != "" {
			t.Errorf("mosh %v: exit %d, stdout %q", args, o.code, o.stdout)
		}
	}
}

// TestJQInvalidPath: a --jq path gjson cannot parse is refused before the verb runs (exit 1,
// naming the problem), never a silent empty output and exit 0.
func TestJQInvalidPath(t *testing.T) {
	s := newSandbox(t)
	for path, problem := range map[string]string{
		`#(name=="web"`: "unclosed (",
		`#(name=="web)`: "unterminated string",
		`a.b)`:          "unbalanced )",
		`{name,engine`:  "unclosed {",
		`[name`:         "unclosed [",
		`name.@nosuch`:  "unknown modifier @nosuch",
		`name\`:         "ends in a backslash",
	} {
		o := s.run("", "herd", "ps", "--jq", path)
		if o.code != 1 || o.stdout != "" || !strings.Contains(o.stderr, "--jq") || !strings.Contains(o.stderr, problem) {
			t.Errorf("ps --jq %q: exit %d, stdout %q, stderr %q (want %q)", path, o.code, o.stdout, o.stderr, problem)
		}
	}
	// A run that would start something starts nothing with a bad path.
	if o := s.run("", "herd", "run", "--name", "x", "--jq", "#(", "--", "/bin/sh"); o.code != 1 || !strings.Contains(o.stderr, "unclosed (") {
		t.Errorf("herd run --jq '#(': exit %d, stderr %q", o.code, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(s.moshHome(), "herd")); err == nil {
		if o := s.run("", "herd", "ps", "--json"); strings.Contains(o.stdout, `"x"`) {
			t.Errorf("a bad --jq path started the member: %s", o.stdout)
		}
	}
	for _, path := range []string{`#.name`, `#(name=="web").name`, `a\.b`, `@reverse`, `{name,engine}`, `#(name%"w*")#`, `name|@this`, `..0`, `@join:{"preserve":true}`, `#(name=="a)b").name`} {
		if err := checkJQPath(path); err != nil {
			t.Errorf("checkJQPath(%q) = %v, want ok", path, err)
		}
	}
}

// TestCompletionBashNeedsBashCompletion: sourced in a bash without the bash-completion package,
// the script says what it needs and registers nothing (no "_get_comp_words_by_ref: command not
// found" at every Tab); with the package it registers the completion, silently.
func TestCompletionBashNeedsBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH")
	}
	s := newSandbox(t)
	o := s.run("", "completion", "bash")
	if o.code != 0 {
		t.Fatalf("completion bash: exit %d, %q", o.code, o.stderr)
	}
	script := filepath.Join(s.home, "mosh.bash")
	if err := os.WriteFile(script, []byte(o.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	without := s.runCmd(exec.Command(bash, "--norc", "--noprofile", "-c", `source "$1"; echo "rc=$?"; complete -p mosh`, "bash", script), "")
	if !strings.Contains(without.stderr, "bash-completion package") || !strings.Contains(without.stdout, "rc=1") || without.code == 0 {
		t.Errorf("without bash-completion: exit %d, stdout %q, stderr %q", without.code, without.stdout, without.stderr)
	}
	with := s.runCmd(exec.Command(bash, "--norc", "--noprofile", "-c", `_get_comp_words_by_ref() { :; }; source "$1"; echo "rc=$?"; complete -p mosh`, "bash", script), "")
	if with.code != 0 || with.stderr != "" || !strings.Contains(with.stdout, "rc=0") || !strings.Contains(with.stdout, "complete") {
		t.Errorf("with bash-completion: exit %d, stdout %q, stderr %q", with.code, with.stdout, with.stderr)
	}
}

// TestStartWaitSaysWhyAnEngineStopped: `herd run/start --wait` follows the member until it is
// ready (idle or blocked); one that exits during start-up is exit 5 with its last screen lines
// (Claude Code as root with --agent), as JSON with --json; a ready one prints its row.
func TestStartWaitSaysWhyAnEngineStopped(t *testing.T) {
	e := newHerdEnv(t)
	bin := filepath.Join(e.home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	const why = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '"+why+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	out, errs, code := e.run("herd", "start", "claude", "--name", "cc", "--agent", "--wait", "--json")
	var er struct {
		Error struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exitCode"`
		} `json:"error"`
	}
	if code != 5 || json.Unmarshal([]byte(out), &er) != nil || er.Error.ExitCode != 5 || !strings.Contains(er.Error.Message, why) || !strings.Contains(errs, "cc exited during start-up with code 1") {
		t.Errorf("start --wait of an engine that stops: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	_, errs, code = e.run("herd", "run", "--name", "early", "--wait", "--", "sh", "-c", "echo 'no config found'; exit 2")
	if code != 5 || !strings.Contains(errs, "early exited during start-up with code 2: no config found") {
		t.Errorf("run --wait of a command that stops: exit %d, stderr %q", code, errs)
	}
	out, errs, code = e.run("herd", "run", "--name", "sh", "--wait", "--json", "--", "/bin/sh")
	var m struct {
		Name, State string
	}
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.Name != "sh" || m.State != "idle" {
		t.Errorf("run --wait of a shell: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Without --wait, start returns at launch; the reason is on the member once it is gone.
	e.expect(0, "herd", "run", "--name", "later", "--", "sh", "-c", "echo 'bad flag --x'; exit 3")
	_, errs, code = e.run("herd", "wait", "later", "--state", "idle")
	if code != 3 || !strings.Contains(errs, "bad flag --x") {
		t.Errorf("wait on a member that stopped: exit %d, stderr %q", code, errs)
	}
}
