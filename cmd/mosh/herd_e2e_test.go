package main

// End-to-end tests of the herd verbs: the real mosh binary, a real daemon in a temp MOSH_HOME,
// real members (/bin/sh, the fake engine), driven the way a user drives them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

var herdFake struct {
	once sync.Once
	path string
	err  error
}

// herdBinaries returns the mosh binary TestMain built and the fake engine, built once next to
// it (so TestMain's clean-up removes it too).
func herdBinaries(t testing.TB) (mosh, fakeengine string) {
	t.Helper()
	herdFake.once.Do(func() {
		fe := herdtest.BuildFakeEngineIn(filepath.Dir(moshBin))
		herdFake.path, herdFake.err = fe.Path(), fe.Err
	})
	if herdFake.err != nil {
		t.Fatal(herdFake.err)
	}
	return moshBin, herdFake.path
}

// herdEnv is one hermetic herd: its own HOME and MOSH_HOME (short, so the socket fits), given to
// the mosh processes it runs, never set in this process; so the test runs in parallel with the
// others (newHerdEnv calls t.Parallel: such a test must not t.Setenv).
type herdEnv struct {
	t    testing.TB
	mosh string
	fake string
	home string
	env  []string
}

func newHerdEnv(t *testing.T) *herdEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end herd test (builds the binary)")
	}
	t.Parallel()
	return newHerdEnvTB(t)
}

// newHerdEnvTB is newHerdEnv for a benchmark (which does not run in parallel).
func newHerdEnvTB(t testing.TB) *herdEnv {
	t.Helper()
	mosh, fake := herdBinaries(t)
	home, err := os.MkdirTemp("", "mh")
	if err != nil {
		t.Fatal(err)
	}
	e := &herdEnv{t: t, mosh: mosh, fake: fake, home: home}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "MOSH_HOME", "NO_COLOR", "MOSH_HERD_NAME", "MOSH_HERD_DIR", "TERM":
			continue
		}
		e.env = append(e.env, kv)
	}
	e.env = append(e.env, "HOME="+home, "MOSH_HOME="+home, "TERM=xterm-256color")
	t.Cleanup(func() {
		// Stop this test's daemon (and its members) whatever happened.
		_, _, _ = e.run("herd", "daemon", "stop", "--yes")
		os.RemoveAll(home)
	})
	return e
}

// run runs mosh with args and returns stdout, stderr and the exit code.
func (e *herdEnv) run(args ...string) (string, string, int) {
	return e.runIn("", args...)
}

func (e *herdEnv) runIn(stdin string, args ...string) (string, string, int) {
	cmd := exec.Command(e.mosh, args...)
	cmd.Env = e.env
	cmd.Dir = e.home
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	if took := time.Since(start); took > 2*time.Second {
		e.t.Logf("slow: mosh %s took %s", strings.Join(args, " "), took.Round(time.Millisecond))
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			e.t.Fatalf("mosh %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// ok runs mosh and fails the test unless it exits 0.
func (e *herdEnv) ok(args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("mosh %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// expect runs mosh and fails unless the exit code is want; it returns stdout and stderr.
func (e *herdEnv) expect(want int, args ...string) (string, string) {
	e.t.Helper()
	out, errs, code := e.run(args...)
	if code != want {
		e.t.Fatalf("mosh %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errs)
	}
	return out, errs
}

func (e *herdEnv) ps() []herd.Member {
	e.t.Helper()
	var ms []herd.Member
	out := e.ok("ps", "--json")
	if err := json.Unmarshal([]byte(out), &ms); err != nil {
		e.t.Fatalf("ps --json: %v\n%s", err, out)
	}
	return ms
}

func findMember(ms []herd.Member, name string) *herd.Member {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

// eventually retries cond until it holds or 15 s pass: for output that arrives asynchronously
// (a shell echoing), never to assert on time.
func eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(15 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, got := cond()
		if ok {
			t.Logf("%s: after %s", what, time.Since(start).Round(time.Millisecond))
			return
		}
		last = got
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: never happened; last saw:\n%s", what, last)
}

// ---- tests -----------------------------------------------------------------------------------

func TestHerdRunPsReadSendKeysKill(t *testing.T) {
	e := newHerdEnv(t)
	out := e.ok("herd", "run", "--name", "sh1", "--", "/bin/sh")
	if strings.TrimSpace(out) != "sh1" {
		t.Fatalf("run off a terminal prints the name; got %q", out)
	}
	var m herd.Member
	if err := json.Unmarshal([]byte(e.ok("herd", "run", "--name", "sh2", "--json", "--", "/bin/sh", "-c", "exec cat")), &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != "sh2" || m.Pid <= 0 || m.Cwd != e.home || m.Kind != herd.KindLocal {
		t.Fatalf("run --json: %+v", m)
	}

	// Both read idle once their programs wait at the terminal (the shell's prompt; cat by its
	// foreground process): the roster stops changing, so the listings below can be compared.
	e.ok("wait", "sh1", "sh2", "--all", "--state", "idle", "--timeout", "30s")
	ms := e.ps()
	sh1 := findMember(ms, "sh1")
	if sh1 == nil || !sh1.Alive || sh1.Substrate != herd.SubstratePty || sh1.Pid <= 0 {
		t.Fatalf("ps --json: sh1 missing or wrong: %+v", ms)
	}

	// Off a terminal: tab-separated rows, no header, RFC3339 times, no escape sequences.
	tsv := e.ok("ps")
	if strings.Contains(tsv, "NAME") || strings.Contains(tsv, "\x1b[") {
		t.Fatalf("ps off a terminal must have no header and no colour:\n%s", tsv)
	}
	lines := strings.Split(strings.TrimSpace(tsv), "\n")
	if len(lines) != 2 {
		t.Fatalf("ps: want 2 rows, got %q", tsv)
	}
	f := strings.Split(lines[0], "\t")
	if len(f) != 10 || f[0] != "sh1" || f[2] != "local" || f[9] != "pty" {
		t.Fatalf("ps row %q: want name engine kind state authority cwd pid age attached substrate", lines[0])
	}
	if _, err := time.Parse(time.RFC3339, f[7]); err != nil {
		t.Fatalf("ps age column off a terminal must be RFC3339, got %q", f[7])
	}
	if f[5] != "~" {
		t.Fatalf("cwd is the home directory and must read ~, got %q", f[5])
	}
	// Bare `mosh herd` is ps. (The state and authority columns may change between the two
	// snapshots: a fresh shell settles from unknown to idle on its own time.)
	unstated := func(rows string) string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(rows), "\n") {
			f := strings.Split(l, "\t")
			if len(f) > 4 {
				f[3], f[4] = "", ""
			}
			out = append(out, strings.Join(f, "\t"))
		}
		return strings.Join(out, "\n")
	}
	if got := e.ok("herd"); unstated(got) != unstated(tsv) {
		t.Fatalf("bare `mosh herd` must equal `mosh ps`:\n%s\nvs\n%s", got, tsv)
	}

	e.ok("herd", "send-keys", "sh1", "echo keys-$((40+2))", "Enter")
	eventually(t, "send-keys output on the screen", func() (bool, string) {
		s := e.ok("herd", "read", "sh1", "--lines", "20")
		return strings.Contains(s, "keys-42"), s
	})
	var rr herd.ReadResult
	if err := json.Unmarshal([]byte(e.ok("herd", "read", "sh1", "--json")), &rr); err != nil || rr.Name != "sh1" {
		t.Fatalf("read --json: %v %+v", err, rr)
	}

	// Text may be several words; - reads stdin.
	e.ok("herd", "prompt", "sh1", "echo", "two-words")
	eventually(t, "prompt output", func() (bool, string) {
		s := e.ok("herd", "read", "sh1")
		return strings.Contains(s, "\ntwo-words"), s
	})
	if _, errs, code := e.runIn("echo from-stdin-$((2*3))\n", "herd", "prompt", "sh1", "-"); code != 0 {
		t.Fatalf("prompt -: exit %d: %s", code, errs)
	}
	eventually(t, "prompt from stdin", func() (bool, string) {
		s := e.ok("herd", "read", "sh1")
		return strings.Contains(s, "from-stdin-6"), s
	})

	var kr herd.KillResult
	if err := json.Unmarshal([]byte(e.ok("kill", "sh1", "--json")), &kr); err != nil || len(kr.Killed) != 1 || kr.Killed[0] != "sh1" {
		t.Fatalf("kill --json: %v %+v", err, kr)
	}
	if findMember(e.ps(), "sh1") != nil {
		t.Fatal("a killed member is forgotten")
	}
	_, errs := e.expect(3, "kill", "nosuch")
	if !strings.Contains(errs, "nosuch") {
		t.Fatalf("kill of an unknown member names it: %q", errs)
	}
	e.expect(1, "kill")
	e.expect(1, "kill", "sh2", "--all")
	e.ok("kill", "--all")
	if n := len(e.ps()); n != 0 {
		t.Fatalf("kill --all left %d members", n)
	}
}

func TestHerdNameAndUsageErrors(t *testing.T) {
	e := newHerdEnv(t)
	for _, args := range [][]string{
		{"herd", "run", "--name", "Bad", "--", "/bin/sh"},
		{"herd", "run", "--name", "9lives", "--", "/bin/sh"},
		{"herd", "run", "--name", strings.Repeat("a", 33), "--", "/bin/sh"},
		{"herd", "read", "UPPER"},
		{"wait", "no spaces"},
	} {
		_, errs := e.expect(1, args...)
		if !strings.Contains(errs, "invalid member name") {
			t.Errorf("mosh %v: want an invalid-name error naming the fix, got %q", args, errs)
		}
	}
	e.expect(1, "herd", "run")                                    // no command
	e.expect(1, "herd", "prompt", "x")                            // no text
	e.expect(1, "herd", "send-keys", "x")                         // no keys
	e.expect(1, "wait", "a", "b", "--any", "--all")               // exclusive flags
	e.expect(1, "wait", "a", "--state", "sleeping")               // unknown state
	e.expect(1, "wait", "a", "--timeout", "soon")                 // bad duration
	e.expect(1, "herd", "daemon")                                 // no verb
	e.expect(1, "herd", "start", "claude", "extra", "--", "args") // one ENGINE only

	e.ok("herd", "run", "--name", "dup", "--", "/bin/sh", "-c", "exec cat")
	_, errs, code := e.run("herd", "run", "--name", "dup", "--", "/bin/sh")
	if code != 1 || !strings.Contains(errs, "dup") {
		t.Fatalf("duplicate name: exit %d %q", code, errs)
	}
	_, errs, code = e.run("herd", "run", "--cwd", "/nonexistent/dir", "--", "/bin/sh")
	if code == 0 || !strings.Contains(errs, "/nonexistent/dir") {
		t.Fatalf("missing cwd: exit %d %q", code, errs)
	}
	_, errs, code = e.run("herd", "start", "nosuchengine")
	if code == 0 || !strings.Contains(errs, "nosuchengine") {
		t.Fatalf("unknown engine: exit %d %q", code, errs)
	}
	e.expect(3, "herd", "read", "ghost")
	e.expect(3, "herd", "explain", "ghost")
	e.expect(3, "herd", "send-keys", "ghost", "Enter")
}

func TestHerdWaitExitCodes(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "a", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "b", "--", "/bin/sh", "-c", "exec cat")

	// Unknown member: gone (3).
	out, _ := e.expect(3, "wait", "ghost", "--json")
	var wr herd.WaitResult
	if err := json.Unmarshal([]byte(out), &wr); err != nil || wr.Outcome != herd.OutcomeGone {
		t.Fatalf("wait ghost --json: %v %s", err, out)
	}

	// Not reached in time: timeout (2).
	e.expect(2, "wait", "a", "--state", "working", "--timeout", "300ms")

	// A report is a state change the wait sees.
	e.ok("herd", "report", "a", "working")
	out, _ = e.expect(0, "wait", "a", "--state", "working", "--json")
	if err := json.Unmarshal([]byte(out), &wr); err != nil || wr.Mode != "one" || wr.Outcome != herd.OutcomeMatched || wr.Results[0].State != herd.StateWorking {
		t.Fatalf("wait one --json: %v %s", err, out)
	}

	// --any names the winner and every result; the loser keeps running.
	out, _ = e.expect(0, "wait", "a", "b", "--any", "--state", "working", "--json")
	wr = herd.WaitResult{}
	if err := json.Unmarshal([]byte(out), &wr); err != nil || wr.Mode != "any" || wr.Winner != "a" || len(wr.Results) != 2 {
		t.Fatalf("wait --any --json: %v %s", err, out)
	}
	if b := findMember(e.ps(), "b"); b == nil || !b.Alive {
		t.Fatal("the loser of --any keeps running")
	}

	// Several names without a flag mean --all: b never works, so it times out.
	out, _ = e.expect(2, "wait", "a", "b", "--state", "working", "--timeout", "300ms", "--json")
	wr = herd.WaitResult{}
	if err := json.Unmarshal([]byte(out), &wr); err != nil || wr.Mode != "all" || wr.Outcome != herd.OutcomeTimeout {
		t.Fatalf("wait a b (all) --json: %v %s", err, out)
	}

	// Blocked with a sub-kind, waited for by kind; the wait runs while the report arrives.
	done := make(chan int, 1)
	go func() {
		_, _, code := e.run("wait", "b", "--state", "blocked:permission", "--timeout", "30s")
		done <- code
	}()
	e.waitForClients(1)
	e.ok("herd", "report", "b", "blocked:permission")
	if code := <-done; code != 0 {
		t.Fatalf("wait for blocked:permission woken by a report: exit %d", code)
	}

	// A member whose process exits reads gone (runtime) with its exit code: a wait for done
	// ends (3, never "matched done") and --json carries the exit code.
	e.ok("herd", "run", "--name", "ex", "--", "/bin/sh", "-c", "read x; exit 7")
	e.ok("herd", "send-keys", "ex", "Enter")
	out, _ = e.expect(3, "wait", "ex", "--state", "done", "--timeout", "30s", "--json")
	wr = herd.WaitResult{}
	if err := json.Unmarshal([]byte(out), &wr); err != nil || wr.Outcome != herd.OutcomeEnded || len(wr.Results) != 1 ||
		wr.Results[0].ExitCode == nil || *wr.Results[0].ExitCode != 7 || wr.Results[0].State != herd.StateGone {
		t.Fatalf("wait on a member that exited 7 --json: %v %s", err, out)
	}
	m := findMember(e.ps(), "ex")
	if m == nil || m.State != herd.StateGone || m.Authority != herd.AuthorityRuntime || m.ExitCode == nil || *m.ExitCode != 7 {
		t.Fatalf("exited member: %+v", m)
	}
	e.expect(3, "wait", "ex", "--state", "working")
	tsv := e.ok("ps")
	if !strings.Contains(tsv, "gone (exit 7)") {
		t.Fatalf("ps shows the exit code of an ended member:\n%s", tsv)
	}
	// prune forgets it.
	if out := e.ok("herd", "prune"); strings.TrimSpace(out) != "ex" {
		t.Fatalf("prune: %q", out)
	}
}

// waitForClients waits until the daemon has at least n clients besides the status call itself
// (a wait process connected).
func (e *herdEnv) waitForClients(n int) {
	e.t.Helper()
	eventually(e.t, fmt.Sprintf("%d daemon clients", n), func() (bool, string) {
		out := e.ok("herd", "daemon", "status", "--json")
		var ds herd.DaemonStatusResult
		_ = json.Unmarshal([]byte(out), &ds)
		// This status call is itself a client.
		return ds.Clients >= n+1, out
	})
}

func TestHerdReport(t *testing.T) {
	e := newHerdEnv(t)
	// A hook fired outside the herd: empty name, silent success, no daemon started.
	out, errs := e.expect(0, "herd", "report", "", "working")
	if out != "" || errs != "" {
		t.Fatalf("empty name must print nothing: %q %q", out, errs)
	}
	// No daemon: the report is dropped silently, and none is started for it.
	e.expect(0, "herd", "report", "x", "working")
	var ds herd.DaemonStatusResult
	if err := json.Unmarshal([]byte(e.ok("herd", "daemon", "status", "--json")), &ds); err != nil || ds.Running {
		t.Fatalf("report must not start a daemon: %v %+v", err, ds)
	}
	for _, bad := range []string{"sleeping", "blocked:nope", "working:permission", ""} {
		_, errs := e.expect(1, "herd", "report", "x", bad)
		if !strings.Contains(errs, "state") && !strings.Contains(errs, "kind") {
			t.Errorf("bad state %q: message %q", bad, errs)
		}
	}
	e.expect(1, "herd", "report", "X", "working")
	e.expect(1, "herd", "report", "x", "working", "--ttl", "forever")

	e.ok("herd", "run", "--name", "m", "--", "/bin/sh", "-c", "exec cat")
	var rr herd.ReportResult
	if err := json.Unmarshal([]byte(e.ok("herd", "report", "m", "blocked:permission", "--ttl", "5m", "--json")), &rr); err != nil || !rr.Accepted {
		t.Fatalf("report --json: %v %+v", err, rr)
	}
	m := findMember(e.ps(), "m")
	if m == nil || m.State != herd.StateBlocked || m.BlockedOn != "permission" || m.Authority != herd.AuthorityHook {
		t.Fatalf("after a blocked:permission report: %+v", m)
	}
	if tsv := e.ok("ps"); !strings.Contains(tsv, "blocked:permission\thook") {
		t.Fatalf("ps shows the sub-kind and the authority:\n%s", tsv)
	}
	// The hook's JSON rides along (read from stdin with --payload -); bad JSON is refused.
	if _, errs, code := e.runIn(`{"hook_event_name":"Stop","last_assistant_message":"done"}`, "herd", "report", "m", "done", "--payload", "-"); code != 0 {
		t.Fatalf("report --payload -: exit %d %s", code, errs)
	}
	if _, _, code := e.runIn(`not json`, "herd", "report", "m", "done", "--payload", "-"); code != 1 {
		t.Fatalf("report with a non-JSON payload: exit %d, want 1", code)
	}

	// A hook inside a member may run with another HOME/MOSH_HOME (engines are often isolated):
	// MOSH_HERD_DIR, which the member carries, still finds the herd that owns it.
	lost := &herdEnv{t: t, mosh: e.mosh, home: e.home}
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "MOSH_HOME=") && !strings.HasPrefix(kv, "HOME=") {
			lost.env = append(lost.env, kv)
		}
	}
	elsewhere := t.TempDir()
	lost.env = append(lost.env, "HOME="+elsewhere, "MOSH_HOME="+elsewhere, "MOSH_HERD_DIR="+filepath.Join(e.home, "herd"))
	lost.ok("herd", "report", "m", "blocked:question")
	if m := findMember(e.ps(), "m"); m == nil || m.State != herd.StateBlocked || m.BlockedOn != "question" {
		t.Fatalf("a report through MOSH_HERD_DIR did not reach the member's herd: %+v", m)
	}

	// A blocked member queues a prompt (it is typed once the member is at rest again), and
	// refuses one typed at once (--now) unless it is an answer.
	e.ok("herd", "report", "m", "blocked:permission")
	_, errs, code := e.run("herd", "prompt", "m", "hello")
	if code != 0 || !strings.Contains(errs, "queued") {
		t.Fatalf("prompt into a blocked member: exit %d %q (want 0, queued)", code, errs)
	}
	_, errs, code = e.run("herd", "prompt", "m", "hello", "--now")
	if code != 1 || !strings.Contains(errs, "--answer") {
		t.Fatalf("prompt --now into a blocked member: exit %d %q (want 1 naming --answer)", code, errs)
	}
	// --json has the place in the queue; kill t-N removes a queued prompt untyped.
	var pr herd.PromptResult
	if out := e.ok("herd", "prompt", "m", "later", "--json"); json.Unmarshal([]byte(out), &pr) != nil || !pr.Queued || pr.Position != 2 || pr.Task == "" {
		t.Fatalf("prompt --json into a busy member: %s", out)
	}
	if out := e.ok("herd", "kill", pr.Task); !strings.Contains(out, pr.Task) {
		t.Fatalf("kill %s: %q", pr.Task, out)
	}
	var task herd.Task
	if out := e.ok("herd", "task", pr.Task, "--json"); json.Unmarshal([]byte(out), &task) != nil || task.Open || task.State != "canceled" {
		t.Fatalf("the killed queued task: %s", out)
	}
	e.ok("herd", "prompt", "m", "1", "--answer")
}

func TestHerdStatusDoctorExplainDaemon(t *testing.T) {
	e := newHerdEnv(t)
	// No daemon: doctor fails (5) and names the fix; it does not start one.
	out, _ := e.expect(5, "herd", "doctor", "--json")
	var dr herd.DoctorResult
	if err := json.Unmarshal([]byte(out), &dr); err != nil || dr.OK || len(dr.Checks) == 0 {
		t.Fatalf("doctor without a daemon: %v %s", err, out)
	}
	if out, _ := e.expect(0, "herd", "daemon", "status"); !strings.Contains(out, "running\tno") {
		t.Fatalf("daemon status without a daemon:\n%s", out)
	}
	e.ok("herd", "daemon", "stop") // nothing to stop is not an error

	e.ok("herd", "run", "--name", "m", "--", "/bin/sh", "-c", "exec cat")
	out = e.ok("herd", "doctor", "--json")
	dr = herd.DoctorResult{}
	if err := json.Unmarshal([]byte(out), &dr); err != nil || !dr.OK {
		t.Fatalf("doctor with a daemon: %v %s", err, out)
	}
	if tsv := e.ok("herd", "doctor"); !strings.Contains(tsv, "\tok\t") {
		t.Fatalf("doctor off a terminal is tab-separated rows:\n%s", tsv)
	}

	var st herd.StatusResult
	if err := json.Unmarshal([]byte(e.ok("herd", "status", "--json")), &st); err != nil || st.Members != 1 || st.Live != 1 || st.DaemonPid <= 0 {
		t.Fatalf("status --json: %v %+v", err, st)
	}
	if out := e.ok("herd", "status"); !strings.Contains(out, "live\t1") {
		t.Fatalf("status off a terminal:\n%s", out)
	}

	e.ok("herd", "report", "m", "working")
	var ex herd.ExplainResult
	if err := json.Unmarshal([]byte(e.ok("herd", "explain", "m", "--json")), &ex); err != nil || ex.Name != "m" || ex.State != herd.StateWorking || ex.Authority != herd.AuthorityHook || ex.Hook == nil {
		t.Fatalf("explain --json: %v %+v", err, ex)
	}
	if out := e.ok("herd", "explain", "m"); !strings.Contains(out, "working") || !strings.Contains(out, "hook") {
		t.Fatalf("explain:\n%s", out)
	}

	// stop refuses while members run (1), then stops with --yes.
	_, errs := e.expect(1, "herd", "daemon", "stop")
	if !strings.Contains(errs, "--yes") {
		t.Fatalf("daemon stop with members names --yes: %q", errs)
	}
	e.ok("herd", "daemon", "stop", "--yes")
	var ds herd.DaemonStatusResult
	if err := json.Unmarshal([]byte(e.ok("herd", "daemon", "status", "--json")), &ds); err != nil || ds.Running {
		t.Fatalf("after stop: %v %+v", err, ds)
	}
}

func TestHerdRestoreAfterStop(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "keep", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "daemon", "stop", "--yes")
	// The next verb starts a new daemon; the member is remembered but gone.
	m := findMember(e.ps(), "keep")
	if m == nil || m.State != herd.StateGone || m.Alive {
		t.Fatalf("after daemon stop --yes the member is remembered, gone: %+v", m)
	}
	var rr herd.RestoreResult
	if err := json.Unmarshal([]byte(e.ok("restore", "--dry-run", "--json")), &rr); err != nil || !rr.DryRun || len(rr.Actions) != 1 || rr.Actions[0].Name != "keep" {
		t.Fatalf("restore --dry-run --json: %v %+v", err, rr)
	}
	if m := findMember(e.ps(), "keep"); m == nil || m.Alive {
		t.Fatal("a dry run restarts nothing")
	}
	e.ok("restore")
	if m := findMember(e.ps(), "keep"); m == nil || !m.Alive {
		t.Fatalf("restore brings the member back: %+v", m)
	}
}

func TestHerdPromptWaitWithFakeEngine(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "fe", "--engine", "claude", "--", e.fake)
	e.expect(0, "wait", "fe", "--state", "idle", "--timeout", "30s")
	out, errs := e.expect(0, "herd", "prompt", "fe", "say hello", "--wait", "--state", "idle,done,blocked", "--timeout", "60s", "--json")
	var pr herd.PromptResult
	if err := json.Unmarshal([]byte(out), &pr); err != nil || !pr.Sent || pr.Outcome != herd.OutcomeMatched {
		t.Fatalf("prompt --wait --json: %v %s %s", err, out, errs)
	}
}

func TestHerdStartEngineWithAgentFlags(t *testing.T) {
	e := newHerdEnv(t)
	// The fake engine stands in for claude on the member's PATH: start resolves it there. The
	// wrapper records the argv it received and drops the autonomous flag the fake lacks.
	bin := filepath.Join(e.home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(e.home, "claude-argv")
	wrapper := fmt.Sprintf(`#!/bin/sh
printf '%%s\n' "$@" > %q
for a; do shift; [ "$a" = --dangerously-skip-permissions ] || set -- "$@" "$a"; done
exec %q "$@"
`, argsFile, e.fake)
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	var m herd.Member
	out := e.ok("herd", "start", "cc", "--name", "agent1", "--agent", "--json", "--", "--turn", "50ms")
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(m.Args, " ")
	if m.Engine != "claude" || !m.Autonomous || !strings.Contains(joined, "--dangerously-skip-permissions") || !strings.Contains(joined, "--turn 50ms") {
		t.Fatalf("start cc --agent -- --turn 50ms: %+v", m)
	}
	e.expect(0, "wait", "agent1", "--state", "idle", "--timeout", "30s")
	if got, _ := os.ReadFile(argsFile); string(got) != "--dangerously-skip-permissions\n--turn\n50ms\n" {
		t.Fatalf("the engine received argv %q", got)
	}
	out, errs := e.expect(0, "herd", "prompt", "agent1", "hello", "there", "--wait", "--timeout", "60s")
	if !strings.HasPrefix(out, "agent1\t") {
		t.Fatalf("prompt --wait off a terminal prints name, task, outcome, state: %q %q", out, errs)
	}
	if f := strings.Split(strings.TrimSpace(out), "\t"); len(f) != 4 || f[2] != herd.OutcomeMatched {
		t.Fatalf("prompt --wait row: %q", out)
	}
	if s := e.ok("herd", "read", "agent1"); !strings.Contains(s, "hello there") {
		t.Fatalf("the prompt text reached the engine:\n%s", s)
	}
}

// A script that prompts and then waits must see the turn, not the idle screen the engine still
// shows for a moment after the Enter: the daemon's prompt claim keeps the member working until
// its engine repaints.
func TestHerdScriptPromptThenWaitSeesTheTurn(t *testing.T) {
	e := newHerdEnv(t)
	script := filepath.Join(e.home, "turn.mosh")
	src := fmt.Sprintf(`
const r = await herdRun([%q, "--turn", "700ms"], {name: "fe", engine: "claude"})
if (!r.ok) throw new Error(r.error)
console.log("ready", await herdWait("fe", {states: ["idle"], timeout: "30s"}))
for (const word of ["alpha", "beta"]) {
  await herdPrompt("fe", "say", word)
  const st = await herdWait("fe", {timeout: "60s"})
  const screen = await herdRead("fe", {lines: 40})
  console.log(word, st, screen.includes("❯ say " + word), screen.includes("● say " + word))
}
`, e.fake)
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs := e.expect(0, script)
	for _, want := range []string{"ready idle", "alpha ", "beta "} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s\n%s", want, out, errs)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) != 4 || f[2] != "true" || f[3] != "true" {
			t.Errorf("after herdWait the turn's reply is on the screen: %q\nstderr: %s", line, errs)
		}
	}
}

func TestHerdScriptBuiltins(t *testing.T) {
	e := newHerdEnv(t)
	script := filepath.Join(e.home, "fan.mosh")
	src := `
const r = await herdRun(["/bin/sh"], {name: "s1"})
if (!r.ok) throw new Error("herdRun: " + r.error)
console.log("run", r.name, typeof r.pid)
const bad = await herdRun("/bin/sh", {name: "s1"})
console.log("dup", bad.ok, bad.code)
const p = await herdPrompt("s1", "echo", "from-script-$((3*4))")
console.log("prompt", p.ok)
console.log("list", JSON.stringify((await herdList()).map(m => [m.name, m.alive])))
let screen = ""
for (let i = 0; i < 300 && !screen.includes("from-script-12"); i++) {
  screen = await herdRead("s1", {lines: 10})
  await sleep(20)
}
console.log("read", screen.includes("from-script-12"))
try { await herdRead("ghost"); console.log("read-missing resolved") } catch (err) { console.log("read-missing", err.code) }
// A prompt is a claim of working for at most 1.5 s (herd/state: Tracker.Prompted); after it
// lapses a plain shell, which never draws a working marker, reads its screen again.
await sleep(2500)
try {
  await herdWait("s1", {states: ["working"], timeout: 200})
  console.log("no timeout?")
} catch (err) {
  console.log("timeout", err.code, err.outcome)
}
console.log("nothrow", await herdWait("s1", {states: ["working"], timeout: 100, nothrow: true}))
await herdRun(["/bin/sh", "-c", "exec cat"], {name: "s2"})
console.log("winner", await herdWait(["s1", "s2"], {any: true, states: ["idle", "unknown"], timeout: "20s"}))
console.log("keys", (await herdSendKeys("s2", "abc", "Enter")).ok)
console.log("kill", JSON.stringify(await herdKill("s2")))
try { await herdWait("s2", {states: ["working"], timeout: "5s"}); console.log("gone resolved") } catch (err) { console.log("gone", err.code) }
console.log("gone wanted", await herdWait("s2", {states: ["gone"], timeout: "5s"}))
try { herdPrompt("s1") } catch (err) { console.log("misuse", err.name, err.message.startsWith("herdPrompt(")) }
try { herdWait("Bad") } catch (err) { console.log("misuse", err.name) }
`
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs := e.expect(0, script)
	want := []string{
		"run s1 number",
		"dup false 1",
		"prompt true",
		`list [["s1",true]]`,
		"read true",
		"read-missing 3",
		"timeout 2 timeout",
		"nothrow",
		"winner s",
		"keys true",
		`kill {"ok":true,"killed":["s2"]}`,
		"gone 3",
		"gone wanted gone",
		"misuse TypeError true",
		"misuse TypeError",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("script output lacks %q\nstdout:\n%s\nstderr:\n%s", w, out, errs)
		}
	}

	// --dry-run narrates side effects and starts nothing.
	dry := filepath.Join(e.home, "dry.mosh")
	if err := os.WriteFile(dry, []byte(`
const r = await herdStart("claude", {name: "dryer"})
console.log("start", r.ok, r.dryRun, r.name)
console.log("wait", await herdWait("dryer"))
console.log("list", (await herdList()).some(m => m.name == "dryer"))
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs = e.expect(0, "--dry-run", dry)
	if !strings.Contains(out, "start true true dryer") || !strings.Contains(out, "wait idle") || !strings.Contains(out, "list false") {
		t.Fatalf("dry run:\nstdout: %s\nstderr: %s", out, errs)
	}
	if !strings.Contains(errs, "▶ herdStart(") {
		t.Fatalf("dry run narrates on stderr: %q", errs)
	}
}

// ---- terminal tests (through a real pty) ------------------------------------------------------

// ptyRun starts mosh on a pty and collects its output.
type ptyRun struct {
	cmd *exec.Cmd
	f   *os.File
	mu  sync.Mutex
	buf bytes.Buffer
	eof chan struct{}
}

func (e *herdEnv) startPty(args ...string) *ptyRun {
	e.t.Helper()
	cmd := exec.Command(e.mosh, args...)
	cmd.Env = e.env
	cmd.Dir = e.home
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
	if err != nil {
		e.t.Fatal(err)
	}
	p := &ptyRun{cmd: cmd, f: f, eof: make(chan struct{})}
	go func() {
		defer close(p.eof)
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			p.mu.Lock()
			p.buf.Write(b[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	e.t.Cleanup(func() { f.Close(); _ = cmd.Process.Kill() })
	return p
}

func (p *ptyRun) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

func (p *ptyRun) waitFor(t *testing.T, s string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%q on the terminal", s), func() (bool, string) {
		o := p.output()
		return strings.Contains(o, s), o
	})
}

// exit waits for the process and returns its exit code.
func (p *ptyRun) exit(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		<-p.eof
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatalf("mosh did not exit; terminal:\n%s", p.output())
		return -1
	}
}

func TestHerdAttachThroughPty(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "att", "--", "/bin/sh")
	e.ok("herd", "send-keys", "att", "echo before-attach", "Enter")
	eventually(t, "member output", func() (bool, string) {
		s := e.ok("herd", "read", "att")
		return strings.Contains(s, "\nbefore-attach"), s
	})

	p := e.startPty("attach", "att")
	p.waitFor(t, "detach with Ctrl-]")
	// The daemon redraws the member's screen on attach.
	p.waitFor(t, "before-attach")
	if m := findMember(e.ps(), "att"); m == nil || m.Attached != 1 {
		t.Fatalf("ps shows one attached client: %+v", m)
	}
	io.WriteString(p.f, "echo attached-$((5*5))\r")
	p.waitFor(t, "attached-25")
	// Input reaches the member itself (not only our terminal's echo).
	eventually(t, "typed command ran in the member", func() (bool, string) {
		s := e.ok("herd", "read", "att")
		return strings.Contains(s, "\nattached-25"), s
	})
	// Resize follows the terminal.
	if err := pty.Setsize(p.f, &pty.Winsize{Cols: 90, Rows: 25}); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGWINCH)
	eventually(t, "member follows the resize", func() (bool, string) {
		m := findMember(e.ps(), "att")
		return m != nil && m.Cols == 90 && m.Rows == 25, fmt.Sprintf("%+v", m)
	})
	p.f.Write([]byte{0x1d})
	if code := p.exit(t); code != 0 {
		t.Fatalf("detach: exit %d\n%s", code, p.output())
	}
	if !strings.Contains(p.output(), "detached from att") {
		t.Fatalf("detach message missing:\n%s", p.output())
	}
	// The daemon sees the attach connection close on its own time: wait for that, not a sleep.
	eventually(t, "the member runs on, detached", func() (bool, string) {
		m := findMember(e.ps(), "att")
		return m != nil && m.Alive && m.Attached == 0, fmt.Sprintf("%+v", m)
	})
	if m := findMember(e.ps(), "att"); m == nil || !m.Alive {
		t.Fatalf("the member keeps running after detach: %+v", m)
	}

	// Unknown member: 3. Not a terminal: 1 with the fix.
	if code := e.startPty("attach", "ghost").exit(t); code != 3 {
		t.Fatalf("attach ghost: exit %d, want 3", code)
	}
	_, errs := e.expect(1, "attach", "att")
	if !strings.Contains(errs, "terminal") || !strings.Contains(errs, "mosh herd read att") {
		t.Fatalf("attach without a terminal names the fix: %q", errs)
	}
}

func TestHerdPsOnATerminal(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "api", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "web", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "report", "web", "blocked:question")
	p := e.startPty("ps")
	if code := p.exit(t); code != 0 {
		t.Fatalf("ps on a terminal: exit %d", code)
	}
	out := p.output()
	for _, want := range []string{"NAME", "ENGINE", "STATE", "AUTHORITY", "SUBSTRATE", "blocked:question", "1 waiting on you — mosh attach web", "\x1b["} {
		if !strings.Contains(out, want) {
			t.Errorf("ps on a terminal lacks %q:\n%s", want, out)
		}
	}
	// NO_COLOR: the same table without escape sequences.
	e.env = append(e.env, "NO_COLOR=1")
	p = e.startPty("ps")
	p.exit(t)
	if out := p.output(); strings.Contains(out, "\x1b[") || !strings.Contains(out, "NAME") {
		t.Fatalf("ps with NO_COLOR:\n%q", out)
	}
}

// A daemon process that holds the herd's lock but no longer answers on its socket (an old daemon
// whose socket a temp cleaner removed, a wedged one) is named with its pid by `daemon stop`,
// `daemon status` and `doctor`, with the fix — not "no herd daemon is running". This test process
// plays the orphan (it is never sent --yes, which would end it).
func TestHerdDaemonStopNamesAnOrphanedDaemon(t *testing.T) {
	e := newHerdEnv(t)
	dir := filepath.Join(e.home, "herd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "daemon.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // releases the lock before the cleanup's `daemon stop --yes`
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	pid := fmt.Sprint(os.Getpid())
	if _, err := f.WriteString(pid + " serving\n"); err != nil {
		t.Fatal(err)
	}
	_, errs := e.expect(1, "herd", "daemon", "stop")
	if !strings.Contains(errs, "pid "+pid) || !strings.Contains(errs, "does not answer") || !strings.Contains(errs, "--yes") {
		t.Fatalf("daemon stop on an orphaned daemon: %q", errs)
	}
	if _, errs := e.expect(5, "herd", "daemon", "status"); !strings.Contains(errs, "pid "+pid) {
		t.Fatalf("daemon status on an orphaned daemon: %q", errs)
	}
	out, _ := e.expect(5, "herd", "doctor", "--json")
	var dr herd.DoctorResult
	if err := json.Unmarshal([]byte(out), &dr); err != nil || dr.OK || !strings.Contains(dr.Checks[0].Detail, "pid "+pid) || !strings.Contains(dr.Checks[0].Fix, "kill "+pid) {
		t.Fatalf("doctor on an orphaned daemon: %v %s", err, out)
	}
}

// `mosh herd interrupt NAME` asks the daemon to stop the member's turn (the engines table's
// Escape; Ctrl-C only while it still reads busy) and to close its task interrupted; the member
// lives on. The same daemon method serves A2A tasks/cancel (herd/a2aserve's tests).
func TestHerdInterruptStopsTheTurnNotTheMember(t *testing.T) {
	e := newHerdEnv(t)
	e.env = append(e.env, "FAKEENGINE_SLOW=60s", "FAKEENGINE_TICK=50ms")
	e.ok("herd", "run", "--name", "fe", "--engine", "claude", "--", e.fake)
	e.expect(0, "wait", "fe", "--state", "idle", "--timeout", "30s")
	var pr herd.PromptResult
	if err := json.Unmarshal([]byte(e.ok("herd", "prompt", "fe", "slow think it through", "--json")), &pr); err != nil || pr.Task == "" {
		t.Fatalf("prompt --json: %v %+v", err, pr)
	}
	e.expect(0, "wait", "fe", "--state", "working", "--timeout", "30s")
	var ir herd.InterruptResult
	out := e.ok("herd", "interrupt", "fe", "--json")
	if err := json.Unmarshal([]byte(out), &ir); err != nil || ir.Name != "fe" || ir.Task != pr.Task || ir.TaskState != "interrupted" ||
		len(ir.Keys) != 1 || ir.Keys[0] != "Escape" {
		t.Fatalf("interrupt --json: %v %s", err, out)
	}
	e.expect(0, "wait", "fe", "--state", "idle", "--timeout", "30s")
	var task herd.Task
	if err := json.Unmarshal([]byte(e.ok("herd", "task", pr.Task, "--json")), &task); err != nil || task.Open || task.State != "interrupted" {
		t.Fatalf("the interrupted task: %v %+v", err, task)
	}
	if m := findMember(e.ps(), "fe"); m == nil || !m.Alive {
		t.Fatalf("interrupt ended the member: %+v", m)
	}
	if _, errs := e.expect(3, "herd", "interrupt", "ghost"); !strings.Contains(errs, "no member named ghost") {
		t.Fatalf("interrupt ghost: %q", errs)
	}
	e.expect(1, "herd", "interrupt", "fe", "--grace", "soon")
}

// A new engine end to end, added as data only: `mosh herd hooks install gemini` writes
// ~/.gemini/settings.json from the engines table, the fake engine plays Gemini CLI from
// styles.json, the daemon classifies its screens with the gemini rules and takes its hooks
// (BeforeAgent, AfterAgent) as authoritative, and the task's answer is AfterAgent's
// prompt_response.
func TestHerdGeminiFromTheTable(t *testing.T) {
	e := newHerdEnv(t)
	// The hook commands run "${MOSH_HERD_BIN:-mosh}": this test's mosh is first on PATH.
	for i, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			e.env[i] = "PATH=" + filepath.Dir(e.mosh) + string(os.PathListSeparator) + v
		}
	}
	e.ok("herd", "hooks", "install", "gemini")
	if _, err := os.Stat(filepath.Join(e.home, ".gemini", "settings.json")); err != nil {
		t.Fatal(err)
	}
	e.ok("herd", "run", "--name", "gm", "--engine", "gemini", "--", e.fake, "--style", "gemini", "--turn", "300ms")
	e.ok("herd", "wait", "gm", "--state", "idle", "--timeout", "60")
	out := e.ok("herd", "prompt", "gm", "hello gemini", "--wait", "--state", "done", "--timeout", "60", "--json")
	var r struct {
		Task  string `json:"task"`
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.State != "done" || r.Task == "" {
		t.Fatalf("prompt --wait: %v %s", err, out)
	}
	var task struct {
		State    string `json:"state"`
		Artifact struct {
			Text   string `json:"text"`
			Source string `json:"source"`
		} `json:"artifact"`
		Transitions []struct {
			State     string `json:"state"`
			Authority string `json:"authority"`
		} `json:"transitions"`
	}
	// The task closes when the done report is recorded; read it once it has.
	out = e.ok("herd", "wait", "gm", "--state", "done,idle", "--timeout", "60")
	if err := json.Unmarshal([]byte(e.ok("herd", "task", r.Task, "--json")), &task); err != nil {
		t.Fatal(err)
	}
	if task.State != "done" || task.Artifact.Text != "hello gemini" || task.Artifact.Source != "hook" {
		t.Fatalf("task: %+v (wait said %s)", task, out)
	}
	hooked := false
	for _, tr := range task.Transitions {
		hooked = hooked || (tr.State == "done" && tr.Authority == "hook")
	}
	if !hooked {
		t.Fatalf("no done transition by a hook: %+v", task.Transitions)
	}
}

// `mosh herd doctor` names an installed engine older than its entry's minVersion: a fake gemini
// in $MOSH_HOME/bin prints 0.20.0 for --version, and the gemini entry needs 0.26.0.
func TestHerdDoctorOldEngine(t *testing.T) {
	e := newHerdEnv(t)
	bin := filepath.Join(e.home, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "gemini"), []byte("#!/bin/sh\necho 0.20.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, running := range []bool{false, true} { // the client's doctor, then the daemon's
		if running {
			e.ok("herd", "status")
		}
		out, errs, _ := e.run("herd", "doctor", "--json")
		var r struct {
			Checks []struct{ Name, Level, Detail, Fix string } `json:"checks"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errs)
		}
		found := false
		for _, c := range r.Checks {
			if c.Name == "engine versions" {
				found = true
				if c.Level != "warn" || !strings.Contains(c.Detail, "gemini 0.20.0") || !strings.Contains(c.Detail, "older than 0.26.0") || !strings.Contains(c.Fix, "upgrade gemini") {
					t.Errorf("daemon running %v: %+v", running, c)
				}
			}
		}
		if !found {
			t.Errorf("daemon running %v: no engine versions check in %s", running, out)
		}
	}
}
