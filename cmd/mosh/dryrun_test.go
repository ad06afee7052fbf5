package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// Every Go command says what the global --dry-run does to it, so no verb acts for real under
// --dry-run by omission; a command that says nothing refuses the flag.
func TestEveryCommandDeclaresItsDryRun(t *testing.T) {
	root := newRootCommand(scopeTestState(t), []string{"help"})
	root.InitDefaultHelpCmd()
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		key := commandKey(c)
		seen[key] = true
		if c.Runnable() && dryModeOf(c) == dryUndeclared {
			t.Errorf("%q declares no dry-run mode: add it to dryRunModes", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for key := range dryRunModes {
		if !seen[key] {
			t.Errorf("dryRunModes names %q, which is not a command", key)
		}
	}
	for key, mode := range dryRunModes {
		if mode == dryRefuse && dryRefusals[key] == "" {
			t.Errorf("%q refuses --dry-run without saying why", key)
		}
	}

	// An undeclared command refuses the flag, naming why.
	extra := &cobra.Command{Use: "zz-new-verb", RunE: func(*cobra.Command, []string) error {
		t.Fatal("an undeclared verb ran under --dry-run")
		return nil
	}}
	root.AddCommand(extra)
	root.SetArgs([]string{"zz-new-verb", "--dry-run"})
	err := root.Execute()
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "cannot --dry-run") {
		t.Fatalf("undeclared verb under --dry-run: %v", err)
	}
}

// Token and serve under --dry-run, no daemon needed: nothing is created, rotated or bound.
func TestDryRunTokenAndServeWriteNothing(t *testing.T) {
	ts := newTestState(t, "")
	path := filepath.Join(ts.Env["MOSH_HOME"], "herd", "token")
	code, out, stderr := rerun(ts, "herd", "token", "--dry-run")
	if code != 0 || !strings.Contains(stderr, "would create the herd token") || out != "" {
		t.Fatalf("token --dry-run: exit %d stdout %q stderr %q", code, out, stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("token --dry-run wrote the token: %v", err)
	}
	code, _, stderr = rerun(ts, "herd", "serve", "--port", "0", "--dry-run")
	if code != 0 || !strings.Contains(stderr, "would serve the herd over A2A on http://127.0.0.1:0") || !strings.Contains(stderr, "(created first)") {
		t.Fatalf("serve --dry-run: exit %d stderr %q", code, stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("serve --dry-run wrote the token: %v", err)
	}
	if code, _, stderr := rerun(ts, "herd", "serve", "--port", "70000", "--dry-run"); code != exitcode.Usage || !strings.Contains(stderr, "--port") {
		t.Fatalf("serve --dry-run checks its flags: exit %d stderr %q", code, stderr)
	}

	if code, _, stderr := rerun(ts, "herd", "token"); code != 0 {
		t.Fatalf("herd token: %d %s", code, stderr)
	}
	before, _ := os.ReadFile(path)
	code, out, stderr = rerun(ts, "herd", "token", "--rotate", "--dry-run", "--json")
	var rep dryRunReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.DryRun || rep.Verb != "herd token" || !strings.Contains(rep.Would, "replace the herd token") {
		t.Fatalf("token --rotate --dry-run --json: exit %d stdout %q stderr %q", code, out, stderr)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("token --rotate --dry-run rotated the token")
	}
	// Reading an existing token is no side effect: --show still shows it.
	if code, out, _ := rerun(ts, "herd", "token", "--show", "--dry-run"); code != 0 || out != strings.TrimSpace(string(before))+"\n" {
		t.Fatalf("token --show --dry-run: exit %d stdout %q", code, out)
	}
}

// Issue 11: `mosh kill X --dry-run` killed, `herd token --rotate --dry-run` rotated. Every
// side-effecting verb narrates under --dry-run and changes nothing: the member stays alive, no
// task is minted, nothing is typed, no member is added or forgotten, the daemon keeps running,
// no hook file is written.
func TestDryRunSideEffectingVerbsChangeNothing(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "sh1", "--", "/bin/sh")
	e.ok("herd", "run", "--name", "quick", "--", "/bin/sh", "-c", "exit 0")
	eventually(t, "quick exits", func() (bool, string) {
		m := findMember(e.ps(), "quick")
		return m != nil && !m.Alive, e.ok("ps")
	})
	sh1 := findMember(e.ps(), "sh1")
	var st0 herd.DaemonStatusResult
	if err := json.Unmarshal([]byte(e.ok("herd", "daemon", "status", "--json")), &st0); err != nil || !st0.Running {
		t.Fatalf("daemon status: %v %+v", err, st0)
	}
	e.ok("herd", "remote", "add", "kept", "http://127.0.0.1:9/", "--force")
	typed := filepath.Join(e.home, "typed-by-prompt")
	keyed := filepath.Join(e.home, "typed-by-send-keys")

	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"kill", "sh1", "--dry-run"}, 0, "would kill sh1 (nothing done)"},
		{[]string{"herd", "kill", "--all", "--dry-run"}, 0, "would kill quick, sh1 and cancel the open task of kept"},
		{[]string{"herd", "prompt", "sh1", "touch " + typed, "--dry-run"}, 0, "would type"},
		{[]string{"herd", "prompt", "sh1", "bad\x03text", "--dry-run"}, 1, "send-keys"},
		{[]string{"herd", "send-keys", "sh1", "--dry-run", "--", "touch " + keyed, "Enter"}, 0, "would send"},
		{[]string{"herd", "run", "--name", "new1", "--dry-run", "--", "/bin/sh"}, 0, "would run /bin/sh as member new1"},
		{[]string{"herd", "run", "--name", "sh1", "--dry-run", "--", "/bin/sh"}, 1, "already runs"},
		{[]string{"herd", "start", "claude", "--name", "new2", "--dry-run"}, 0, "would start claude as member new2"},
		{[]string{"herd", "prune", "--dry-run"}, 0, "would forget quick"},
		{[]string{"herd", "report", "sh1", "blocked:permission", "--dry-run"}, 0, "would report sh1 as blocked:permission"},
		{[]string{"herd", "daemon", "stop", "--dry-run"}, 1, "pass --yes"},
		{[]string{"herd", "daemon", "stop", "--yes", "--dry-run"}, 0, "would stop the herd daemon"},
		{[]string{"herd", "remote", "add", "far", "http://127.0.0.1:9/", "--force", "--dry-run"}, 0, "would register far"},
		{[]string{"herd", "remote", "remove", "kept", "--dry-run"}, 0, "would deregister the remote member kept"},
		{[]string{"herd", "remote", "add", "kept", "http://127.0.0.1:9/", "--dry-run"}, 1, "already exists"},
		{[]string{"kill", "kept", "--dry-run"}, 0, "would cancel the open task of kept"},
		{[]string{"herd", "hooks", "install", "claude", "--dry-run"}, 0, ""},
		{[]string{"attach", "sh1", "--dry-run"}, 1, "cannot --dry-run"},
		{[]string{"herd", "daemon", "--foreground", "--dry-run"}, 1, "cannot --dry-run"},
		{[]string{"kill", "ghost", "--dry-run"}, 3, "no member named ghost"},
		{[]string{"herd", "prompt", "ghost", "hi", "--dry-run"}, 3, "no member named ghost"},
		{[]string{"herd", "send-keys", "ghost", "Enter", "--dry-run"}, 3, "no member named ghost"},
	} {
		_, errs, code := e.run(c.args...)
		if code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("mosh %s: exit %d, stderr %q; want exit %d saying %q", strings.Join(c.args, " "), code, errs, c.code, c.says)
		}
	}

	var rep struct {
		DryRun bool   `json:"dryRun"`
		Verb   string `json:"verb"`
		Would  string `json:"would"`
		Params struct {
			Kill []string `json:"kill"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(e.ok("kill", "sh1", "--dry-run", "--json")), &rep); err != nil || !rep.DryRun || rep.Verb != "kill" ||
		len(rep.Params.Kill) != 1 || rep.Params.Kill[0] != "sh1" {
		t.Fatalf("kill --dry-run --json: %v %+v", err, rep)
	}

	// Nothing changed. A fence typed for real shows that the shell read everything typed
	// before it, so the dry-run prompt and keys were not typed.
	e.ok("herd", "send-keys", "sh1", "echo fence-$((40+2))", "Enter")
	eventually(t, "the fence", func() (bool, string) {
		s := e.ok("herd", "read", "sh1")
		return strings.Contains(s, "fence-42"), s
	})
	for _, f := range []string{typed, keyed} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("a dry run typed into the member: %s exists", f)
		}
	}
	ms := e.ps()
	if m := findMember(ms, "sh1"); m == nil || !m.Alive || m.Pid != sh1.Pid {
		t.Errorf("sh1 after dry-run kills: %+v", m)
	}
	if findMember(ms, "quick") == nil {
		t.Error("prune --dry-run forgot quick")
	}
	if findMember(ms, "kept") == nil {
		t.Error("remote remove --dry-run removed kept")
	}
	for _, n := range []string{"new1", "new2", "far"} {
		if findMember(ms, n) != nil {
			t.Errorf("a dry run added %s", n)
		}
	}
	if out := e.ok("herd", "tasks", "sh1", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("a dry-run prompt minted a task: %s", out)
	}
	var ex herd.ExplainResult
	if err := json.Unmarshal([]byte(e.ok("herd", "explain", "sh1", "--json")), &ex); err != nil || ex.Hook != nil || ex.State == herd.StateBlocked {
		t.Errorf("report --dry-run reached the member: %v %+v", err, ex)
	}
	var st herd.DaemonStatusResult
	if err := json.Unmarshal([]byte(e.ok("herd", "daemon", "status", "--json")), &st); err != nil || !st.Running || st.Pid != st0.Pid {
		t.Errorf("daemon stop --dry-run stopped the daemon: %v %+v (was %+v)", err, st, st0)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".claude", "settings.json")); err == nil {
		t.Error("hooks install --dry-run wrote ~/.claude/settings.json")
	}
}

// send-keys reads its flags anywhere before --; after -- everything is keys (issue 11: a
// --json after NAME was typed into the member).
func TestSendKeysFlagsAfterNameAreFlags(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "sh1", "--", "/bin/sh")
	var r herd.SendKeysResult
	out := e.ok("herd", "send-keys", "sh1", "echo one-$((1+1))", "Enter", "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Name != "sh1" || r.Bytes == 0 {
		t.Fatalf("send-keys … --json: %v %q", err, out)
	}
	// After --, text that looks like a flag is typed. (The shell computes what it prints, so
	// the output cannot be mistaken for the echo of what was typed.)
	e.ok("herd", "send-keys", "sh1", "--", "echo --json-$((3*3))", "Enter")
	eventually(t, "both lines ran", func() (bool, string) {
		s := e.ok("herd", "read", "sh1")
		return strings.Contains(s, "one-2") && strings.Contains(s, "--json-9"), s
	})
	if s := e.ok("herd", "read", "sh1"); strings.Contains(s, "Enter--json") || strings.Contains(s, "one-$((1+1))--json") {
		t.Fatalf("the flag was typed into the member:\n%s", s)
	}
	// --help after NAME is help, not keys.
	if out := e.ok("herd", "send-keys", "sh1", "--help"); !strings.Contains(out, "send-keys NAME") {
		t.Fatalf("send-keys NAME --help: %q", out)
	}
	// A dash key without -- is refused with the fix.
	if _, errs := e.expect(1, "herd", "send-keys", "sh1", "-n"); !strings.Contains(errs, "after --") {
		t.Fatalf("send-keys NAME -n: %q", errs)
	}
	// run: mosh's own flag after the command is refused instead of being passed on.
	if _, errs := e.expect(1, "herd", "run", "--name", "x", "/bin/sh", "--json"); !strings.Contains(errs, "--json comes after the command") {
		t.Fatalf("run CMD --json: %q", errs)
	}
	if findMember(e.ps(), "x") != nil {
		t.Fatal("run CMD --json started the member anyway")
	}
}
