package herd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mosh-dev/mosh/exitcode"
)

// The daemon's own life, as clients see it:
//
//   - herd/daemon.lock holds an exclusive flock for the daemon's whole life and says
//     "<pid> <phase>", phase starting | serving | stopping. The kernel drops the lock when the
//     process dies, so "held" means "a daemon process exists", whatever the file says.
//   - A client whose dial fails and that finds the lock held waits for that daemon, bounded and
//     on events only: inotify on the socket's directory (the socket appears: it started, or it
//     re-created a socket a temp cleaner removed) and a pidfd on its process (it exited: it was
//     stopping). Only when neither happens in time does it report an orphaned daemon, naming
//     the pid and the fix.
//   - daemon.stop returns the daemon's pid; Client.DaemonStop waits until that process is gone
//     (lock released, database closed), so the next verb never meets the old daemon.
//   - The daemon watches its socket's directory and re-creates the socket when it is removed.

// Daemon phases written to the lock file.
const (
	PhaseStarting = "starting"
	PhaseServing  = "serving"
	PhaseStopping = "stopping"
)

// How long a client waits for a daemon that holds the lock but does not answer, by its phase.
// Bounds, not expectations: each wait ends on the event it waits for. Options.WaitServing
// replaces waitServing for one client (a test of an orphaned daemon, which never answers).
const (
	waitStarting = 15 * time.Second // opening the database (a big WAL to recover) comes before listening
	WaitStopping = 30 * time.Second // members get killGrace each (in parallel), then the ledger flushes
	waitServing  = 3 * time.Second  // a serving daemon re-creates a removed socket within milliseconds
)

// stopWait bounds Client.DaemonStop's wait for the process to end.
const stopWait = 30 * time.Second

func lockPath(home string) string { return filepath.Join(HerdDir(home), "daemon.lock") }

// LockInfo is what the lock file says: pid and phase (old daemons wrote the pid only).
type LockInfo struct {
	Pid   int
	Phase string
}

// ParseLockInfo reads a lock file's "<pid> <phase>".
func ParseLockInfo(b []byte) LockInfo {
	f := strings.Fields(string(b))
	var li LockInfo
	if len(f) > 0 {
		li.Pid, _ = strconv.Atoi(f[0])
	}
	if len(f) > 1 {
		li.Phase = f[1]
	}
	return li
}

// LockHolder reports whether a daemon process holds home's lifetime lock, and what the lock file
// says about it. The probe takes a shared lock for an instant; a daemon starting at that instant
// waits for it (see daemon.lifetimeLock).
func LockHolder(home string) (LockInfo, bool) {
	path := lockPath(home)
	f, err := os.Open(path)
	if err != nil {
		return LockInfo{}, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return LockInfo{}, false
	}
	b, _ := os.ReadFile(path)
	return ParseLockInfo(b), true
}

// OrphanedDaemonError is a daemon process that holds the lifetime lock of a home but does not
// answer on its socket (most often: a temp cleaner removed the socket and the daemon is too old
// to re-create it, or it is wedged).
type OrphanedDaemonError struct {
	Pid    int
	Socket string
	Lock   string
	Phase  string
}

func (e *OrphanedDaemonError) Error() string {
	pid := "?"
	if e.Pid > 0 {
		pid = strconv.Itoa(e.Pid)
	}
	if e.Phase == PhaseStopping {
		return fmt.Sprintf("herd daemon (pid %s) is still stopping: wait for it, or `kill %s` (its members stop with it)", pid, pid)
	}
	return fmt.Sprintf("herd daemon (pid %s) holds %s but does not answer on %s (its socket was removed, or it is stuck): "+
		"`mosh herd daemon stop --yes` ends it (SIGTERM; its members stop with it), or `kill %s`; the next verb starts a new daemon",
		pid, e.Lock, e.Socket, pid)
}

// orphaned is an *OrphanedDaemonError with exit code 5 (infra).
func NewOrphanedDaemonError(pid int, sock, lock, phase string) error {
	return &exitcode.Error{Code: exitcode.Infra, Err: &OrphanedDaemonError{Pid: pid, Socket: sock, Lock: lock, Phase: phase}}
}

// awaitDaemon is called when the socket did not answer. When no daemon process holds the lock it
// returns (nil, nil): start one, or report none. When one does, it waits for that daemon's socket
// to answer (it was starting, or re-created a removed socket) or for the process to end (it was
// stopping), bounded by the daemon's phase; past the bound it returns *OrphanedDaemonError.
// opts is resolved (its Home is set).
func awaitDaemon(ctx context.Context, opts Options, sock string) (net.Conn, error) {
	home := opts.Home
	li, held := LockHolder(home)
	if !held {
		return nil, nil
	}
	bound := waitServing
	if opts.WaitServing > 0 {
		bound = opts.WaitServing
	}
	switch li.Phase {
	case PhaseStarting, "":
		bound = waitStarting
	case PhaseStopping:
		bound = WaitStopping
	}
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	w, err := newDaemonWatch(sock, li.Pid, lockPath(home))
	if err != nil {
		return nil, exitcode.New(exitcode.Infra, "cannot wait for the herd daemon (pid %d): %v", li.Pid, err)
	}
	defer w.close()
	for {
		// The watch is in place before each look, so a change between the look and the wait wakes it.
		if conn, err := DialSocket(ctx, sock); err == nil {
			return conn, nil
		}
		now, held := LockHolder(home)
		if !held {
			return nil, nil
		}
		if now.Pid != li.Pid && now.Pid > 0 {
			// Another daemon took the lock since: follow that one.
			w.close()
			li = now
			if w, err = newDaemonWatch(sock, li.Pid, lockPath(home)); err != nil {
				return nil, exitcode.New(exitcode.Infra, "cannot wait for the herd daemon (pid %d): %v", li.Pid, err)
			}
			continue
		}
		li.Phase = now.Phase
		if err := w.wait(wctx); err != nil {
			if ctx.Err() != nil {
				return nil, exitcode.New(exitcode.Timeout, "gave up waiting for the herd daemon (pid %d) to answer on %s", li.Pid, sock)
			}
			return nil, NewOrphanedDaemonError(li.Pid, sock, lockPath(home), li.Phase)
		}
	}
}

// daemonWatch wakes when something is created or moved into the socket's directory under the
// socket's name, or when the daemon process ends.
type daemonWatch struct {
	ino    int // inotify fd
	gone   int // pidfd of the daemon, or the read end of a pipe the lock waiter writes to; -1 if none
	name   string
	closed bool
	stop   func()
}

func newDaemonWatch(sock string, pid int, lock string) (*daemonWatch, error) {
	ino, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	w := &daemonWatch{ino: ino, gone: -1, name: filepath.Base(sock), stop: func() {}}
	// The directory may be gone with the socket (a cleaner removed the whole fallback directory
	// under the temp dir): make it, as a starting client would, so there is something to watch;
	// the daemon re-creates its socket in it.
	if err := EnsurePrivateDir(filepath.Dir(sock)); err != nil {
		unix.Close(ino)
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(ino, filepath.Dir(sock), unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF); err != nil {
		unix.Close(ino)
		return nil, fmt.Errorf("watch %s: %w", filepath.Dir(sock), err)
	}
	if pid > 0 && pid != os.Getpid() {
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			w.gone = fd
		} else if errors.Is(err, unix.ESRCH) {
			w.gone = -2 // already gone: wait returns at once
		}
	}
	if w.gone == -1 {
		// The daemon runs in this process (tests), or pidfds are unavailable: wait on the lock.
		w.gone, w.stop = lockWaiter(lock)
	}
	return w, nil
}

// lockWaiter returns the read end of a pipe that becomes readable once a shared lock on path can
// be taken (the holder released it); stop abandons the wait. The waiting goroutine holds the
// lock for an instant only.
func lockWaiter(path string) (int, func()) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return -1, func() {}
	}
	f, err := os.Open(path)
	if err != nil {
		unix.Close(p[1])
		return p[0], func() {} // readable at EOF: no lock file, nobody holds it
	}
	// Abandoned, the goroutine still waits for the lock (flock cannot be interrupted), then lets
	// it go at once and ends.
	go func() {
		defer f.Close()
		defer unix.Close(p[1])
		if syscall.Flock(int(f.Fd()), syscall.LOCK_SH) == nil {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
	}()
	return p[0], func() {}
}

// wait returns nil when the socket's name appeared, the directory changed, or the daemon ended;
// an error when ctx ended first.
func (w *daemonWatch) wait(ctx context.Context) error {
	if w.gone == -2 {
		return nil
	}
	fds := []unix.PollFd{{Fd: int32(w.ino), Events: unix.POLLIN}}
	if w.gone >= 0 {
		fds = append(fds, unix.PollFd{Fd: int32(w.gone), Events: unix.POLLIN})
	}
	return pollCtx(ctx, fds, func(fds []unix.PollFd) bool {
		return (len(fds) > 1 && fds[1].Revents != 0) || (fds[0].Revents != 0 && w.drain())
	})
}

// pollCtx polls fds until done says their events end the wait (nil) or ctx ends (ctx.Err()).
// A pipe that ctx's end makes readable wakes poll.
func pollCtx(ctx context.Context, fds []unix.PollFd, done func([]unix.PollFd) bool) error {
	var cp [2]int
	if err := unix.Pipe2(cp[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	defer unix.Close(cp[0])
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		defer unix.Close(cp[1])
		select {
		case <-ctx.Done():
			_, _ = unix.Write(cp[1], []byte{1})
		case <-stopped:
		}
	}()
	all := append(fds[:len(fds):len(fds)], unix.PollFd{Fd: int32(cp[0]), Events: unix.POLLIN})
	own, ctxFd := all[:len(fds)], &all[len(fds)]
	for {
		_, err := unix.Poll(all, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if done(own) {
			return nil
		}
		if ctxFd.Revents != 0 {
			return ctx.Err()
		}
		for i := range all {
			all[i].Revents = 0
		}
	}
}

// drain reads the pending inotify events and reports whether one concerns the socket's name or
// the directory itself.
func (w *daemonWatch) drain() bool {
	var buf [4096]byte
	hit := false
	for {
		n, err := unix.Read(w.ino, buf[:])
		if n <= 0 || err != nil {
			return hit
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameLen := int(ev.Len)
			name := ""
			if nameLen > 0 {
				raw := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
				name = string(bytes.TrimRight(raw, "\x00"))
			}
			if name == w.name || ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_Q_OVERFLOW) != 0 {
				hit = true
			}
			off += unix.SizeofInotifyEvent + nameLen
		}
	}
}

func (w *daemonWatch) close() {
	if w.closed {
		return
	}
	w.closed = true
	unix.Close(w.ino)
	w.stop()
	if w.gone >= 0 {
		unix.Close(w.gone)
	}
}

// WaitProcessGone waits until the daemon process pid has ended (its lock released, its database
// closed): a pidfd when it is another process, the lifetime lock when it runs in this one.
func WaitProcessGone(ctx context.Context, pid int, home string) error {
	if pid <= 0 {
		return nil
	}
	var (
		fd   int
		stop = func() {}
	)
	if pid != os.Getpid() {
		var err error
		fd, err = unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		if err != nil {
			fd, stop = lockWaiter(lockPath(home))
		}
	} else {
		fd, stop = lockWaiter(lockPath(home))
	}
	if fd < 0 {
		return fmt.Errorf("cannot wait for pid %d", pid)
	}
	defer unix.Close(fd)
	defer stop()
	return pollCtx(ctx, []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, func(fds []unix.PollFd) bool { return fds[0].Revents != 0 })
}
