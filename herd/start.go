package herd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/internal/buildcgo"
)

// ReadyFDEnv names the file descriptor on which a daemon started by Connect says "ready\n" once
// its socket listens. A pipe instead of polling the socket: the starter wakes the moment the
// daemon is ready, and learns at once (EOF) when the daemon died during start-up.
const ReadyFDEnv = "MOSH_HERD_READY_FD"

// daemonEnvKeys is all of the caller's environment a daemon gets: the daemon never passes its own
// environment to members (each request carries the caller's), so it needs nothing secret.
// GORACE only matters to a race-detector build (the tests': it lets them drop the detector's
// one-second sleep at exit, which DaemonStop now waits out).
var daemonEnvKeys = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "GORACE"}

func startDaemon(ctx context.Context, home string, opts ConnectOptions) (net.Conn, error) {
	dir := HerdDir(home)
	if err := EnsurePrivateDir(dir); err != nil {
		return nil, err
	}
	sock := SocketPath(home)
	if filepath.Dir(sock) != dir {
		if err := EnsurePrivateDir(filepath.Dir(sock)); err != nil {
			return nil, err
		}
	}
	// The start lock makes concurrent clients queue: the first starts the daemon, the others find
	// its socket once they hold the lock.
	unlock, err := lockFile(ctx, filepath.Join(dir, "start.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if conn, err := DialSocket(ctx, sock); err == nil {
		return conn, nil
	}
	// A daemon that is still stopping (or one started by hand meanwhile) holds the lifetime lock:
	// wait for it rather than spawn one that cannot take the lock.
	if conn, err := awaitDaemon(ctx, opts, sock); conn != nil || err != nil {
		return conn, err
	}

	argv := opts.DaemonArgv
	if len(argv) == 0 {
		// The daemon is this binary: without cgo it has no SQLite for its ledger.
		if err := buildcgo.Err(); err != nil {
			return nil, err
		}
		exe, err := os.Executable()
		if err != nil {
			return nil, exitcode.New(exitcode.Infra, "cannot find the mosh executable to start the herd daemon: %v", err)
		}
		argv = []string{exe, "herd", "daemon", "--foreground"}
	}
	logPath := filepath.Join(dir, "daemon.log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, exitcode.New(exitcode.Infra, "cannot open %s: %v (check the directory's permissions)", logPath, err)
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, 2)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, exitcode.Wrap(err, exitcode.Infra)
	}
	defer pr.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		pw.Close()
		return nil, exitcode.Wrap(err, exitcode.Infra)
	}
	defer devnull.Close()

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = "/" // the daemon must not pin the caller's working directory
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.ExtraFiles = []*os.File{pw} // fd 3
	cmd.Env = []string{"MOSH_HOME=" + home, ReadyFDEnv + "=3"}
	for _, k := range daemonEnvKeys {
		if v, ok := opts.lookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // survives the terminal and this process
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, exitcode.New(exitcode.Infra, "cannot start the herd daemon (%s): %v", strings.Join(argv, " "), err)
	}
	pw.Close()
	go func() { _ = cmd.Wait() }() // reap it if it ends while we live

	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = pr.SetReadDeadline(deadline)
	line, rerr := bufio.NewReader(pr).ReadString('\n')
	if rerr != nil || strings.TrimSpace(line) != "ready" {
		why := "it exited during start-up"
		if errors.Is(rerr, os.ErrDeadlineExceeded) {
			why = "it did not become ready within " + timeout.String()
		}
		return nil, exitcode.New(exitcode.Infra, "herd daemon did not start: %s%s (log: %s)", why, logTail(logPath, logStart), logPath)
	}
	conn, err := DialSocket(ctx, sock)
	if err != nil {
		return nil, exitcode.New(exitcode.Infra, "herd daemon started but %s does not answer: %v (log: %s)", sock, err, logPath)
	}
	return conn, nil
}

// logTail returns the last line the daemon logged since offset, for start-up errors.
func logTail(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) <= offset {
		return ""
	}
	b = bytes.TrimSpace(b[offset:])
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	if len(b) == 0 {
		return ""
	}
	return ": " + string(b)
}

// lockFile takes an exclusive flock on path, waiting for the holder; ctx bounds the wait.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, exitcode.New(exitcode.Infra, "cannot open lock %s: %v", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, exitcode.New(exitcode.Infra, "cannot lock %s: %v", path, err)
		}
		return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
	case <-ctx.Done():
		// The goroutine still waits on the lock; closing the file when it gets it releases it.
		go func() {
			if <-done == nil {
				f.Close()
			}
		}()
		return nil, exitcode.New(exitcode.Timeout, "waited too long for %s: another mosh is starting the daemon", path)
	}
}
