package repl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/exitcode"
)

// The pty test runs this test binary as the REPL process: TestMain sees the variable and runs a
// REPL on the real terminal instead of the tests.
const childEnv = "MOSH_REPL_TEST_CHILD_HISTORY"

func TestMain(m *testing.M) {
	if hist := os.Getenv(childEnv); hist != "" {
		err := Run(context.Background(), Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, HistoryPath: hist})
		if err != nil && !exitcode.IsSilent(err) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(int(exitcode.Of(err)))
	}
	os.Exit(m.Run())
}

// term drives a REPL child through the master side of a pty.
type ptyTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	buf  bytes.Buffer
	mark int // expect searches output after this offset
	eof  chan struct{}
}

// expectWait bounds how long a test waits for output that should come at once; it only keeps a
// broken REPL from hanging the suite (nothing is timed).
const expectWait = 20 * time.Second

func startREPL(t *testing.T, history string) *ptyTerm {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+history, "TERM=xterm", "HOME="+filepath.Dir(history))
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatalf("starting the REPL on a pty: %v", err)
	}
	tm := &ptyTerm{t: t, cmd: cmd, ptmx: ptmx, eof: make(chan struct{})}
	go func() {
		defer close(tm.eof)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			tm.mu.Lock()
			tm.buf.Write(b[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = ptmx.Close()
	})
	return tm
}

func (tm *ptyTerm) send(s string) {
	tm.t.Helper()
	if _, err := tm.ptmx.Write([]byte(s)); err != nil {
		tm.t.Fatalf("typing %q: %v", s, err)
	}
}

// expect waits until want appears in the output after the last match, and moves past it.
func (tm *ptyTerm) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(expectWait)
	for {
		tm.mu.Lock()
		out := tm.buf.String()
		tm.mu.Unlock()
		if i := strings.Index(out[tm.mark:], want); i >= 0 {
			tm.mark += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waited for %q; output after the last match:\n%q\nwhole transcript:\n%q", want, out[tm.mark:], out)
		}
		select {
		case <-tm.eof:
			tm.mu.Lock()
			out = tm.buf.String()
			tm.mu.Unlock()
			if !strings.Contains(out[tm.mark:], want) {
				tm.t.Fatalf("the REPL ended before printing %q; output after the last match:\n%q", want, out[tm.mark:])
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (tm *ptyTerm) wait() int {
	tm.t.Helper()
	done := make(chan error, 1)
	go func() { done <- tm.cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			tm.t.Fatalf("waiting for the REPL: %v", err)
		}
		return 0
	case <-time.After(expectWait):
		tm.t.Fatalf("the REPL did not exit")
		return -1
	}
}

func TestREPLOnPty(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process on a pty")
	}
	dir, err := os.MkdirTemp("", "moshrepl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	history := filepath.Join(dir, "state", "repl_history")

	tm := startREPL(t, history)
	tm.expect(".help for help") // the banner names .help
	tm.expect("> ")

	// Multi-line input: an open brace asks for more with the continuation prompt.
	tm.send("function f() {\r")
	tm.expect("... ")
	tm.send("return 40 + 2\r")
	tm.expect("... ")
	tm.send("}\r")
	tm.expect("undefined")
	tm.send("f()\r")
	tm.expect("\n42\r")

	// Promise results are awaited; top-level await works.
	// (Results are computed so that the echo of the input cannot match them.)
	tm.send("Promise.resolve(7 * 11)\r")
	tm.expect("\n77\r")
	tm.send("await new Promise(r => setTimeout(() => r(21 * 3), 20))\r")
	tm.expect("\n63\r")
	tm.expect("> ")

	// Ctrl-C at the prompt clears the line.
	tm.send("this is not javascript")
	tm.expect("this is not javascript") // echoed by the editor: its raw mode is on
	tm.send("\x03")
	tm.expect("^C")
	tm.send("1 + 2\r")
	tm.expect("\n3\r")

	// Ctrl-C during an evaluation interrupts it, and the session goes on.
	tm.send("console.log('spin' + 'ning'); while (true) {}\r")
	tm.expect("\nspinning\r")
	tm.send("\x03")
	tm.expect("Interrupted")
	tm.expect("> ")
	tm.send("'still ' + 'alive'\r")
	tm.expect("'still alive'")
	tm.expect("> ")

	// Tab completes a property of a global.
	tm.send("console.lo\t")
	tm.expect("console.log")
	tm.send("('tab-' + 'completed')\r")
	tm.expect("\ntab-completed\r")
	tm.expect("> ")

	// Ctrl-D on an empty line leaves.
	tm.send("\x04")
	if os.Getenv("MOSH_SHOW_TRANSCRIPT") != "" {
		t.Logf("%q", tm.buf.String())
	}
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code after Ctrl-D: %d", code)
	}

	st, err := os.Stat(history)
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("history mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(history)
	for _, want := range []string{"function f() { return 40 + 2 }\n", "f()\n", "console.log('tab-' + 'completed')\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("history lacks %q:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "this is not javascript") {
		t.Errorf("a line cleared with Ctrl-C was recorded:\n%s", data)
	}

	// A new session reloads the history: Up recalls the last input.
	tm2 := startREPL(t, history)
	tm2.expect("> ")
	tm2.send("\x1b[A")
	tm2.expect("console.log('tab-' + 'completed')")
	tm2.send("\r")
	tm2.expect("tab-completed")
	tm2.send("exit(4)\r")
	if code := tm2.wait(); code != 4 {
		t.Fatalf("exit code after exit(4): %d", code)
	}
}
