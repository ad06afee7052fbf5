package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// hookDaemon listens on a herd's socket and records every request line; it answers each call
// with answer(id) ("" leaves the call unanswered).
type hookDaemon struct {
	lines  chan []byte
	mu     sync.Mutex
	answer func(id json.RawMessage) string
}

func (fd *hookDaemon) setAnswer(f func(id json.RawMessage) string) {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	fd.answer = f
}

func startHookDaemon(t *testing.T, home string) *hookDaemon {
	t.Helper()
	fd := &hookDaemon{lines: make(chan []byte, 64)}
	fd.setAnswer(func(id json.RawMessage) string {
		return herdtest.Result(id, `{"name":"x","accepted":true,"state":"working"}`)
	})
	herdtest.FakeDaemon(t, home, func(r herdtest.Request) string {
		fd.lines <- r.Line
		if len(r.ID) == 0 {
			return ""
		}
		fd.mu.Lock()
		defer fd.mu.Unlock()
		return fd.answer(r.ID)
	})
	return fd
}

// next is the next request line the daemon received.
func (fd *hookDaemon) next(t *testing.T) []byte {
	t.Helper()
	select {
	case l := <-fd.lines:
		return l
	case <-time.After(time.Minute):
		t.Fatal("the fake daemon received no request")
		return nil
	}
}

// none holds that no request line arrived (everything sent is sent before the call returns).
func (fd *hookDaemon) none(t *testing.T, what string) {
	t.Helper()
	select {
	case l := <-fd.lines:
		t.Fatalf("%s: a request reached the daemon: %s", what, l)
	default:
	}
}

// shortHome is a MOSH_HOME short enough for its socket (t.TempDir's can be too long).
func shortHome(t *testing.T) string {
	t.Helper()
	home, err := os.MkdirTemp("", "hp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// hookState is an in-process global state for home's herd, with env on top.
func hookState(t *testing.T, home, stdin string, env map[string]string) *testState {
	ts := newTestState(t, stdin)
	ts.Env = map[string]string{"HOME": filepath.Join(home, "elsewhere"), "MOSH_HOME": filepath.Join(home, "m"), "PATH": os.Getenv("PATH")}
	for k, v := range env {
		ts.Env[k] = v
	}
	return ts
}

// The request a hook's report sends, byte for byte: the line the daemon accepts
// (herd.ReportParams as encoding/json writes it: the payload compacted and HTML-escaped, the
// nonce only for the member the process runs in). main's fast path (hookReport) and the command
// tree send the same line for the same invocation.
func TestHookReportSendsTheRequestTheDaemonAccepts(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	fd := startHookDaemon(t, filepath.Join(home, "m"))
	const pre = `{"jsonrpc":"2.0","id":1,"method":"report","params":`
	for _, c := range []struct {
		name   string
		args   []string
		stdin  string
		env    map[string]string
		params string
	}{
		{name: "bare", args: []string{"herd", "report", "x", "working"},
			params: `{"name":"x","state":"working","ttlMs":900000}`},
		{name: "kind", args: []string{"herd", "report", "x", " Blocked:Permission "},
			params: `{"name":"x","state":"blocked","kind":"permission","ttlMs":900000}`},
		{name: "nonce of the member it runs in", args: []string{"herd", "report", "x", "done"},
			env:    map[string]string{"MOSH_HERD_NAME": "x", "MOSH_HERD_NONCE": "n-4f2a"},
			params: `{"name":"x","state":"done","ttlMs":900000,"nonce":"n-4f2a"}`},
		{name: "another member's name: no nonce", args: []string{"herd", "report", "x", "idle"},
			env:    map[string]string{"MOSH_HERD_NAME": "y", "MOSH_HERD_NONCE": "n-4f2a"},
			params: `{"name":"x","state":"idle","ttlMs":900000}`},
		{name: "payload on stdin", args: []string{"herd", "report", "x", "blocked:question", "--payload", "-"},
			stdin:  "{\"hook_event_name\": \"PermissionRequest\",\n  \"text\": \"<a & b> \u2028 é\"}\n",
			env:    map[string]string{"MOSH_HERD_NAME": "x", "MOSH_HERD_NONCE": "n-\"quoted\""},
			params: `{"name":"x","state":"blocked","kind":"question","ttlMs":900000,"payload":{"hook_event_name":"PermissionRequest","text":"\u003ca \u0026 b\u003e \u2028 é"},"nonce":"n-\"quoted\""}`},
		{name: "blank payload", args: []string{"herd", "report", "x", "working", "--payload", "-"}, stdin: " \n\t",
			params: `{"name":"x","state":"working","ttlMs":900000}`},
		{name: "herd dir of the member", args: []string{"herd", "report", "x", "unknown"},
			env:    map[string]string{"MOSH_HERD_DIR": filepath.Join(home, "m", "herd"), "MOSH_HOME": filepath.Join(home, "other")},
			params: `{"name":"x","state":"unknown","ttlMs":900000}`},
	} {
		want := pre + c.params + "}\n"
		ts := hookState(t, home, c.stdin, c.env)
		code, ok := hookReport(ts.globalState, c.args)
		if !ok || code != 0 || ts.stderr.String() != "" || ts.stdout.String() != "" {
			t.Fatalf("%s: fast path served %v, exit %d, stdout %q, stderr %q", c.name, ok, code, ts.stdout, ts.stderr)
		}
		if got := fd.next(t); string(got) != want {
			t.Errorf("%s: fast path sent\n%s\nwant\n%s", c.name, got, want)
		}
		ts = hookState(t, home, c.stdin, c.env)
		if code := execute(ts.globalState, c.args); code != 0 || ts.stderr.String() != "" {
			t.Fatalf("%s: command tree: exit %d: %s", c.name, code, ts.stderr)
		}
		if got := fd.next(t); string(got) != want {
			t.Errorf("%s: command tree sent\n%s\nwant\n%s", c.name, got, want)
		}
	}
}

// main's fast path takes only the hook's exact shape; everything else goes to the command tree.
// Within that shape, what the command tree refuses the fast path refuses with the same exit code
// and message, and sends nothing.
func TestHookReportTakesOnlyTheHooksShape(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	fd := startHookDaemon(t, filepath.Join(home, "m"))
	for _, args := range [][]string{
		{"herd", "report", "x", "working", "--json"},
		{"herd", "report", "x", "working", "--ttl", "5m"},
		{"herd", "report", "x", "working", "--dry-run"},
		{"herd", "report", "x", "working", "--payload=-"},
		{"herd", "report", "--payload", "-", "x", "working"},
		{"herd", "report", "-h"},
		{"herd", "report", "x"},
		{"herd", "report", "x", "working", "extra"},
		{"herd", "report", "-x", "working"},
		{"herd", "report", "x", "-working"},
		{"--timeout", "1s", "herd", "report", "x", "working"},
		{"herd", "ps", "--json"},
		{"report", "x", "working"},
	} {
		ts := hookState(t, home, "", nil)
		if _, ok := hookReport(ts.globalState, args); ok {
			t.Errorf("%q was taken by the fast path", args)
		}
		fd.none(t, strings.Join(args, " "))
	}

	for _, c := range []struct {
		args  []string
		stdin string
	}{
		{args: []string{"herd", "report", "X", "working"}},
		{args: []string{"herd", "report", "x", "gone"}},
		{args: []string{"herd", "report", "x", "idle:permission"}},
		{args: []string{"herd", "report", "x", "blocked:later"}},
		{args: []string{"herd", "report", "x", "working", "--payload", filepath.Join(home, "missing.json")}},
		{args: []string{"herd", "report", "x", "working", "--payload", "-"}, stdin: "not json"},
	} {
		fast := hookState(t, home, c.stdin, nil)
		code, ok := hookReport(fast.globalState, c.args)
		if !ok {
			t.Errorf("%q: not taken by the fast path", c.args)
			continue
		}
		tree := hookState(t, home, c.stdin, nil)
		want := execute(tree.globalState, c.args)
		if code != want || code == 0 || fast.stderr.String() != tree.stderr.String() || fast.stdout.String() != "" {
			t.Errorf("%q: fast path exit %d %q, command tree exit %d %q", c.args, code, fast.stderr, want, tree.stderr)
		}
		fd.none(t, strings.Join(c.args, " "))
	}

	// A hook fired outside the herd: nothing, silently.
	ts := hookState(t, home, "{}", nil)
	if code, ok := hookReport(ts.globalState, []string{"herd", "report", "", "working", "--payload", "-"}); !ok || code != 0 || ts.stderr.String() != "" {
		t.Errorf("empty name: served %v, exit %d, %q", ok, code, ts.stderr)
	}
	fd.none(t, "empty name")

	// No daemon: the report is dropped silently.
	ts = hookState(t, home, "", map[string]string{"MOSH_HOME": filepath.Join(home, "none")})
	if code, ok := hookReport(ts.globalState, []string{"herd", "report", "x", "working"}); !ok || code != 0 || ts.stderr.String() != "" {
		t.Errorf("no daemon: served %v, exit %d, %q", ok, code, ts.stderr)
	}
}

// A daemon that answers an error, or none at all: the report says so with the command tree's
// exit code and message; a silent daemon does not hold the hook past the report's deadline.
func TestHookReportUnhappyDaemons(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	fd := startHookDaemon(t, filepath.Join(home, "m"))
	args := []string{"herd", "report", "x", "working"}

	fd.setAnswer(func(id json.RawMessage) string {
		return herdtest.Error(id, `{"code":-32602,"message":"no member x"}`)
	})
	fast := hookState(t, home, "", nil)
	code, ok := hookReport(fast.globalState, args)
	fd.next(t)
	tree := hookState(t, home, "", nil)
	want := execute(tree.globalState, args)
	fd.next(t)
	if !ok || code != want || code == 0 || fast.stderr.String() != tree.stderr.String() || !strings.Contains(fast.stderr.String(), "no member x") {
		t.Errorf("an error answer: fast path %v exit %d %q, command tree exit %d %q", ok, code, fast.stderr, want, tree.stderr)
	}

	fd.setAnswer(func(json.RawMessage) string { return "" })
	silent := hookState(t, home, "", nil)
	code, ok = hookReport(silent.globalState, args)
	fd.next(t)
	if !ok || code != exitcode.Timeout || !strings.Contains(silent.stderr.String(), "deadline") {
		t.Errorf("a silent daemon: served %v, exit %d, %q", ok, code, silent.stderr)
	}
}

// A verb whose standard output is a pipe closed at the other end dies of SIGPIPE, as any program
// writing to os.Stdout does.
func TestVerbOnAClosedPipeDiesOfSIGPIPE(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	home := shortHome(t)
	herdtest.FakeDaemon(t, filepath.Join(home, "m"), func(r herdtest.Request) string {
		return herdtest.Result(r.ID, `{"members":[{"name":"a","state":"idle"}]}`)
	})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(moshBin, "ps", "--json")
	cmd.Env = []string{"HOME=" + home, "MOSH_HOME=" + filepath.Join(home, "m"), "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	err = cmd.Run()
	w.Close()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
		t.Errorf("%v, want death by SIGPIPE\n%s", err, stderr.String())
	}
}
