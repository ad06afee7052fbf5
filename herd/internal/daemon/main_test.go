package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// The test binary doubles as the daemon (Connect runs `<exe> herd daemon --foreground`) and as
// the "other user" probe of TestOtherUserCannotConnect.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "herd" && os.Args[2] == "daemon" && os.Args[3] == "--foreground" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		err := ServeForeground(ctx, "")
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(int(exitcode.Of(err)))
		}
		os.Exit(0)
	}
	if sock := os.Getenv("MOSH_HERD_TEST_PROBE"); sock != "" {
		os.Exit(probeSocket(sock))
	}
	if os.Getenv(holdLockEnv) != "" {
		os.Exit(holdLockMain())
	}
	if os.Getenv("MOSH_HERD_TEST_HOOK") == "1" {
		os.Exit(hookReport(os.Getenv("MOSH_HERD_NAME"), ""))
	}
	// The daemon hands members its own binary as MOSH_HERD_BIN, and here that is this test
	// binary: it answers the installed hook command (`herd report NAME STATE --payload -`) as
	// mosh does.
	if len(os.Args) == 7 && os.Args[1] == "herd" && os.Args[2] == "report" && os.Args[5] == "--payload" {
		os.Exit(hookReport(os.Args[3], os.Args[4]))
	}
	if len(os.Args) > 1 && os.Args[1] == "herd" {
		// Run as some other mosh verb: never the whole test suite in a hook.
		fmt.Fprintf(os.Stderr, "this test binary stands in for mosh only as `herd daemon --foreground` and `herd report NAME STATE --payload -`, not %q\n", os.Args[1:])
		os.Exit(1)
	}
	if os.Getenv(racyChildEnv) == "1" {
		os.Exit(racyChild())
	}
	// Daemons started by the tests (this binary, started through Connect, which passes GORACE
	// on) write any data race they hit to raceDir instead of a stderr nobody reads, and skip
	// the race detector's 1 s sleep at exit (DaemonStop waits for the process to end). A report
	// there fails the run.
	raceDir, err := os.MkdirTemp("", "mosh-race")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0 log_path="+filepath.Join(raceDir, "race")))
	// helper state's fake engine, built once for the tests that drive it; not when fuzzing
	// (.ci/fuzz), where no test drives it.
	flag.Parse()
	if flag.Lookup("test.fuzz").Value.String() == "" {
		fakeBin, fakeErr = buildFakeEngine()
	}
	code := m.Run()
	if fakeBin != "" {
		os.RemoveAll(filepath.Dir(fakeBin))
	}
	if reports := raceReports(raceDir); reports != "" {
		fmt.Fprintf(os.Stderr, "FAIL: a daemon started by the tests hit a data race:\n%s", reports)
		code = 1
	}
	os.RemoveAll(raceDir)
	os.Exit(code)
}

// raceReports returns what the race detector wrote to dir (GORACE log_path=dir/race makes one
// race.PID file per process that found a race), "" when nothing.
func raceReports(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "race*"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", f, err)
			continue
		}
		fmt.Fprintf(&b, "== %s\n%s\n", f, data)
	}
	return b.String()
}

// racyChildEnv makes this binary a process with a deliberate data race
// (TestDaemonRaceFailsTheRun).
const racyChildEnv = "MOSH_HERD_TEST_RACY"

func racyChild() int {
	x := 0
	done := make(chan struct{})
	go func() { x++; close(done) }()
	x++
	<-done
	return x - 2 // 0
}

// probeSocket is run as another user: 0 when it could not use the daemon, 1 when it could.
func probeSocket(sock string) int {
	conn, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial refused:", err)
		return 0
	}
	defer conn.Close()
	if err := rawCall(conn, herd.MethodList, nil); err != nil {
		fmt.Fprintln(os.Stderr, "request refused:", err)
		return 0
	}
	return 1
}

// rawCall sends one JSON-RPC request on conn and reads its response line, without a client:
// what another user's process or a client that does not wait for the answer's effect does.
func rawCall(conn net.Conn, method string, params any) error {
	_ = conn.SetDeadline(time.Now().Add(testTimeout))
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return err
	}
	resp, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return err
	}
	var r struct {
		Error *herd.RPCError `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return err
	}
	if r.Error != nil {
		return errors.New(r.Error.Message)
	}
	return nil
}

// testTimeout bounds every blocking step so a broken daemon fails the test instead of hanging it.
// It is a safety net, not an assertion about speed.
const testTimeout = 30 * time.Second

type herdT struct {
	t     testing.TB
	home  string
	c     *herd.Client
	ctx   context.Context
	asker string
}

// newHerd gives the test a private MOSH_HOME (short path: the socket lives inside) and a client
// whose Connect starts a daemon; cleanup stops it.
func newHerd(t *testing.T) *herdT {
	t.Helper()
	return newHerdWith(t, nil)
}

// newHerdWith is newHerd with files written into the herd directory before the daemon starts
// (an engines.json override, say).
func newHerdWith(t *testing.T, files map[string]string) *herdT {
	t.Helper()
	return startHerd(t, files, false)
}

// newParallelHerd is newHerd for a test that runs in parallel with the others (it calls
// t.Parallel): the daemon and the members launched through h.c get HOME and MOSH_HOME from the
// client's Options.Env, not from the process environment, which such a test must neither set
// nor read (no t.Setenv, no os.Environ in members' env, no herd.Connect without h.env).
func newParallelHerd(t *testing.T) *herdT {
	t.Helper()
	return newParallelHerdWith(t, nil)
}

// newParallelHerdWith is newParallelHerd with files written into the herd directory first.
func newParallelHerdWith(t *testing.T, files map[string]string) *herdT {
	t.Helper()
	t.Parallel()
	return startHerd(t, files, true)
}

// homeEnv is this process's environment with HOME and MOSH_HOME set to home and nothing that
// names another herd.
func homeEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "MOSH_HOME", "MOSH_HERD_NAME", "MOSH_HERD_DIR", herd.EnvNonce:
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "MOSH_HOME="+home)
}

func startHerd(t *testing.T, files map[string]string, parallel bool) *herdT {
	t.Helper()
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	dir := herd.HerdDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts := herd.ConnectOptions{Home: home}
	if parallel {
		opts.Env = homeEnv(home)
	} else {
		t.Setenv("HOME", home)
		t.Setenv("MOSH_HOME", home)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	c, err := herd.Connect(ctx, opts)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	h := &herdT{t: t, home: home, c: c, ctx: ctx}
	t.Cleanup(func() {
		stopDaemon(home)
		c.Close()
		cancel()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(home, "herd", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
		os.RemoveAll(home)
	})
	return h
}

// stopDaemon stops whatever daemon serves home and waits until its socket stops answering.
func stopDaemon(home string) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	if err != nil {
		return
	}
	_, _ = c.DaemonStop(ctx, true)
	select {
	case <-c.Done():
	case <-ctx.Done():
	}
	c.Close()
}

// askerShell is /bin/sh under another name. The engines table reads a member run as "sh" with
// the shell's rules (an idle prompt only); under a name it does not know, a member gets the
// shared rules, which also see [y/n] questions as blocked — what these scripts draw.
func askerShell(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "asker")
	if err := os.Symlink("/bin/sh", p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *herdT) run(name string, script string) *herd.Member {
	h.t.Helper()
	if h.asker == "" {
		h.asker = askerShell(h.t)
	}
	m, err := h.c.Run(h.ctx, herd.RunParams{Name: name, Argv: []string{h.asker, "-c", script}})
	if err != nil {
		h.t.Fatalf("run %s: %v", name, err)
	}
	return m
}

// wait waits for one member to reach one of states.
func (h *herdT) wait(name string, states ...string) *herd.WaitResult {
	h.t.Helper()
	r, err := h.c.Wait(h.ctx, []string{name}, herd.WaitOptions{States: states, Timeout: testTimeout})
	if err != nil {
		h.t.Fatalf("wait %s for %v: %v (result %+v)", name, states, err, r)
	}
	return r
}

func (h *herdT) read(name string) string {
	h.t.Helper()
	r, err := h.c.Read(h.ctx, name, 200)
	if err != nil {
		h.t.Fatalf("read %s: %v", name, err)
	}
	return r.Screen
}

func (h *herdT) member(name string) herd.Member {
	h.t.Helper()
	ms, err := h.c.List(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	h.t.Fatalf("%s not in list %+v", name, ms)
	return herd.Member{}
}

func wantCode(t testing.TB, err error, code exitcode.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error with exit code %d, got nil", code)
	}
	if got := exitcode.Of(err); got != code {
		var e *exitcode.Error
		errors.As(err, &e)
		t.Fatalf("want exit code %d, got %d: %v", code, got, err)
	}
}

// hookReport is the test binary acting as an engine hook (what `mosh herd report` does for a
// Claude Code hook): the payload on stdin, the member's name from MOSH_HERD_NAME, and the
// engine's hook spec maps the event to a state. A hook never fails its engine: always exit 0.
func hookReport(name, stateArg string) int {
	payload, _ := io.ReadAll(os.Stdin)
	if name == "" {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The herd that owns the member, as `mosh herd report` finds it: MOSH_HERD_DIR is $MOSH_HOME/herd.
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: filepath.Dir(os.Getenv("MOSH_HERD_DIR")), NoStart: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "hook:", err)
		return 0
	}
	defer c.Close()
	st, kind, _ := strings.Cut(stateArg, ":")
	if _, err := c.Report(ctx, name, st, kind, 0, json.RawMessage(payload)); err != nil {
		fmt.Fprintln(os.Stderr, "hook:", err)
	}
	return 0
}

// TestDaemonRaceFailsTheRun: a race in a process this test binary starts (a daemon, here a
// deliberately racy child run with the GORACE the daemons get) is written under the run's race
// directory, where TestMain finds it and fails the run. Needs -race.
func TestDaemonRaceFailsTheRun(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs go test -race")
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), racyChildEnv+"=1", "GORACE=atexit_sleep_ms=0 log_path="+filepath.Join(dir, "race"))
	out, _ := cmd.CombinedOutput() // a race makes it exit 66; the report is what counts
	rep := raceReports(dir)
	if !strings.Contains(rep, "WARNING: DATA RACE") {
		t.Fatalf("the racy child left no race report under %s (output %q)", dir, out)
	}
	if raceReports(t.TempDir()) != "" {
		t.Error("an empty race directory reads as a race")
	}
}
