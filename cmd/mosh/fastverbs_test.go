package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"0.mosh/early/hookpath"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// ageMs is what changes between two calls a few milliseconds apart: a member's age, an open
// task's duration.
var ageMs = regexp.MustCompile(`"(ageMs|durationMs)": [0-9]+`)

// The binary serves `ps --json`, `herd task ID --json` and an already-matched `wait NAME
// --state S [--json]` before any heavy package initialises, and prints byte for byte what the
// ordinary path (MOSH_NO_HOOKPATH=1) prints for the same daemon state: a real daemon with live,
// blocked, exited and remembered members and tasks.
func TestFastVerbsPrintWhatTheOrdinaryPathPrints(t *testing.T) {
	e := newHerdEnv(t)
	// Created in this order so the daemon's order (by creation) is not the name order.
	e.ok("herd", "run", "--name", "zeta", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "alpha", "--cwd", e.home, "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "mid-1", "--", "/bin/sh", "-c", "exit 7")
	e.ok("herd", "report", "alpha", "blocked:permission")
	e.ok("wait", "zeta", "--state", "idle", "--timeout", "60s")
	var pr herd.PromptResult
	if err := json.Unmarshal([]byte(e.ok("herd", "prompt", "zeta", "<hello & \"world\">", "--json")), &pr); err != nil || pr.Task == "" {
		t.Fatalf("prompt: %v %+v", err, pr)
	}
	e.expect(3, "wait", "mid-1", "--state", "idle", "--timeout", "60s")
	e.ok("wait", "zeta", "--state", "idle,working", "--timeout", "60s")

	run := func(args []string, extra ...string) (stdout, trace string, code int) {
		t.Helper()
		cmd := exec.Command(e.mosh, args...)
		cmd.Env = append(append([]string{}, e.env...), append([]string{"GODEBUG=inittrace=1"}, extra...)...)
		cmd.Dir = e.home
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	for _, args := range [][]string{
		{"ps", "--json"},
		{"herd", "ls", "--json"},
		{"herd", "task", pr.Task, "--json"},
		{"herd", "task", "--json", pr.Task},
		{"wait", "alpha", "--state", "blocked", "--json"},
		{"wait", "alpha", "--state=working, blocked:permission", "--json"},
		{"wait", "alpha", "--state", "blocked", "--timeout", "10m", "--json"},
		{"herd", "wait", "--json", "zeta", "--state", "idle,working"},
		{"wait", "alpha"}, // the default states, the text form off a terminal
		{"wait", "alpha", "--state", "blocked:permission"},
	} {
		// The members are live (a screen reading can change between two calls): the two paths
		// must print the same for one daemon state, so a pair that differs is taken again, a
		// bounded number of times; an output the fast path prints differently differs every time.
		var fast, ordinary string
		for attempt := 0; attempt < 20; attempt++ {
			var trace string
			var code int
			fast, trace, code = run(args)
			if code != 0 {
				t.Fatalf("%q: exit %d\n%s", args, code, trace)
			}
			for _, heavy := range []string{"github.com/spf13/cobra ", "github.com/dop251/goja ", "github.com/mattn/go-sqlite3 ", "github.com/mosh-dev/mosh/herd "} {
				if strings.Contains(trace, "init "+heavy) {
					t.Fatalf("%q: %s was initialised: not served by the fast path", args, strings.TrimSpace(heavy))
				}
			}
			ordinary, trace, code = run(args, "MOSH_NO_HOOKPATH=1")
			if code != 0 || !strings.Contains(trace, "init github.com/spf13/cobra ") {
				t.Fatalf("%q: ordinary path exit %d, or not the ordinary path:\n%s", args, code, trace)
			}
			fast, ordinary = ageMs.ReplaceAllString(fast, `"$1": 0`), ageMs.ReplaceAllString(ordinary, `"$1": 0`)
			if fast == ordinary {
				break
			}
		}
		if fast != ordinary || fast == "" {
			t.Errorf("%q: the outputs differ\nfast:\n%s\nordinary:\n%s", args, fast, ordinary)
		}
	}
	if out := e.ok("ps", "--json"); !strings.Contains(out, `"name": "alpha"`) || strings.Index(out, `"name": "alpha"`) > strings.Index(out, `"name": "zeta"`) {
		t.Errorf("ps --json is not in name order:\n%s", out)
	}

	// A wait that has to block is handed back: the ordinary path waits, times out, says so.
	out, trace, code := run([]string{"wait", "zeta", "--state", "blocked", "--timeout", "300ms", "--json"})
	if code != 2 || !strings.Contains(out, `"outcome": "timeout"`) || !strings.Contains(trace, "timed out") {
		t.Errorf("a blocking wait: exit %d\n%s\n%s", code, out, trace)
	}
	// In process: the fast path's wait against the same daemon, not matched now, serves nothing.
	env := map[string]string{}
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var buf bytes.Buffer
	if _, ok := hookpath.ServeTo([]string{"wait", "zeta", "--state", "blocked", "--json"}, func(k string) string { return env[k] }, strings.NewReader(""), &buf, func() bool { return false }); ok || buf.Len() != 0 {
		t.Errorf("a wait that has to block was served: %q", buf.String())
	}
}

// verbDaemon answers list, task and wait with the results a test sets, encoded as the daemon
// encodes them, and records the request lines it received.
type verbDaemon struct {
	mu      sync.Mutex
	answers map[string]string // method → result JSON, or a whole error object when it starts with {"code"
	lines   []string
}

func (vd *verbDaemon) set(method, result string) {
	vd.mu.Lock()
	defer vd.mu.Unlock()
	vd.answers[method] = result
}

func (vd *verbDaemon) take() []string {
	vd.mu.Lock()
	defer vd.mu.Unlock()
	l := vd.lines
	vd.lines = nil
	return l
}

func startVerbDaemon(t *testing.T, home string) *verbDaemon {
	t.Helper()
	vd := &verbDaemon{answers: map[string]string{}}
	herdtest.FakeDaemon(t, home, func(r herdtest.Request) string {
		if len(r.ID) == 0 {
			return ""
		}
		vd.mu.Lock()
		vd.lines = append(vd.lines, string(r.Line))
		res := vd.answers[r.Method]
		vd.mu.Unlock()
		switch {
		case res == "":
			return herdtest.Error(r.ID, `{"code":-32003,"message":"no such thing","data":{"exitCode":3}}`)
		case strings.HasPrefix(res, `{"code"`):
			return herdtest.Error(r.ID, res)
		}
		return herdtest.Result(r.ID, res)
	})
	return vd
}

// daemonJSON encodes v as the daemon encodes a result (no HTML escaping).
func daemonJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// For the same daemon answer the fast path prints what the ordinary path prints, byte for byte,
// and sends the same request; whatever it could print differently (a \ufffd escape, a null list,
// a name it cannot read, a wait not matched, an error answer) it hands back untouched.
func TestFastVerbsAgainstTheOrdinaryPathOnEveryShape(t *testing.T) {
	home := shortHome(t)
	vd := startVerbDaemon(t, filepath.Join(home, "m"))
	env := map[string]string{"HOME": filepath.Join(home, "elsewhere"), "MOSH_HOME": filepath.Join(home, "m"), "PATH": os.Getenv("PATH")}
	getenv := func(k string) string { return env[k] }
	code0 := 0
	weird := "<b> & \"q\" \\ \t\n\u2028\u2029 é 日本 😀 \x01\x7f {[,:]}"
	one := 1
	members := []herd.Member{
		{Name: "zeta", Engine: "claude", Kind: "local", State: "working", Authority: "screen", Cwd: "/w/" + weird, Pid: 42, AgeMs: 5, CreatedMs: 1, Alive: true, Substrate: "pty",
			Args: []string{weird, ""}, Screen: &herd.Reading{State: "working", Authority: "screen", Rule: weird, AtMs: 9}, Hook: &herd.Reading{State: "idle", Authority: "hook", ExpiresMs: 1 << 50}},
		{Name: "alpha", Engine: "shell", Kind: "local", State: "blocked", BlockedOn: "permission", Authority: "hook", Cwd: "/", CreatedMs: 2, ExitCode: &code0, Queued: 3},
		{Name: "alpha", Engine: "second-alpha", Kind: "remote", State: "gone", Authority: "runtime", CreatedMs: 3, ExitCode: &one, Remote: &herd.RemoteInfo{}},
		{Name: "a-b_c", Engine: "codex", State: "idle", CreatedMs: 0},
	}
	task := herd.Task{ID: "t-12", Member: "zeta", Text: weird, SubmittedMs: 1, State: "done", DurationMs: 7, Note: weird,
		Transitions: []herd.TaskTransition{{State: "working"}, {State: "done"}}, Artifact: &herd.TaskArtifact{Text: weird}}
	matched := herd.WaitResult{Mode: "one", Outcome: "matched", Results: []herd.WaitOutcome{{Name: "alpha", Outcome: "matched", State: "blocked", BlockedOn: "permission", Authority: "hook", TasksEnded: []string{"t-3"}}}, TasksEnded: []string{"t-3"}}
	matchedIdle := herd.WaitResult{Mode: "one", Outcome: "matched", Results: []herd.WaitOutcome{{Name: "alpha", Outcome: "matched", State: "idle", Authority: "screen", Seq: 4}}, TasksEnded: []string{}}
	timeout := herd.WaitResult{Mode: "one", Outcome: "timeout", Results: []herd.WaitOutcome{{Name: "alpha", Outcome: "timeout", State: "working", Authority: "screen"}}, TasksEnded: []string{}}
	badUTF8 := append([]herd.Member{}, members...)
	badUTF8[3].Cwd = "/\xff/x"

	for _, c := range []struct {
		name   string
		args   []string
		method string
		result string
		served bool
	}{
		{"empty roster", []string{"ps", "--json"}, "list", `{"members":[]}`, true},
		{"roster", []string{"ps", "--json"}, "list", daemonJSON(t, herd.ListResult{Members: members}), true},
		{"roster under herd, an alias", []string{"herd", "list", "--json"}, "list", daemonJSON(t, herd.ListResult{Members: members}), true},
		{"roster with invalid UTF-8", []string{"ps", "--json"}, "list", daemonJSON(t, herd.ListResult{Members: badUTF8}), false},
		{"null roster", []string{"ps", "--json"}, "list", `{"members":null}`, false},
		{"roster in another layout", []string{"ps", "--json"}, "list", `{"members":[{"engine":"x","name":"a"}]}`, false},
		{"roster error", []string{"ps", "--json"}, "list", "", false},
		{"task", []string{"herd", "task", "t-12", "--json"}, "task", daemonJSON(t, task), true},
		{"unknown task", []string{"herd", "task", "t-99", "--json"}, "task", "", false},
		{"wait matched", []string{"wait", "alpha", "--state", "blocked", "--json"}, "wait", daemonJSON(t, matched), true},
		{"wait matched, text", []string{"wait", "alpha", "--state", "blocked"}, "wait", daemonJSON(t, matched), true},
		{"wait matched idle, text", []string{"herd", "wait", "alpha", "--state=idle"}, "wait", daemonJSON(t, matchedIdle), true},
		{"wait matched, a timeout", []string{"wait", "alpha", "--timeout", "10m", "--state", "blocked", "--json"}, "wait", daemonJSON(t, matched), true},
		{"wait matched, no timeout", []string{"wait", "--timeout=0", "alpha"}, "wait", daemonJSON(t, matched), true},
		{"wait not matched now", []string{"wait", "alpha", "--state", "blocked", "--json"}, "wait", daemonJSON(t, timeout), false},
		{"wait with null results", []string{"wait", "alpha", "--json"}, "wait", `{"mode":"one","outcome":"matched","results":null,"tasksEnded":[]}`, false},
		{"wait error", []string{"wait", "alpha", "--json"}, "wait", `{"code":-32602,"message":"bad","data":{"exitCode":1}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			vd.set(c.method, c.result)
			var fast bytes.Buffer
			code, ok := hookpath.ServeTo(c.args, getenv, strings.NewReader(""), &fast, func() bool { return false })
			fastLines := vd.take()
			if ok != c.served {
				t.Fatalf("served %v, want %v (output %q)", ok, c.served, fast.String())
			}
			if !ok {
				if fast.Len() != 0 {
					t.Errorf("handed back after printing %q", fast.String())
				}
				return
			}
			if code != 0 {
				t.Errorf("exit %d", code)
			}
			ts := newTestState(t, "")
			ts.Env = env
			if oc := execute(ts.globalState, c.args); oc != 0 {
				t.Fatalf("ordinary path: exit %d: %s", oc, ts.stderr.String())
			}
			if fast.String() != ts.stdout.String() {
				t.Errorf("outputs differ\nfast:\n%s\nordinary:\n%s", fast.String(), ts.stdout.String())
			}
			ordLines := vd.take()
			if c.method != "wait" && (len(fastLines) != 1 || len(ordLines) != 1 || fastLines[0] != ordLines[0]) {
				t.Errorf("requests differ:\nfast     %q\nordinary %q", fastLines, ordLines)
			}
			if c.method == "wait" && (len(fastLines) != 1 || !strings.Contains(fastLines[0], `"timeoutMs":1}`)) {
				t.Errorf("the fast wait is not a 1 ms probe: %q", fastLines)
			}
		})
	}

	// Forms the fast path leaves to the ordinary one, unsent.
	vd.set("list", `{"members":[]}`)
	vd.set("task", daemonJSON(t, task))
	vd.set("wait", daemonJSON(t, matched))
	for _, args := range [][]string{
		{"ps"}, {"ps", "--json", "--json"}, {"ps", "--json", "x"}, {"--dry-run", "ps", "--json"}, {"ps", "--json", "--jq", ".[]"},
		{"task", "t-12", "--json"}, {"herd", "task", "t-12"}, {"herd", "task", "t-012", "--json"}, {"herd", "task", " t-12", "--json"},
		{"herd", "task", "t-1", "t-2", "--json"}, {"herd", "tasks", "--json"},
		{"wait", "alpha", "beta", "--json"}, {"wait", "Alpha", "--json"}, {"wait", "alpha", "--state", "busy", "--json"},
		{"wait", "alpha", "--any", "--json"}, {"wait", "alpha", "--timeout", "5x", "--json"}, {"wait", "alpha", "--state"},
		{"wait", "alpha", "--timeout", "1.5s"}, {"wait", "alpha", "--timeout", "1234567"}, {"wait", "alpha", "--timeout", "-1s"},
		{"wait", "alpha", "--timeout=", "--json"}, {"wait", "alpha", "--timeout", "1s", "--timeout", "2s"}, {"ps", "--json", "--timeout", "1s"},
		{"wait", "alpha", "--state", "a", "--state", "b"}, {"wait", "--", "alpha"}, {"herd"}, {"herd", "--json"},
	} {
		var out bytes.Buffer
		if _, ok := hookpath.ServeTo(args, getenv, strings.NewReader(""), &out, func() bool { return false }); ok {
			t.Errorf("%q was served: %q", args, out.String())
		}
		if l := vd.take(); len(l) != 0 {
			t.Errorf("%q: a request went: %q", args, l)
		}
	}
	// The text form of wait on a terminal, and everything with MOSH_NO_HOOKPATH=1.
	if _, ok := hookpath.ServeTo([]string{"wait", "alpha"}, getenv, strings.NewReader(""), &bytes.Buffer{}, func() bool { return true }); ok {
		t.Error("the text form of wait was served on a terminal")
	}
	off := func(k string) string {
		if k == "MOSH_NO_HOOKPATH" {
			return "1"
		}
		return env[k]
	}
	if _, ok := hookpath.ServeTo([]string{"ps", "--json"}, off, strings.NewReader(""), &bytes.Buffer{}, func() bool { return false }); ok {
		t.Error("served with MOSH_NO_HOOKPATH=1")
	}
	if l := vd.take(); len(l) != 0 {
		t.Errorf("requests went: %q", l)
	}
}

// Every --timeout value the fast path takes is one the command line takes.
func TestSimpleDurationsAreDurations(t *testing.T) {
	n := 0
	for _, digits := range []string{"0", "7", "30", "500", "0500", "999999", "123456"} {
		for _, unit := range []string{"", "ms", "s", "m", "h"} {
			v := digits + unit
			if !hookpath.SimpleDuration(v) {
				t.Errorf("%q is not simple", v)
				continue
			}
			n++
			if _, err := waitTimeout(v); err != nil {
				t.Errorf("the fast path takes --timeout %q, the command line refuses it: %v", v, err)
			}
		}
	}
	for _, v := range []string{"", "s", "1234567", "1.5s", "-1s", "1us", "1d", " 1s", "1s ", "1m30s", "+1"} {
		if hookpath.SimpleDuration(v) {
			t.Errorf("%q taken as simple", v)
		}
	}
	if n == 0 {
		t.Fatal("nothing checked")
	}
}
