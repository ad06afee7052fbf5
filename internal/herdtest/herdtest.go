// Package herdtest is the test set-up the herd's adapters share: a test binary that doubles as
// the herd daemon, the fake engine built once and put on PATH as "claude", and a fake daemon
// socket that answers request lines as a test says. Tests only; never imported by a program.
package herdtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/herdd"
	"github.com/mosh-dev/mosh/herd/state"
)

// ServeDaemonIfAsked makes a test binary double as the herd daemon: herd.Connect starts
// `<exe> herd daemon --foreground`. Call it first in TestMain; when the binary was started that
// way it serves the herd and exits, otherwise it returns.
//
// The daemon hands its members its own binary as MOSH_HERD_BIN, so a hook command fired in a
// member runs this binary too: as `herd report NAME STATE --payload -` it reports as mosh does;
// as any other herd verb it exits 1 (never running the test suite inside a hook).
func ServeDaemonIfAsked() {
	if len(os.Args) == 7 && os.Args[1] == "herd" && os.Args[2] == "report" && os.Args[5] == "--payload" {
		os.Exit(report(os.Args[3], os.Args[4]))
	}
	if len(os.Args) > 1 && os.Args[1] == "herd" && !(len(os.Args) == 4 && os.Args[2] == "daemon" && os.Args[3] == "--foreground") {
		fmt.Fprintf(os.Stderr, "this test binary stands in for mosh only as `herd daemon --foreground` and `herd report NAME STATE --payload -`, not %q\n", os.Args[1:])
		os.Exit(1)
	}
	if len(os.Args) != 4 || os.Args[1] != "herd" || os.Args[2] != "daemon" || os.Args[3] != "--foreground" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := herdd.Serve(ctx, "")
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(int(exitcode.Of(err)))
	}
	os.Exit(0)
}

// report is `mosh herd report NAME STATE --payload -` with the payload on stdin, to the herd of
// MOSH_HERD_DIR; like mosh's, it prints nothing and exits 0 whatever happens.
func report(name, stateArg string) int {
	payload, _ := io.ReadAll(os.Stdin)
	if name == "" {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: filepath.Dir(os.Getenv("MOSH_HERD_DIR")), NoStart: true})
	if err != nil {
		return 0
	}
	defer c.Close()
	st, kind, _ := strings.Cut(stateArg, ":")
	_, _ = c.Report(ctx, name, st, kind, 0, json.RawMessage(payload))
	return 0
}

// FakeEngine is herd/fakeengine built into a temporary directory, once per test binary.
type FakeEngine struct {
	Dir string // the directory that holds the binary (RemoveAll it after m.Run)
	Err error  // why it could not be built; tests that need it fail with it
}

// Path is the fake engine's executable.
func (f FakeEngine) Path() string { return filepath.Join(f.Dir, "fakeengine") }

// BuildFakeEngine builds herd/fakeengine into a new temporary directory named after pattern.
// Call it from TestMain; a failure is kept in Err for the tests that need the engine.
func BuildFakeEngine(pattern string) FakeEngine {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return FakeEngine{Err: err}
	}
	return BuildFakeEngineIn(dir)
}

// BuildFakeEngineIn builds herd/fakeengine into dir (which the caller removes).
func BuildFakeEngineIn(dir string) FakeEngine {
	f := FakeEngine{Dir: dir}
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", f.Path(), "github.com/mosh-dev/mosh/herd/fakeengine").CombinedOutput()
	if err != nil {
		f.Err = fmt.Errorf("go build ./herd/fakeengine: %v\n%s", err, out)
	}
	return f
}

// AsClaude writes, in bin, a "claude" that runs the fake engine (dropping the engine's own
// flags, --dangerously-skip-permissions among them, which the fake does not take) and an empty
// settings.json, and returns the members' environment for it: the FAKEENGINE_ variables that
// make a turn quick, with slow as a slow turn's length ("60s"). bin goes first on PATH.
func (f FakeEngine) AsClaude(t testing.TB, bin, slow string) []string {
	t.Helper()
	if f.Err != nil {
		t.Fatal(f.Err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nexec '" + f.Path() + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(bin, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"hooks":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "FAKEENGINE_TURN=200ms", "FAKEENGINE_TICK=50ms",
		"FAKEENGINE_SLOW=" + slow, "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0", "FAKEENGINE_SETTINGS=" + settings}
}

// AsClaudeWithHooks is AsClaude with the herd's own hook commands in the fake engine's settings
// (HookSettings).
func (f FakeEngine) AsClaudeWithHooks(t testing.TB, bin, slow string) []string {
	t.Helper()
	env := f.AsClaude(t, bin, slow)
	HookSettings(t, filepath.Join(bin, "settings.json"))
	return env
}

// HookSettings writes, at path, fake-engine settings (FAKEENGINE_SETTINGS) holding the herd's own
// hook commands (state.HookCommand, as `mosh herd hooks install claude` writes them) for
// UserPromptSubmit, Stop and StopFailure. They run "${MOSH_HERD_BIN:-mosh}", the daemon's binary:
// a test binary that calls ServeDaemonIfAsked answers their `herd report`.
func HookSettings(t testing.TB, path string) {
	t.Helper()
	groups := map[string]any{}
	for ev, report := range map[string]string{"UserPromptSubmit": "working", "Stop": "done", "StopFailure": "done"} {
		groups[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": state.HookCommand(report)}}}}
	}
	b, err := json.Marshal(map[string]any{"hooks": groups})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Request is one request line a fake daemon received.
type Request struct {
	Line   []byte
	ID     json.RawMessage
	Method string
}

// FakeDaemon listens on the herd socket of home and hands every request line to answer, which
// returns the whole response line (without the newline; "" answers nothing). Notifications (no
// id) reach answer too, with an empty ID. It stops when the test ends.
func FakeDaemon(t testing.TB, home string, answer func(Request) string) {
	t.Helper()
	ln := Listen(t, home)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					var req struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					_ = json.Unmarshal(line, &req)
					if out := answer(Request{Line: line, ID: req.ID, Method: req.Method}); out != "" {
						if _, err := conn.Write([]byte(out + "\n")); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
}

// Listen listens on the herd socket of home, as a stand-in daemon does (the caller closes it).
func Listen(t testing.TB, home string) net.Listener {
	t.Helper()
	sock := herd.SocketPath(home)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Result is a response line carrying result (a JSON value) for the request id.
func Result(id json.RawMessage, result string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
}

// Error is a response line carrying the error object errObj for the request id.
func Error(id json.RawMessage, errObj string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + errObj + `}`
}
