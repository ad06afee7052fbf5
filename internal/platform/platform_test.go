//go:build linux || darwin

// Contract tests of the platform layer: they run against the running OS's implementation and
// name no OS, so they pass unchanged on Linux and on macOS (`go test ./internal/platform` on a
// Mac checks the macOS implementation).
package platform

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// bound is how long a test waits for an event that should come at once: a bound, never a sleep.
const bound = 30 * time.Second

// shortTemp is a temporary directory with a short path (macOS's per-user $TMPDIR is long, and a
// socket path must fit sun_path).
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "plat")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// next waits for the next change of w that matches want.
func next(t *testing.T, w *DirWatch, what string, want func(Change) bool) Change {
	t.Helper()
	timeout := time.After(bound)
	for {
		select {
		case ch, ok := <-w.Changes():
			if !ok {
				t.Fatalf("%s: the watch ended", what)
			}
			if want(ch) {
				return ch
			}
		case <-timeout:
			t.Fatalf("%s: no change within %s", what, bound)
		}
	}
}

func TestWatchDirReportsEntriesAndTheDirectoryItself(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "herd")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := WatchDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	file := filepath.Join(dir, "engines.json")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	next(t, w, "create", func(c Change) bool { return c.Name == "engines.json" && !c.Gone })
	// An editor's save: write a temporary file, rename it over the old one.
	tmp := filepath.Join(dir, ".engines.json.swp")
	if err := os.WriteFile(tmp, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	next(t, w, "rename into place", func(c Change) bool { return c.Name == "engines.json" && !c.Gone })
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	next(t, w, "remove", func(c Change) bool { return c.Name == "engines.json" && c.Gone })
	// The directory itself removed, made again, watched again.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	next(t, w, "directory removed", func(c Change) bool { return c.Name == "" })
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := w.Rewatch(); err != nil {
		t.Fatalf("Rewatch after the directory was made again: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mosh.sock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	next(t, w, "create after Rewatch", func(c Change) bool { return c.Name == "mosh.sock" && !c.Gone })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for range w.Changes() {
	}
}

func TestWatchDirOnAMissingDirectoryFails(t *testing.T) {
	if _, err := WatchDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("WatchDir on a missing directory: no error")
	}
}

// child starts a process that waits for its stdin to close, with extra environment.
func child(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("cat")
	cmd.Env = append(os.Environ(), env...)
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func TestWatchExitOfAProcess(t *testing.T) {
	cmd := child(t)
	done, stop, err := WatchExit(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case <-done:
		t.Fatal("done before the process ended")
	default:
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("no exit within %s", bound)
	}
	// A process that is already gone: done at once.
	done, stop2, err := WatchExit(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatal("WatchExit of an ended process did not report it")
	}
}

func TestWatchExitStopEndsTheWatchWithoutAnExit(t *testing.T) {
	cmd := child(t)
	done, stop, err := WatchExit(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // twice is harmless
	select {
	case <-done:
		t.Fatal("stop reported an exit")
	default:
	}
}

func TestPeerOfAUnixSocket(t *testing.T) {
	sock := filepath.Join(shortTemp(t), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := PeerOf(s.(*net.UnixConn))
	if err != nil {
		t.Fatal(err)
	}
	if p.Pid != os.Getpid() || p.Uid != os.Getuid() {
		t.Fatalf("PeerOf = %+v, want pid %d uid %d", p, os.Getpid(), os.Getuid())
	}
}

func TestSocketPathMaxIsTheLongestPathThatBinds(t *testing.T) {
	dir := shortTemp(t)
	name := strings.Repeat("s", SocketPathMax-len(dir)-1)
	sock := filepath.Join(dir, name)
	if len(sock) != SocketPathMax {
		t.Fatalf("built a path of %d bytes, want %d", len(sock), SocketPathMax)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("a socket path of SocketPathMax (%d) bytes does not bind: %v", SocketPathMax, err)
	}
	ln.Close()
	if _, err := net.Listen("unix", sock+"s"); err == nil {
		t.Fatalf("a socket path of %d bytes binds: SocketPathMax is too small", SocketPathMax+1)
	}
}

func TestReadProcOfThisProcess(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	base := filepath.Base(exe)
	if p.Pid != os.Getpid() || p.PPid != os.Getppid() || p.Pgrp != syscall.Getpgrp() ||
		p.Comm == "" || !strings.HasPrefix(base, p.Comm) || (p.State != 'R' && p.State != 'S') {
		t.Fatalf("ReadProc(self) = %+v; want pid %d ppid %d pgrp %d, a prefix of %q, R or S", p, os.Getpid(), os.Getppid(), syscall.Getpgrp(), base)
	}
	a := Ancestry(os.Getpid())
	if len(a) < 1 || a[0].Pid != os.Getpid() || (os.Getppid() > 1 && (len(a) < 2 || a[1].Pid != os.Getppid())) {
		t.Fatalf("Ancestry(self) = %+v", a)
	}
	if _, err := ReadProc(1 << 30); err == nil {
		t.Fatal("ReadProc of a pid that cannot exist: no error")
	}
}

func TestChildrenEnvironAndAlive(t *testing.T) {
	cmd := child(t, "MOSH_PLATFORM_TEST=here")
	pid := cmd.Process.Pid
	if !slices.Contains(Children(os.Getpid()), pid) {
		t.Fatalf("Children(self) = %v, missing %d", Children(os.Getpid()), pid)
	}
	// cmd.Start returns once the exec began (close-on-exec fired), but the kernel sets the new
	// image's environment a moment later: until then /proc/PID/environ reads empty. Wait for it.
	var env []string
	for deadline := time.Now().Add(bound); ; time.Sleep(time.Millisecond) {
		var err error
		if env, err = Environ(pid); err != nil {
			t.Fatal(err)
		}
		if len(env) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Contains(env, "MOSH_PLATFORM_TEST=here") {
		t.Fatalf("Environ(child) lacks MOSH_PLATFORM_TEST=here: %v", env)
	}
	if !Alive(pid) {
		t.Fatal("Alive(child) = false while it runs")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if Alive(pid) {
		t.Fatal("Alive(child) = true after it was reaped")
	}
}

func TestForegroundOfATerminalAndWhatItReads(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	cmd := exec.Command("cat")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pgrp, raw, err := Foreground(int(ptmx.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if pgrp != cmd.Process.Pid || raw {
		t.Fatalf("Foreground = pgrp %d raw %v, want pgrp %d (the session leader) in line mode", pgrp, raw, cmd.Process.Pid)
	}
	p, err := ReadProc(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_, how, err := ReadsTerminal(p, tty.Name(), raw)
	if errors.Is(err, ErrUnsupported) {
		// A signal the platform cannot read is named, with its cost, for doctor.
		if !slices.ContainsFunc(Gaps(), func(g Gap) bool { return strings.Contains(g.Signal, "foreground") && g.Cost != "" }) {
			t.Fatalf("ReadsTerminal is unsupported but Gaps does not name it: %+v", Gaps())
		}
		return
	}
	if err != nil || how == "" {
		t.Fatalf("ReadsTerminal = %q, %v", how, err)
	}
}

func TestFileOwner(t *testing.T) {
	st, err := os.Stat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := FileOwner(st); !ok || uid != os.Getuid() {
		t.Fatalf("FileOwner = %d, %v; want %d", uid, ok, os.Getuid())
	}
}

// TestUnreadInputOfATerminal: bytes typed into a terminal nobody reads wait in its input queue;
// once read, the queue is empty. A platform that cannot tell says so in Gaps.
func TestUnreadInputOfATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if UnreadInput(tty.Name()) {
		t.Fatal("UnreadInput = true before anything was typed")
	}
	if _, err := ptmx.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(bound)
	for !UnreadInput(tty.Name()) {
		if slices.ContainsFunc(Gaps(), func(g Gap) bool { return strings.Contains(g.Signal, "unread input") && g.Cost != "" }) {
			return // not read here, and named for doctor
		}
		if time.Now().After(deadline) {
			t.Fatal("UnreadInput = false with a typed line unread")
		}
		time.Sleep(time.Millisecond) // the line discipline moves the bytes across; poll the condition
	}
	buf := make([]byte, 16)
	if _, err := tty.Read(buf); err != nil {
		t.Fatal(err)
	}
	if UnreadInput(tty.Name()) {
		t.Fatal("UnreadInput = true after the line was read")
	}
	if UnreadInput(filepath.Join(t.TempDir(), "no-such-tty")) {
		t.Fatal("UnreadInput of a missing terminal = true")
	}
}
