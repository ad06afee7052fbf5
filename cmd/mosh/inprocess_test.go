package main

// In-process CLI tests: execute() with an injected globalState (buffers, an env map, a fake
// signal source), asserting exit codes without a subprocess.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader on different goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testState struct {
	*globalState
	stdout, stderr *syncBuffer
	signals        chan chan<- os.Signal
	exited         chan int
}

func newTestState(t *testing.T, stdin string) *testState {
	t.Helper()
	home := t.TempDir()
	ts := &testState{stdout: &syncBuffer{}, stderr: &syncBuffer{}, signals: make(chan chan<- os.Signal, 1), exited: make(chan int, 1)}
	ts.globalState = &globalState{
		Stdout: ts.stdout, Stderr: ts.stderr, Stdin: strings.NewReader(stdin),
		Env:          map[string]string{"HOME": home, "MOSH_HOME": filepath.Join(home, "mosh"), "PATH": os.Getenv("PATH")},
		Getwd:        os.Getwd,
		SignalNotify: func(c chan<- os.Signal, _ ...os.Signal) { ts.signals <- c },
		SignalStop:   func(chan<- os.Signal) {},
		Exit:         func(code int) { ts.exited <- code },
	}
	return ts
}

func TestInProcessExitCodes(t *testing.T) {
	cases := []struct {
		args   []string
		stdin  string
		code   exitcode.Code
		stdout string
		stderr string
	}{
		{args: []string{"-e", "console.log('hi', argv)", "a"}, stdout: "hi [ 'a' ]\n"},
		{args: []string{"-e", "exit(7)"}, code: 7},
		{args: []string{"-e", "null.x"}, code: exitcode.Script},
		{args: []string{"--bogus"}, code: exitcode.Usage, stderr: "mosh: unknown flag: --bogus (see 'mosh --help')\n"},
		{args: []string{"no/such.mosh"}, code: exitcode.Usage, stderr: "mosh: no/such.mosh: no such file\n"},
		{args: []string{"commands", "extra"}, code: exitcode.Usage, stderr: "mosh: mosh commands takes no arguments (got \"extra\")\n"},
		{args: []string{"-"}, stdin: "console.log(1 + 1)", stdout: "2\n"},
		{args: nil, stdin: "console.log('no tty: stdin is the script')", stdout: "no tty: stdin is the script\n"},
		{args: []string{"--timeout", "50ms", "-e", "await sleep(10000)"}, code: exitcode.Timeout, stderr: "mosh: script timed out after 50ms\n"},
		{args: []string{"--dry-run", "-e", "const r = await sh('rm -rf /'); console.log(r.dryRun)"}, stdout: "true\n", stderr: "  ▶ sh(\"rm -rf /\") → would run\n"},
	}
	for _, c := range cases {
		ts := newTestState(t, c.stdin)
		code := execute(ts.globalState, c.args)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", c.args, code, c.code, ts.stderr.String())
			continue
		}
		if c.code != exitcode.Script && (ts.stdout.String() != c.stdout || ts.stderr.String() != c.stderr) {
			t.Errorf("%q:\n stdout %q want %q\n stderr %q want %q", c.args, ts.stdout.String(), c.stdout, ts.stderr.String(), c.stderr)
		}
	}
}

func TestInProcessCtrlC(t *testing.T) {
	ts := newTestState(t, "")
	codec := make(chan exitcode.Code, 1)
	go func() { codec <- execute(ts.globalState, []string{"-e", "console.log('ready'); await sleep(60000)"}) }()
	sig := <-ts.signals
	for !strings.Contains(ts.stdout.String(), "ready") {
		time.Sleep(5 * time.Millisecond)
	}
	sig <- os.Interrupt
	select {
	case code := <-codec:
		if code != exitcode.Interrupted || ts.stderr.String() != "mosh: interrupted\n" {
			t.Fatalf("exit %d stderr %q", code, ts.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ctrl-C did not end the run")
	}
}

func TestScanArgs(t *testing.T) {
	cases := map[string]struct {
		eval, help bool
		words      string
	}{
		"hello.mosh a b":             {words: "hello.mosh"},
		"--max 5 hello.mosh --max 9": {words: "hello.mosh"},
		"--timeout=2s -e code run":   {eval: true},
		"-e code":                    {eval: true},
		"-econsole.log(1)":           {eval: true},
		"herd wait api --any":        {words: "herd wait"},
		"herd --json":                {words: "herd"},
		"--help":                     {help: true},
		"-- -weird-file.mosh x":      {words: "-weird-file.mosh"},
		"- a b":                      {words: "-"},
		"--dry-run new hi --force":   {words: "new"},
		"help greet":                 {words: "help"},
		"":                           {},
	}
	for in, want := range cases {
		inv := scanArgs(strings.Fields(in))
		if inv.eval != want.eval || inv.help != want.help || strings.Join(inv.words, " ") != want.words {
			t.Errorf("scanArgs(%q) = %+v, want %+v", in, inv, want)
		}
	}
}

// BenchmarkBuildCommandTree is the CLI's share of start-up for `mosh -e 0` with 0 and 200 user
// verbs: building the command tree must not read the scripts.
func BenchmarkBuildCommandTree(b *testing.B) {
	for _, n := range []int{0, 200} {
		b.Run(fmt.Sprintf("verbs=%d", n), func(b *testing.B) {
			home := b.TempDir()
			dir := filepath.Join(home, "scripts")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < n; i++ {
				src := fmt.Sprintf("// summary: verb %d\n// @flag n int 1 count\nconsole.log(%d)\n", i, i)
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("v%03d.mosh", i)), []byte(src), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			gs := &globalState{Env: map[string]string{"MOSH_HOME": home}, Stdout: io.Discard, Stderr: io.Discard, Getwd: os.Getwd}
			for b.Loop() {
				newRootCommand(gs, []string{"-e", "0"})
			}
		})
	}
	// What other invocations build: one herd verb (every hook's report), and the whole tree
	// (help and listings).
	for _, args := range []string{"herd report x working", "help"} {
		b.Run(args, func(b *testing.B) {
			gs := &globalState{Env: map[string]string{"MOSH_HOME": b.TempDir()}, Stdout: io.Discard, Stderr: io.Discard, Getwd: os.Getwd}
			for b.Loop() {
				newRootCommand(gs, strings.Fields(args))
			}
		})
	}
}

// BenchmarkEvalInProcess is `mosh -e 0` without process start-up: flags, tree, VM, builtins.
func BenchmarkEvalInProcess(b *testing.B) {
	home := b.TempDir()
	for b.Loop() {
		gs := &globalState{
			Env: map[string]string{"MOSH_HOME": home}, Stdout: io.Discard, Stderr: io.Discard, Stdin: strings.NewReader(""),
			Getwd: os.Getwd, SignalNotify: func(chan<- os.Signal, ...os.Signal) {}, SignalStop: func(chan<- os.Signal) {},
		}
		if code := execute(gs, []string{"-e", "0"}); code != 0 {
			b.Fatal(code)
		}
	}
}
