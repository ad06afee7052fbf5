//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"0.mosh/early/hookpath"
	"0.mosh/early/sys"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// signalStorm sends the runtime's preemption signal (SIGURG) to the calling goroutine's thread,
// locked to it, in a loop until the returned stop is called; stop returns how many were sent.
// A raw system call does not tell the scheduler it blocks, so sysmon does exactly this to it.
func signalStorm(t *testing.T) (stop func() int64) {
	t.Helper()
	runtime.LockOSThread()
	prev := runtime.GOMAXPROCS(0)
	if prev < 2 {
		runtime.GOMAXPROCS(2) // the sender needs a P while the raw call holds this one
	}
	pid, tid := syscall.Getpid(), syscall.Gettid()
	var sent atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if syscall.Tgkill(pid, tid, syscall.SIGURG) == nil {
				sent.Add(1)
			}
			runtime.Gosched()
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		runtime.UnlockOSThread()
		runtime.GOMAXPROCS(prev)
		return sent.Load()
	}
}

func nonblockingPair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return fds[0], fds[1]
}

// A deadline is a deadline: a read that nothing answers, and a write that nothing reads, end at
// their deadline with ETIMEDOUT while preemption signals interrupt them all the time (each EINTR
// computes the time left again; none restarts the wait).
func TestEarlySysDeadlinesHoldUnderSignals(t *testing.T) {
	a, _ := nonblockingPair(t)
	stop := signalStorm(t)
	end := sys.Monotonic() + 300e6
	n, e := sys.ReadDeadline(a, make([]byte, 64), end)
	after := sys.Monotonic()
	big := make([]byte, 16<<20)
	we := sys.WriteAll(a, big, sys.Monotonic()+300e6)
	sent := stop()
	if n != 0 || e != sys.ETIMEDOUT {
		t.Errorf("a read nothing answers: %d bytes, %v; want ETIMEDOUT", n, e)
	}
	if after < end {
		t.Errorf("the read ended %d ns before its deadline", end-after)
	}
	if we != sys.ETIMEDOUT {
		t.Errorf("a write nothing reads: %v; want ETIMEDOUT", we)
	}
	if sent == 0 {
		t.Error("no signal was sent: the test proves nothing")
	}
	t.Logf("%d signals", sent)
}

// Short reads and the end of input: what is there is read, 0 is the end, EAGAIN is not an error
// to ReadWait's caller when there is data.
func TestEarlySysReadsToTheEnd(t *testing.T) {
	a, b := nonblockingPair(t)
	if _, err := syscall.Write(b, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if n, e := sys.ReadWait(a, buf); n != 3 || e != 0 || string(buf) != "hel" {
		t.Fatalf("first read: %d %v %q", n, e, buf[:n])
	}
	if n, e := sys.ReadDeadline(a, buf, sys.Monotonic()+60e9); n != 2 || e != 0 || string(buf[:2]) != "lo" {
		t.Fatalf("second read: %d %v %q", n, e, buf[:n])
	}
	if n, e := sys.Read(a, buf); e != sys.EAGAIN {
		t.Fatalf("nothing to read on a nonblocking socket: %d %v, want EAGAIN", n, e)
	}
	syscall.Shutdown(b, syscall.SHUT_WR)
	if n, e := sys.ReadDeadline(a, buf, sys.Monotonic()+60e9); n != 0 || e != 0 {
		t.Fatalf("after the peer's shutdown: %d %v, want the end (0, no error)", n, e)
	}
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, bytes.Repeat([]byte("0123456789"), 1000), 0o600)
	if got, ok := sys.ReadFile(f, 1<<20); !ok || len(got) != 10000 {
		t.Errorf("ReadFile: %d bytes, %v", len(got), ok)
	}
	if _, ok := sys.ReadFile(f, 9999); ok {
		t.Error("ReadFile read more than its bound")
	}
	if _, ok := sys.ReadFile(filepath.Join(t.TempDir(), "missing"), 1<<20); ok {
		t.Error("ReadFile of a missing file")
	}
	if _, e := sys.DialUnix(filepath.Join(t.TempDir(), "none.sock"), sys.Monotonic()+60e9); e == 0 {
		t.Error("DialUnix to no listener succeeded")
	}
	if _, e := sys.DialUnix("/"+strings.Repeat("x", 120), sys.Monotonic()+60e9); e != sys.ENAMETOOLONG {
		t.Errorf("DialUnix to a path too long: %v", e)
	}
}

// The arguments and environment come from /proc/self: the same as os.Args and os.Getenv, an
// empty argument kept, the first definition of a variable winning; when /proc cannot be read (or
// holds something else) the invocation is handed back.
func TestEarlyInvocationFromProc(t *testing.T) {
	args, getenv, ok := hookpath.FromProc(sys.ReadFile)
	if !ok {
		t.Fatal("/proc/self could not be read")
	}
	if !slicesEqual(args, os.Args) {
		t.Errorf("args %q, os.Args %q", args, os.Args)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if getenv(k) != os.Getenv(k) {
			t.Errorf("getenv(%q) = %q, os.Getenv %q", k, getenv(k), os.Getenv(k))
		}
	}
	fake := func(cmdline, environ string, okCmd, okEnv bool) func(string, int) ([]byte, bool) {
		return func(p string, _ int) ([]byte, bool) {
			switch p {
			case "/proc/self/cmdline":
				return []byte(cmdline), okCmd
			case "/proc/self/environ":
				return []byte(environ), okEnv
			}
			t.Fatalf("read %s", p)
			return nil, false
		}
	}
	args, getenv, ok = hookpath.FromProc(fake("mosh\x00herd\x00report\x00\x00idle\x00", "A=1\x00B\x00A=2\x00MOSH_HOME=/h=x\x00\x00", true, true))
	if !ok || !slicesEqual(args, []string{"mosh", "herd", "report", "", "idle"}) || getenv("A") != "1" || getenv("B") != "" ||
		getenv("MOSH_HOME") != "/h=x" || getenv("MOSH") != "" {
		t.Errorf("parsed %q, A=%q B=%q MOSH_HOME=%q", args, getenv("A"), getenv("B"), getenv("MOSH_HOME"))
	}
	for name, rf := range map[string]func(string, int) ([]byte, bool){
		"cmdline unreadable":   fake("", "A=1\x00", false, true),
		"environ unreadable":   fake("mosh\x00", "", true, false),
		"cmdline empty":        fake("", "", true, true),
		"cmdline unterminated": fake("mosh\x00herd", "", true, true),
		"environ unterminated": fake("mosh\x00", "A=1", true, true),
	} {
		if _, _, ok := hookpath.FromProc(rf); ok {
			t.Errorf("%s: not handed back", name)
		}
	}
	if _, _, ok := hookpath.FromProc(fake("mosh\x00", "", true, true)); !ok {
		t.Error("an empty environment is an environment")
	}
}

// The exchange's unhappy paths hand the invocation back: a daemon that accepts and never answers
// (at the report's deadline), one that closes without an answer, one that answers an error. One
// that answers a byte at a time after a notification is served.
func TestEarlyExchangeUnhappyPaths(t *testing.T) {
	home := shortHome(t)
	env := map[string]string{"HOME": home, "MOSH_HOME": filepath.Join(home, "m")}
	getenv := func(k string) string { return env[k] }
	ln := herdtest.Listen(t, filepath.Join(home, "m"))
	t.Cleanup(func() { ln.Close() })
	var mode atomic.Value
	got := make(chan []byte, 8)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func(conn net.Conn) {
				defer conn.Close()
				line := make([]byte, 0, 512)
				b := make([]byte, 512)
				for !bytes.Contains(line, []byte("\n")) {
					n, err := conn.Read(b)
					if err != nil {
						return
					}
					line = append(line, b[:n]...)
				}
				got <- line
				switch mode.Load().(string) {
				case "silent":
					io.Copy(io.Discard, conn) // until the client closes
				case "close":
				case "trickle":
					var req struct{ ID json.RawMessage }
					json.Unmarshal(line, &req)
					out := `{"jsonrpc":"2.0","method":"event","params":{}}` + "\n" + herdtest.Result(req.ID, `{"accepted":true}`) + "\n"
					for i := range len(out) {
						if _, err := conn.Write([]byte{out[i]}); err != nil {
							return
						}
					}
				}
			}(conn)
		}
	}()
	for _, m := range []struct {
		mode   string
		served bool
	}{{"silent", false}, {"close", false}, {"trickle", true}} {
		mode.Store(m.mode)
		stop := signalStorm(t)
		_, ok := hookpath.Serve([]string{"herd", "report", "x", "working"}, getenv, strings.NewReader(""))
		stop()
		if ok != m.served {
			t.Errorf("a daemon that does %q: served %v, want %v", m.mode, ok, m.served)
		}
		if l := <-got; !bytes.HasPrefix(l, []byte(`{"jsonrpc":"2.0","id":1,"method":"report"`)) {
			t.Errorf("%s: the daemon read %q", m.mode, l)
		}
	}
}

// A verb whose standard output is a pipe closed at the other end dies of SIGPIPE on the fast path
// as on the ordinary path (os.Stdout's Write raises it; the raw write gets EPIPE and raises it too).
func TestFastVerbDiesOfSIGPIPEAsTheOrdinaryPath(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	home := shortHome(t)
	herdtest.FakeDaemon(t, filepath.Join(home, "m"), func(r herdtest.Request) string {
		return herdtest.Result(r.ID, `{"members":[{"name":"a","state":"idle"}]}`)
	})
	for _, extra := range []string{"MOSH_NO_HOOKPATH=", "MOSH_NO_HOOKPATH=1"} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		cmd := exec.Command(moshBin, "ps", "--json")
		cmd.Env = []string{"HOME=" + home, "MOSH_HOME=" + filepath.Join(home, "m"), "PATH=" + os.Getenv("PATH"), "GODEBUG=inittrace=1", extra}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		w.Close()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
			t.Errorf("%s: %v, want death by SIGPIPE\n%s", extra, err, stderr.String())
		}
		if served := !strings.Contains(stderr.String(), "init github.com/spf13/cobra "); served != (extra == "MOSH_NO_HOOKPATH=") {
			t.Errorf("%s: served by the fast path: %v", extra, served)
		}
	}
}
