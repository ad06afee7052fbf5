package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"0.mosh/early/hookpath"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// hookDaemon listens on a herd's socket and records every request line; it answers each call
// with answer(id) (a success answer unless the test says otherwise).
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

type hookCase struct {
	name  string
	args  []string
	stdin string
	env   map[string]string // besides HOME and MOSH_HOME
}

func hookCases(payloadFile string) []hookCase {
	return []hookCase{
		{name: "bare", args: []string{"herd", "report", "x", "working"}},
		{name: "kind", args: []string{"herd", "report", "x", " blocked:permission "}},
		{name: "nonce of the member it runs in", args: []string{"herd", "report", "x", "done"},
			env: map[string]string{"MOSH_HERD_NAME": "x", "MOSH_HERD_NONCE": "n-4f2a"}},
		{name: "another member's name: no nonce", args: []string{"herd", "report", "x", "idle"},
			env: map[string]string{"MOSH_HERD_NAME": "y", "MOSH_HERD_NONCE": "n-4f2a"}},
		{name: "payload on stdin", args: []string{"herd", "report", "x", "blocked:question", "--payload", "-"},
			stdin: "{\"hook_event_name\": \"PermissionRequest\",\n  \"text\": \"<a & b> \u2028 é\"}\n",
			env:   map[string]string{"MOSH_HERD_NAME": "x", "MOSH_HERD_NONCE": "n-\"quoted\""}},
		{name: "blank payload", args: []string{"herd", "report", "x", "working", "--payload=-"}, stdin: " \n\t"},
		{name: "payload file", args: []string{"herd", "report", "--payload", payloadFile, "x", "done"}},
		{name: "herd dir of the member", args: []string{"herd", "report", "x", "unknown"},
			env: map[string]string{"MOSH_HERD_DIR": "HERD_DIR"}},
	}
}

// The hook fast path and the ordinary command line send byte-identical report requests for the
// same invocation, nonce and payload included: one definition (0.mosh/early/reportreq) builds both.
func TestHookPathSendsTheOrdinaryRequest(t *testing.T) {
	home := shortHome(t)
	fd := startHookDaemon(t, filepath.Join(home, "m"))
	payloadFile := filepath.Join(home, "payload.json")
	if err := os.WriteFile(payloadFile, []byte(`[1, {"tool": "Bash"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range hookCases(payloadFile) {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"HOME": filepath.Join(home, "elsewhere"), "MOSH_HOME": filepath.Join(home, "m"), "PATH": os.Getenv("PATH")}
			// Client.Report reads the nonce from the process environment.
			t.Setenv("MOSH_HERD_NAME", "")
			t.Setenv("MOSH_HERD_NONCE", "")
			for k, v := range c.env {
				if v == "HERD_DIR" {
					v = filepath.Join(home, "m", "herd")
					env["MOSH_HOME"] = filepath.Join(home, "other")
				}
				env[k] = v
				t.Setenv(k, v)
			}
			ts := newTestState(t, c.stdin)
			ts.Env = env
			if code := execute(ts.globalState, c.args); code != 0 {
				t.Fatalf("ordinary path: exit %d: %s", code, ts.stderr.String())
			}
			ordinary := fd.next(t)

			hookpath.Stdin = nil
			code, ok := hookpath.Serve(c.args, func(k string) string { return env[k] }, strings.NewReader(c.stdin))
			if !ok || code != 0 {
				t.Fatalf("fast path: served %v, exit %d", ok, code)
			}
			fast := fd.next(t)
			if !bytes.Equal(fast, ordinary) {
				t.Fatalf("requests differ:\nordinary %s\nfast     %s", ordinary, fast)
			}
			var req struct {
				Method string `json:"method"`
				Params struct {
					Name    string          `json:"name"`
					Nonce   string          `json:"nonce"`
					Payload json.RawMessage `json:"payload"`
					TTLMs   int64           `json:"ttlMs"`
				} `json:"params"`
			}
			if err := json.Unmarshal(fast, &req); err != nil || req.Method != "report" || req.Params.Name != "x" || req.Params.TTLMs != 900000 {
				t.Fatalf("not a report request: %v: %s", err, fast)
			}
			if c.env["MOSH_HERD_NAME"] == "x" && req.Params.Nonce != c.env["MOSH_HERD_NONCE"] {
				t.Errorf("nonce %q, want %q", req.Params.Nonce, c.env["MOSH_HERD_NONCE"])
			}
			if c.env["MOSH_HERD_NAME"] != "x" && req.Params.Nonce != "" {
				t.Errorf("nonce %q sent for another member", req.Params.Nonce)
			}
			if strings.TrimSpace(c.stdin) != "" || strings.Contains(strings.Join(c.args, " "), payloadFile) {
				if len(req.Params.Payload) == 0 {
					t.Errorf("payload lost: %s", fast)
				}
			} else if len(req.Params.Payload) != 0 {
				t.Errorf("payload %s from nowhere", req.Params.Payload)
			}
		})
	}
}

// Anything that is not exactly the hook's shape, or that the daemon does not accept, is handed
// back untouched to the ordinary path (which says what is wrong), with what was read from stdin.
func TestHookPathHandsBackEverythingElse(t *testing.T) {
	home := shortHome(t)
	fd := startHookDaemon(t, filepath.Join(home, "m"))
	env := map[string]string{"HOME": home, "MOSH_HOME": filepath.Join(home, "m")}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		args  []string
		stdin string
	}{
		{args: []string{"herd", "report", "x", "working", "--json"}},
		{args: []string{"herd", "report", "x", "working", "--ttl", "5m"}},
		{args: []string{"herd", "report", "x", "working", "--dry-run"}},
		{args: []string{"herd", "report", "-h"}},
		{args: []string{"herd", "report", "x"}},
		{args: []string{"herd", "report", "x", "working", "extra"}},
		{args: []string{"herd", "report", "X", "working"}},
		{args: []string{"herd", "report", "x", "gone"}},
		{args: []string{"herd", "report", "x", "idle:permission"}},
		{args: []string{"herd", "report", "x", "blocked:later"}},
		{args: []string{"herd", "report", "x", "working", "--payload", "-", "--payload", "-"}},
		{args: []string{"herd", "report", "x", "working", "--payload="}},
		{args: []string{"herd", "report", "x", "working", "--payload", filepath.Join(home, "missing.json")}},
		{args: []string{"herd", "report", "x", "working", "--payload", "-"}, stdin: "not json"},
		{args: []string{"herd", "ps", "--json"}},
		{args: []string{"report", "x", "working"}},
	} {
		hookpath.Stdin = nil
		if _, ok := hookpath.Serve(c.args, getenv, strings.NewReader(c.stdin)); ok {
			t.Errorf("%q was served by the fast path", c.args)
		}
		fd.none(t, strings.Join(c.args, " "))
		if c.stdin != "" && string(hookpath.Stdin) != c.stdin {
			t.Errorf("%q: stdin handed over as %q, want %q", c.args, hookpath.Stdin, c.stdin)
		}
	}
	hookpath.Stdin = nil

	// A hook fired outside the herd: nothing, silently, as the ordinary path.
	if code, ok := hookpath.Serve([]string{"herd", "report", "", "working", "--payload", "-"}, getenv, strings.NewReader("{}")); !ok || code != 0 {
		t.Errorf("empty name: served %v, exit %d", ok, code)
	}
	fd.none(t, "empty name")

	// Off, and with a relative MOSH_HOME (which needs the working directory).
	for _, e := range []map[string]string{{"MOSH_NO_HOOKPATH": "1"}, {"MOSH_HOME": "rel"}} {
		get := func(k string) string {
			if v, ok := e[k]; ok {
				return v
			}
			return env[k]
		}
		if _, ok := hookpath.Serve([]string{"herd", "report", "x", "working"}, get, strings.NewReader("")); ok {
			t.Errorf("%v: served", e)
		}
		fd.none(t, "off")
	}

	// An error answer: the request went, but the ordinary path says what is wrong.
	fd.setAnswer(func(id json.RawMessage) string {
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32602,"message":"no member x"}}`
	})
	if _, ok := hookpath.Serve([]string{"herd", "report", "x", "working"}, getenv, strings.NewReader("")); ok {
		t.Error("an error answer was taken for success")
	}
	fd.next(t)

	// No daemon at all.
	noDaemon := map[string]string{"HOME": home, "MOSH_HOME": filepath.Join(home, "none")}
	if _, ok := hookpath.Serve([]string{"herd", "report", "x", "working"}, func(k string) string { return noDaemon[k] }, strings.NewReader("")); ok {
		t.Error("served with no daemon")
	}
}

// The binary answers the hook's report before any heavy package initialises (goja, esbuild, the
// VT emulator, sqlite, cobra, herd), and sends what the ordinary path sends; with
// MOSH_NO_HOOKPATH=1 everything initialises (the trace is trustworthy) and the ordinary path
// sends the same bytes.
func TestHookPathSkipsTheHeavyInits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	home := shortHome(t)
	fd := startHookDaemon(t, filepath.Join(home, "m"))
	run := func(extra ...string) string {
		cmd := exec.Command(moshBin, "herd", "report", "x", "blocked:permission", "--payload", "-")
		cmd.Env = append([]string{"HOME=" + home, "MOSH_HOME=" + filepath.Join(home, "m"), "PATH=" + os.Getenv("PATH"),
			"GODEBUG=inittrace=1", "MOSH_HERD_NAME=x", "MOSH_HERD_NONCE=n-77"}, extra...)
		cmd.Stdin = strings.NewReader("{\"hook_event_name\":\"PermissionRequest\",\n\"tool\":\"<Bash>\"}")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.Len() != 0 {
			t.Fatalf("%v: %v, stdout %q\n%s", extra, err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stderr.String(), "init runtime ") {
			t.Fatalf("%v: no init trace:\n%s", extra, stderr.String())
		}
		return stderr.String()
	}
	heavy := []string{"github.com/dop251/goja ", "github.com/evanw/esbuild/pkg/api ", "github.com/charmbracelet/x/vt ",
		"github.com/spf13/cobra ", "github.com/mattn/go-sqlite3 ", "github.com/mosh-dev/mosh/herd ",
		// What initialised first while the fast path's import path sorted after github.com/dlclark…
		// (cmd/mosh/internal/hookpath) and it imported encoding/json: packages that sort before
		// it and were ready, now behind it (early/README.md).
		"encoding/gob ", "encoding/json ", "compress/flate ", "flag ", "crypto/internal/fips140/rsa ",
		"github.com/dlclark/regexp2/v2/syntax ", "github.com/mattn/go-runewidth "}
	trace := run()
	for _, h := range heavy {
		if strings.Contains(trace, "init "+h) {
			t.Errorf("%s was initialised for a hook report", strings.TrimSpace(h))
		}
	}
	fast := fd.next(t)
	trace = run("MOSH_NO_HOOKPATH=1")
	for _, h := range []string{"github.com/dop251/goja ", "github.com/spf13/cobra "} {
		if !strings.Contains(trace, "init "+h) {
			t.Errorf("the ordinary path's trace lacks %s:\n%s", h, trace)
		}
	}
	if ordinary := fd.next(t); !bytes.Equal(fast, ordinary) {
		t.Errorf("the binary's requests differ:\nordinary %s\nfast     %s", ordinary, fast)
	}

	// An error answer: the fast path hands over, with the payload it read from stdin, and the
	// ordinary path sends the same request again and reports the error as it always does.
	fd.setAnswer(func(id json.RawMessage) string {
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32602,"message":"invalid params: no such thing"}}`
	})
	cmd := exec.Command(moshBin, "herd", "report", "x", "blocked:permission", "--payload", "-")
	cmd.Env = []string{"HOME=" + home, "MOSH_HOME=" + filepath.Join(home, "m"), "PATH=" + os.Getenv("PATH"), "MOSH_HERD_NAME=x", "MOSH_HERD_NONCE=n-77"}
	cmd.Stdin = strings.NewReader("{\"hook_event_name\":\"PermissionRequest\",\n\"tool\":\"<Bash>\"}")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), "no such thing") {
		t.Errorf("an error answer: %v, output %q", err, out)
	}
	for i := 0; i < 2; i++ {
		if again := fd.next(t); !bytes.Equal(again, fast) {
			t.Errorf("request %d after an error answer differs:\n%s\nwant %s", i+1, again, fast)
		}
	}
}

// rawInit says whether the fast path runs on raw system calls here (early/sys): its init is then
// the first after the runtime's.
func rawInit(goos, goarch string) bool {
	return goos == "linux" && (goarch == "amd64" || goarch == "arm64")
}

// The fast path's place in Go's init order holds while everything it imports sorts early or has
// no init work. On linux/amd64 and linux/arm64 (early/sys) it imports nothing whose init runs
// after the runtime's: only the runtime's own closure, unsafe, unicode/utf8, math/bits and the
// early module. Elsewhere it keeps os and syscall, but nothing outside the standard library and
// the early module, and none of the standard packages that wait behind encoding/gob (early/README.md).
func TestHookPathImportsOnlyEarlyPackages(t *testing.T) {
	deps := func(goos, goarch string, pkgs ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s/%s: %v\n%s", goos, goarch, err, out)
		}
		return strings.Fields(string(out))
	}
	for _, p := range [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"linux", "386"}, {"darwin", "arm64"}, {"windows", "amd64"}} {
		goos, goarch := p[0], p[1]
		if rawInit(goos, goarch) {
			allowed := map[string]bool{"unsafe": true, "unicode/utf8": true, "math/bits": true}
			for _, d := range deps(goos, goarch, "runtime") {
				allowed[d] = true
			}
			for _, d := range deps(goos, goarch, "0.mosh/early/hookpath") {
				if !allowed[d] && !strings.HasPrefix(d, "0.mosh/early/") {
					t.Errorf("%s/%s: 0.mosh/early/hookpath imports %s: its init would no longer be the first after the runtime's", goos, goarch, d)
				}
			}
			continue
		}
		late := map[string]bool{"encoding/json": true, "fmt": true, "reflect": true, "encoding/gob": true, "flag": true, "log": true}
		for _, d := range deps(goos, goarch, "0.mosh/early/hookpath") {
			first, _, _ := strings.Cut(d, "/")
			if late[d] || (strings.Contains(first, ".") && !strings.HasPrefix(d, "0.mosh/early/")) {
				t.Errorf("%s/%s: 0.mosh/early/hookpath imports %s: its init would wait behind the packages that sort before that one", goos, goarch, d)
			}
		}
	}
}

// On linux/amd64 and linux/arm64 the fast path's init is the first init after the runtime's
// (GODEBUG=inittrace=1): before syscall, time, os and every package that sorts before them.
func TestHookPathRunsFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	if !rawInit(runtime.GOOS, runtime.GOARCH) {
		t.Skipf("%s/%s: the fast path runs once os is initialised", runtime.GOOS, runtime.GOARCH)
	}
	home := shortHome(t)
	// No daemon: the fast path hands the report back, so its own init line is printed, and the
	// ordinary path runs after it.
	cmd := exec.Command(moshBin, "herd", "report", "x", "working")
	cmd.Env = []string{"HOME=" + home, "MOSH_HOME=" + filepath.Join(home, "m"), "PATH=" + os.Getenv("PATH"), "GODEBUG=inittrace=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run() // the exit code is the ordinary path's (no daemon); the trace is what is looked at
	var inits []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	rt := slices.Index(inits, "runtime")
	if rt < 0 || rt+1 >= len(inits) {
		t.Fatalf("no init trace after the runtime's:\n%s", stderr.String())
	}
	if inits[rt+1] != "0.mosh/early/hookpath" {
		t.Errorf("the init after the runtime's is %s, want 0.mosh/early/hookpath; the order:\n%s", inits[rt+1], strings.Join(inits[:min(len(inits), rt+8)], "\n"))
	}
	for _, p := range inits[:rt] {
		if !strings.HasPrefix(p, "internal/") {
			t.Errorf("%s initialised before the runtime", p)
		}
	}
}

// Reading the payload from stdin keeps the io.Reader contract: short reads, data with the end of
// input, an error after some data (handed back, with what was read in Stdin).
func TestHookPathReadsStdinAsAnyReader(t *testing.T) {
	home := shortHome(t)
	fd := startHookDaemon(t, filepath.Join(home, "m"))
	env := map[string]string{"HOME": home, "MOSH_HOME": filepath.Join(home, "m")}
	getenv := func(k string) string { return env[k] }
	payload := `{"hook_event_name":"Stop","text":"<a & b>"}`
	args := []string{"herd", "report", "x", "done", "--payload", "-"}
	if _, ok := hookpath.Serve(args, getenv, strings.NewReader(payload)); !ok {
		t.Fatal("not served")
	}
	want := fd.next(t)
	for name, r := range map[string]io.Reader{
		"one byte at a time":  iotest.OneByteReader(strings.NewReader(payload)),
		"data with the end":   iotest.DataErrReader(strings.NewReader(payload)),
		"half then a timeout": iotest.TimeoutReader(iotest.HalfReader(strings.NewReader(payload))),
	} {
		hookpath.Stdin = nil
		_, ok := hookpath.Serve(args, getenv, r)
		if name == "half then a timeout" {
			if ok || len(hookpath.Stdin) == 0 || !strings.HasPrefix(payload, string(hookpath.Stdin)) {
				t.Errorf("%s: served %v, stdin handed over %q", name, ok, hookpath.Stdin)
			}
			fd.none(t, name)
			continue
		}
		if !ok {
			t.Errorf("%s: not served", name)
			continue
		}
		if l := fd.next(t); !bytes.Equal(l, want) {
			t.Errorf("%s: sent %s, want %s", name, l, want)
		}
	}
	hookpath.Stdin = nil
}

// The early module's assembly (early/sys, linux/amd64 and linux/arm64) and its standard-library
// fallback (every other platform) are compiled only where they are built; CI runs on linux/amd64.
// go vet type-checks each platform's files and checks the assembly's frame offsets against the Go
// declarations (asmdecl), so an arm64 or darwin break shows here, not on a user's machine.
func TestEarlyModuleVetsOnEveryPlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("go vet of the early module for five platforms")
	}
	for _, p := range [][2]string{{"linux", "arm64"}, {"linux", "386"}, {"darwin", "arm64"}, {"darwin", "amd64"}, {"windows", "amd64"}} {
		cmd := exec.Command("go", "vet", "./...")
		cmd.Dir = filepath.Join("..", "..", "early")
		cmd.Env = append(os.Environ(), "GOOS="+p[0], "GOARCH="+p[1], "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go vet ./... in early/ for %s/%s: %v\n%s", p[0], p[1], err, out)
		}
	}
}
