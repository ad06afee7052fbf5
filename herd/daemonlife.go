package herd

import (
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

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/internal/platform"
)

// The daemon's own life, as clients see it:
//
//   - herd/daemon.lock holds an exclusive flock for the daemon's whole life and says
//     "<pid> <phase>", phase starting | serving | stopping. The kernel drops the lock when the
//     process dies, so "held" means "a daemon process exists", whatever the file says.
//   - A client whose dial fails and that finds the lock held waits for that daemon, bounded and
//     on events only: a watch on the socket's directory (the socket appears: it started, or it
//     re-created a socket a temp cleaner removed) and on its process's exit (it was stopping).
//     Only when neither happens in time does it report an orphaned daemon, naming the pid and
//     the fix.
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
// socket's name, when the directory itself goes, or when the daemon process ends.
type daemonWatch struct {
	dir  *platform.DirWatch
	name string
	gone <-chan struct{} // closed when the daemon process has ended
	stop func()
}

func newDaemonWatch(sock string, pid int, lock string) (*daemonWatch, error) {
	// The directory may be gone with the socket (a cleaner removed the whole fallback directory
	// under the temp dir): make it, as a starting client would, so there is something to watch;
	// the daemon re-creates its socket in it.
	dir := filepath.Dir(sock)
	if err := EnsurePrivateDir(dir); err != nil {
		return nil, err
	}
	dw, err := platform.WatchDir(dir)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	w := &daemonWatch{dir: dw, name: filepath.Base(sock)}
	if pid > 0 && pid != os.Getpid() {
		if gone, stop, err := platform.WatchExit(pid); err == nil {
			w.gone, w.stop = gone, stop
		}
	}
	if w.gone == nil {
		// The daemon runs in this process (tests), or its exit cannot be watched: wait on the lock.
		w.gone, w.stop = lockWaiter(lock)
	}
	return w, nil
}

// lockWaiter returns a channel closed once a shared lock on path can be taken (the holder
// released it); stop abandons the wait. The waiting goroutine holds the lock for an instant only.
func lockWaiter(path string) (<-chan struct{}, func()) {
	free := make(chan struct{})
	f, err := os.Open(path)
	if err != nil {
		close(free) // no lock file: nobody holds it
		return free, func() {}
	}
	// Abandoned, the goroutine still waits for the lock (flock cannot be interrupted), then lets
	// it go at once and ends.
	go func() {
		defer f.Close()
		if syscall.Flock(int(f.Fd()), syscall.LOCK_SH) == nil {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
		close(free)
	}()
	return free, func() {}
}

// wait returns nil when the socket's name appeared, the directory changed, or the daemon ended;
// an error when ctx ended first.
func (w *daemonWatch) wait(ctx context.Context) error {
	for {
		select {
		case <-w.gone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case ch, ok := <-w.dir.Changes():
			if !ok {
				return errors.New("the watch on the socket's directory ended")
			}
			if ch.Name == "" {
				// The directory went (or events were lost): watch the one there now, if any.
				_ = w.dir.Rewatch()
				return nil
			}
			if ch.Name == w.name && !ch.Gone {
				return nil
			}
		}
	}
}

func (w *daemonWatch) close() {
	w.dir.Close()
	w.stop()
}

// WaitProcessGone waits until the daemon process pid has ended (its lock released, its database
// closed): its exit when it is another process, the lifetime lock when it runs in this one.
func WaitProcessGone(ctx context.Context, pid int, home string) error {
	if pid <= 0 {
		return nil
	}
	var (
		gone <-chan struct{}
		stop = func() {}
	)
	if pid != os.Getpid() {
		if g, s, err := platform.WatchExit(pid); err == nil {
			gone, stop = g, s
		}
	}
	if gone == nil {
		gone, stop = lockWaiter(lockPath(home))
	}
	defer stop()
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
