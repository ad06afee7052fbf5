// Package gradient holds the herd's reading of the DigitalOcean Gradient ADK dev server against
// the real thing: `gradient agent run` is uvicorn serving the agent's app in-process, so the
// member here is a `gradient` program that does exactly that with Debian's python3-uvicorn,
// serving a tiny ASGI app, driven through the real mosh binary and daemon.
//
// It lives in conformance, not herd, because it runs a third-party program the repository does
// not build (like conformance/engines); herd's own tests stay hermetic. It skips when uvicorn is
// missing unless MOSH_UVICORN_REQUIRED is set (.ci/run sets it, so CI fails instead).
package gradient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/internal/fakeherd"
)

// app is the agent: POST/GET /run answers like an ADK entrypoint, /boom raises.
const app = `import json

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            m = await receive()
            if m["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif m["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["path"] == "/boom":
        raise RuntimeError("the model call failed")
    body = json.dumps({"output": "hello"}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
`

// gradientCmd is `gradient agent run [--dev]` as the ADK does it (direct_launch_service): a
// banner, then uvicorn.run("main:app") in-process, with reload under --dev.
const gradientCmd = `import os, sys

def main():
    args = sys.argv[1:]
    if args[:2] != ["agent", "run"]:
        print("test gradient: only 'agent run' is here", file=sys.stderr)
        sys.exit(2)
    port = int(os.environ["GRADIENT_TEST_PORT"])
    dev = "--dev" in args
    if dev:
        print("Entrypoint: main.py")
        print(f"Server: http://127.0.0.1:{port}")
        print("Agent: test-agent")
        print("Auto-reload enabled - server will restart on file changes")
    else:
        print("Starting test-agent...")
        print(f"Server will be accessible at http://127.0.0.1:{port}")
    print("Press Ctrl+C to stop the server", flush=True)
    sys.path.insert(0, os.getcwd())
    import uvicorn
    uvicorn.run("main:app", host="127.0.0.1", port=port, reload=dev, reload_dirs=[os.getcwd()] if dev else None)

if __name__ == "__main__":
    main()
`

// uvicornPython finds a Python that imports uvicorn (Debian's python3-uvicorn is for
// /usr/bin/python3, which need not be the first python3 on PATH).
func uvicornPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		p, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if err := exec.Command(p, "-c", "import uvicorn").Run(); err == nil {
			return p
		}
		tried = append(tried, p)
	}
	msg := fmt.Sprintf("no Python with uvicorn (tried %v): apt-get install -y python3-uvicorn", tried)
	if os.Getenv("MOSH_UVICORN_REQUIRED") != "" {
		t.Fatal(msg + " (MOSH_UVICORN_REQUIRED is set)")
	}
	t.Skip(msg + " (set MOSH_UVICORN_REQUIRED=1 to fail instead)")
	return ""
}

type herdEnv struct {
	t    *testing.T
	mosh string
	env  []string
}

func (h *herdEnv) run(args ...string) (string, string, int) {
	h.t.Helper()
	cmd := exec.Command(h.mosh, args...)
	cmd.Env = h.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		h.t.Fatalf("mosh %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func (h *herdEnv) ok(args ...string) string {
	h.t.Helper()
	out, errs, code := h.run(args...)
	if code != 0 {
		h.t.Fatalf("mosh %s: exit %d\nstdout: %s\nstderr: %s\nscreen:\n%s", strings.Join(args, " "), code, out, errs, h.screen(args))
	}
	return out
}

// screen is the member's screen, for failure messages.
func (h *herdEnv) screen(args []string) string {
	for _, a := range args {
		if a == "agent" || a == "dev" {
			out, _, _ := h.run("herd", "read", a, "--lines", "60")
			return out
		}
	}
	return ""
}

// waitState is `mosh wait NAME --state S`: the daemon's state event, no polling here.
func (h *herdEnv) waitState(name, state string) {
	h.t.Helper()
	h.ok("wait", name, "--state", state, "--timeout", "120s")
}

// rule is the screen rule that decided the member's state.
func (h *herdEnv) rule(name string) (state, rule, decided string) {
	h.t.Helper()
	var ex struct {
		State   string `json:"state"`
		Decided string `json:"decided"`
		Screen  struct {
			Rule string `json:"rule"`
		} `json:"screen"`
	}
	out := h.ok("herd", "explain", name, "--json")
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		h.t.Fatalf("explain --json: %v\n%s", err, out)
	}
	return ex.State, ex.Screen.Rule, ex.Decided
}

// states is the member's state history.
func (h *herdEnv) states(name string) []string {
	h.t.Helper()
	var log struct {
		Transitions []struct {
			State string `json:"state"`
		} `json:"transitions"`
	}
	out := h.ok("herd", "log", name, "--json")
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		h.t.Fatalf("log --json: %v\n%s", err, out)
	}
	var s []string
	for _, tr := range log.Transitions {
		s = append(s, tr.State)
	}
	return s
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func get(t *testing.T, method, url string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(`{"prompt":"hi"}`))
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

var build struct {
	once sync.Once
	mosh string
	err  error
}

// moshBinary builds mosh once for the package's tests.
func moshBinary(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "mosh-gradient-bin")
		if err != nil {
			build.err = err
			return
		}
		root, _ := filepath.Abs("../..")
		gobin := filepath.Join(goruntime.GOROOT(), "bin", "go")
		cmd := exec.Command(gobin, "build", "-o", filepath.Join(dir, "mosh"), "./cmd/mosh")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build mosh: %v\n%s", err, out)
			return
		}
		build.mosh = filepath.Join(dir, "mosh")
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.mosh
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.mosh != "" {
		os.RemoveAll(filepath.Dir(build.mosh))
	}
	os.Exit(code)
}

// newHerd puts mosh and the gradient command (run by py) in a directory of their own and returns
// a private herd's environment.
func newHerd(t *testing.T, py string) *herdEnv {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(moshBinary(t), filepath.Join(bin, "mosh")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "gradient"), []byte("#!"+py+"\n"+gradientCmd), 0o755); err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp("", "mg") // short: the daemon's socket lives inside
	if err != nil {
		t.Fatal(err)
	}
	env, err := fakeherd.Env(home, bin)
	if err != nil {
		t.Fatal(err)
	}
	h := &herdEnv{t: t, mosh: filepath.Join(bin, "mosh"), env: append(env, "TERM=xterm-256color")}
	t.Cleanup(func() {
		_, _, _ = h.run("herd", "daemon", "stop", "--yes")
		os.RemoveAll(home)
	})
	return h
}

func appDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.py"), []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func noWorking(t *testing.T, states []string) {
	t.Helper()
	for _, s := range states {
		if s == "working" {
			t.Fatalf("the dev server has no working rule, yet its history reads working: %v", states)
		}
	}
}

// The dev server as a member: idle once uvicorn serves, idle after a request, blocked on the
// traceback of a request that raised, idle again once a request succeeds — never working.
func TestDevServerMember(t *testing.T) {
	py := uvicornPython(t)
	h := newHerd(t, py)
	port := freePort(t)
	h.env = append(h.env, fmt.Sprintf("GRADIENT_TEST_PORT=%d", port))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	h.ok("herd", "run", "--name", "agent", "--cwd", appDir(t), "--", "gradient", "agent", "run")
	h.waitState("agent", "idle")
	var ms []struct {
		Name, Engine, State, Authority string
	}
	if err := json.Unmarshal([]byte(h.ok("ps", "--json")), &ms); err != nil || len(ms) != 1 ||
		ms[0].Engine != "gradient" || ms[0].State != "idle" || ms[0].Authority != "screen" {
		t.Fatalf("ps --json: %+v %v", ms, err)
	}
	if st, rule, why := h.rule("agent"); st != "idle" || rule != "gradient.idle.server" {
		t.Fatalf("started: %s by %s (%s)", st, rule, why)
	}

	if code := get(t, http.MethodPost, base+"/run"); code != 200 {
		t.Fatalf("POST /run: %d", code)
	}
	if code := get(t, http.MethodGet, base+"/boom"); code != 500 {
		t.Fatalf("GET /boom: %d", code)
	}
	h.waitState("agent", "blocked")
	if st, rule, why := h.rule("agent"); st != "blocked" || rule != "gradient.blocked.traceback" {
		t.Fatalf("after the traceback: %s by %s (%s)", st, rule, why)
	}
	if screen := h.ok("herd", "read", "agent", "--lines", "40"); !strings.Contains(screen, "RuntimeError: the model call failed") {
		t.Fatalf("the traceback is on the screen for whoever attaches:\n%s", screen)
	}

	if code := get(t, http.MethodPost, base+"/run"); code != 200 {
		t.Fatalf("POST /run after the failure: %d", code)
	}
	h.waitState("agent", "idle")
	if st, rule, why := h.rule("agent"); st != "idle" || rule != "gradient.idle.server" || !strings.Contains(why, "POST /run HTTP/1.1") || !strings.Contains(why, "200 OK") {
		t.Fatalf("served again: %s by %s (%s)", st, rule, why)
	}
	states := h.states("agent")
	noWorking(t, states)
	if got := strings.Join(states, ","); !strings.Contains(got, "idle,blocked,idle") {
		t.Fatalf("history %v, want idle → blocked → idle", states)
	}
}

// The dev loop with --dev (uvicorn's reloader): an edit that breaks the import reads blocked
// while the reloader waits, the fix reads idle when the restart completes.
func TestDevServerReload(t *testing.T) {
	py := uvicornPython(t)
	h := newHerd(t, py)
	port := freePort(t)
	h.env = append(h.env, fmt.Sprintf("GRADIENT_TEST_PORT=%d", port))
	dir := appDir(t)
	mainPy := filepath.Join(dir, "main.py")

	h.ok("herd", "run", "--name", "dev", "--cwd", dir, "--", "gradient", "agent", "run", "--dev")
	h.waitState("dev", "idle")

	// The reloader compares modification times it recorded after its last restart; each write
	// below is stamped later than anything before it so it cannot go unseen.
	stamp := time.Now()
	write := func(body string) {
		t.Helper()
		stamp = stamp.Add(2 * time.Second)
		if err := os.WriteFile(mainPy, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(mainPy, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	write(app + "\ndef broken(:\n")
	h.waitState("dev", "blocked")
	if st, rule, why := h.rule("dev"); st != "blocked" || rule != "gradient.blocked.traceback" || !strings.Contains(why, "SyntaxError") {
		t.Fatalf("broken edit: %s by %s (%s)", st, rule, why)
	}

	// The fix. uvicorn 0.17's reloader forgets the times it knew when it restarts, so a write
	// that lands between its restart and its next look is missed: write again until the
	// restart completes (each attempt waits for the daemon's state event).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		write(app)
		_, _, code := h.run("wait", "dev", "--state", "idle", "--timeout", "5s")
		if code == 0 {
			break
		}
		if code != 2 || time.Now().After(deadline) {
			t.Fatalf("the fixed app never read idle (wait exit %d):\n%s", code, h.screen([]string{"dev"}))
		}
	}
	if st, rule, why := h.rule("dev"); st != "idle" || rule != "gradient.idle.server" || !strings.Contains(why, "Application startup complete") {
		t.Fatalf("after the fix: %s by %s (%s)", st, rule, why)
	}
	noWorking(t, h.states("dev"))
}
