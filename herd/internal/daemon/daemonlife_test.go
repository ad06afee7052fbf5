package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/platform"
	"github.com/mosh-dev/mosh/ledger"
)

// holdLockEnv makes the test binary a stand-in for an orphaned daemon: it takes the lifetime
// lock of the herd dir named by the variable, says "<pid> serving" in it, prints "held" and
// blocks until it is killed, without ever listening on a socket.
const holdLockEnv = "MOSH_HERD_TEST_HOLD_LOCK"

func holdLockMain() int {
	dir := os.Getenv(holdLockEnv)
	f, err := os.OpenFile(filepath.Join(dir, "daemon.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Println(err)
		return 1
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("%d serving\n", os.Getpid())), 0)
	fmt.Println("held")
	var b [1]byte
	_, _ = os.Stdin.Read(b[:]) // until killed (or the test closes our stdin)
	return 0
}

// newHome makes a private MOSH_HOME (short: the socket lives inside) and points HOME and
// MOSH_HOME at it; the daemon it gets is stopped at the end.
func newHome(t *testing.T) string {
	t.Helper()
	home := makeHome(t)
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", home)
	return home
}

// newParallelHome is newHome for a test that runs in parallel with the others (it calls
// t.Parallel): the process environment is left alone, and every client the test makes carries
// homeEnv(home) in its Options.Env.
func newParallelHome(t *testing.T) string {
	t.Helper()
	t.Parallel()
	return makeHome(t)
}

// makeHome makes a private MOSH_HOME whose daemon is stopped at the end.
func makeHome(t *testing.T) string {
	t.Helper()
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopDaemon(home)
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(home, "herd", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
		os.RemoveAll(home)
	})
	return home
}

// `daemon stop` returns when the process is gone (lock released, socket removed), so the next
// verb starts a fresh daemon; a client that arrives while a daemon is stopping waits for it.
// Fifty restarts in a row, half of them with the next Connect racing the stop.
func TestDaemonRestartLoop(t *testing.T) {
	home := newParallelHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*testTimeout)
	defer cancel()
	sock := herd.SocketPath(home)
	pids := map[int]bool{}
	var raced *herd.Client
	for i := 0; i < 50; i++ {
		c := raced
		if c == nil {
			var err error
			if c, err = herd.Connect(ctx, herd.ConnectOptions{Home: home, Env: homeEnv(home)}); err != nil {
				t.Fatalf("restart %d: connect: %v", i, err)
			}
		}
		raced = nil
		st, err := c.DaemonStatus(ctx)
		if err != nil {
			t.Fatalf("restart %d: status: %v", i, err)
		}
		if pids[st.Pid] {
			t.Fatalf("restart %d: pid %d served before: the old daemon is still there", i, st.Pid)
		}
		pids[st.Pid] = true
		if i%10 == 0 {
			// A member makes the daemon's stop slower (it is killed first).
			if _, err := c.Run(ctx, herd.RunParams{Name: fmt.Sprintf("m%d", i), Argv: []string{"/bin/sh", "-c", "trap '' HUP; exec cat"}}); err != nil {
				t.Fatalf("restart %d: run: %v", i, err)
			}
		}
		if i%2 == 0 {
			r, err := c.DaemonStop(ctx, true)
			if err != nil {
				t.Fatalf("restart %d: stop: %v", i, err)
			}
			if r.Pid != st.Pid {
				t.Fatalf("restart %d: stop result %+v, daemon pid %d", i, r, st.Pid)
			}
			// Stop returned: the process is gone, its lock free, its socket removed.
			if platform.Alive(st.Pid) {
				t.Fatalf("restart %d: daemon %d still runs after stop returned", i, st.Pid)
			}
			if li, held := herd.LockHolder(home); held {
				t.Fatalf("restart %d: the lock is still held (%+v) after stop returned", i, li)
			}
			if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("restart %d: the socket is still there after stop returned: %v", i, err)
			}
		} else {
			// Stop without waiting, and connect at once: the client meets a stopping daemon and
			// must wait for it, then start the next one.
			conn, err := net.Dial("unix", sock)
			if err != nil {
				t.Fatalf("restart %d: dial: %v", i, err)
			}
			err = rawCall(conn, herd.MethodDaemonStop, herd.DaemonStopParams{Yes: true})
			conn.Close()
			if err != nil {
				t.Fatalf("restart %d: stop: %v", i, err)
			}
			if raced, err = herd.Connect(ctx, herd.ConnectOptions{Home: home, Env: homeEnv(home)}); err != nil {
				t.Fatalf("restart %d: connect while the daemon stops: %v", i, err)
			}
		}
		c.Close()
	}
	if raced != nil {
		raced.Close()
	}
}

// A daemon whose socket is removed under it (a temp-dir cleaner) notices and listens again:
// the herd is not orphaned, clients reach the same daemon and its members, and doctor names
// what happened. The whole fallback directory under the temp dir goes too.
func TestRemovedSocketIsRecreated(t *testing.T) {
	tmp, err := os.MkdirTemp("", "tmp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp) // the fallback socket directory lives here, not in the real /tmp
	base := newHome(t)
	home := filepath.Join(base, strings.Repeat("deep-directory-", 6))
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MOSH_HOME", home)
	defer stopDaemon(home)
	sock := herd.SocketPath(home)
	if !strings.HasPrefix(sock, tmp) {
		t.Fatalf("socket %s is not under the temp dir %s", sock, tmp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.DaemonStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, herd.RunParams{Name: "keep", Argv: []string{"/bin/sh", "-c", "exec cat"}}); err != nil {
		t.Fatal(err)
	}
	for round, remove := range []func() error{
		func() error { return os.Remove(sock) },
		func() error {
			// The whole directory goes at once (a rename, then removal: a recursive delete could
			// race the daemon re-creating its socket inside and fail with "not empty").
			gone := filepath.Dir(sock) + ".gone"
			if err := os.Rename(filepath.Dir(sock), gone); err != nil {
				return err
			}
			return os.RemoveAll(gone)
		},
	} {
		if err := remove(); err != nil {
			t.Fatal(err)
		}
		// A new client (NoStart: as `daemon stop`, hooks and doctor connect) reaches the same
		// daemon: it waits on the socket's directory until the daemon has listened again.
		c2, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
		if err != nil {
			t.Fatalf("round %d: after the socket was removed: %v", round, err)
		}
		st2, err := c2.DaemonStatus(ctx)
		if err != nil || st2.Pid != st.Pid {
			t.Fatalf("round %d: status %+v %v, want the same daemon (pid %d)", round, st2, err, st.Pid)
		}
		ms, err := c2.List(ctx)
		if err != nil || len(ms) != 1 || ms[0].Name != "keep" || !ms[0].Alive {
			t.Fatalf("round %d: members %+v %v", round, ms, err)
		}
		fi, err := os.Lstat(sock)
		if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
			t.Fatalf("round %d: re-created socket %v %v", round, fi, err)
		}
		if di, err := os.Stat(filepath.Dir(sock)); err != nil || di.Mode().Perm() != 0o700 {
			t.Fatalf("round %d: socket dir %v %v", round, di, err)
		}
		dr, err := c2.Doctor(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ch := range dr.Checks {
			if ch.Name == "socket" && ch.Level == "warn" && strings.Contains(ch.Detail, "re-created") && strings.Contains(ch.Fix, "MOSH_HOME") {
				found = true
			}
		}
		if !found {
			t.Fatalf("round %d: doctor does not name the removed socket: %+v", round, dr.Checks)
		}
		c2.Close()
	}
	// The first client's connection was never touched.
	if _, err := c.List(ctx); err != nil {
		t.Fatalf("an open connection broke when the socket was re-created: %v", err)
	}
}

// A process that holds the lifetime lock but never answers on a socket (an old daemon whose
// socket a cleaner removed, a wedged one) is named with its pid and the fix by every client —
// connect, doctor, `daemon stop` — instead of "not running" or "another daemon already
// serves"; `daemon stop --yes` ends it and returns once it is gone.
func TestOrphanedDaemonIsNamed(t *testing.T) {
	home := newParallelHome(t)
	if err := os.MkdirAll(herd.HerdDir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	// The orphan never answers: do not wait the full bound.
	opts := herd.Options{Home: home, Env: homeEnv(home), WaitServing: 200 * time.Millisecond}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(homeEnv(home), holdLockEnv+"="+herd.HerdDir(home))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Process.Kill() }()
	exited := make(chan struct{})
	var buf [16]byte
	if n, _ := out.Read(buf[:]); !strings.HasPrefix(string(buf[:n]), "held") {
		t.Fatalf("lock holder said %q", buf[:n])
	}
	go func() { _ = cmd.Wait(); close(exited) }()
	pid := cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	for _, noStart := range []bool{true, false} {
		_, err = herd.Connect(ctx, herd.Options{Home: home, Env: opts.Env, NoStart: noStart, WaitServing: opts.WaitServing})
		var od *herd.OrphanedDaemonError
		if !errors.As(err, &od) || od.Pid != pid || exitcode.Of(err) != exitcode.Infra {
			t.Fatalf("connect (noStart %v) to an orphaned daemon: %v", noStart, err)
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprint(pid)) || !strings.Contains(msg, "daemon stop --yes") || !strings.Contains(msg, herd.SocketPath(home)) {
			t.Fatalf("the error does not name the pid, the socket and the fix: %v", err)
		}
	}
	if _, err := herd.Probe(ctx, opts); !errors.As(err, new(*herd.OrphanedDaemonError)) {
		t.Fatalf("daemon status on an orphaned daemon: %v", err)
	}
	dr, err := herd.Doctor(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if dr.OK || dr.Checks[0].Name != "daemon" || !strings.Contains(dr.Checks[0].Detail, fmt.Sprint(pid)) || !strings.Contains(dr.Checks[0].Fix, "kill") {
		t.Fatalf("doctor on an orphaned daemon: %+v", dr.Checks[0])
	}
	_, err = herd.StopDaemon(ctx, opts, false)
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("stop without --yes: %v", err)
	}
	r, err := herd.StopDaemon(ctx, opts, true)
	if err != nil || !r.Stopped || !r.Signaled || r.Pid != pid {
		t.Fatalf("stop --yes: %+v %v", r, err)
	}
	select {
	case <-exited:
	case <-ctx.Done():
		t.Fatal("stop --yes returned but the orphan still runs")
	}
	// Nothing holds the lock now: the next verb starts a daemon.
	c, err := herd.Connect(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// inProcessHerd runs a daemon in this process (so the test reaches its store) on a private
// MOSH_HOME and returns a connected client and the store.
func inProcessHerd(t *testing.T) (*herdT, *ledger.Store) {
	t.Helper()
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", home)
	opened := make(chan *ledger.Store, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	served := make(chan error, 1)
	go func() {
		served <- serveForeground(ctx, home, serveSeams{ledgerOpened: func(s *ledger.Store) { opened <- s }})
	}()
	store := <-opened
	// The client waits for the socket (the lock says starting): no retry loop needed.
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	if err != nil {
		cancel()
		t.Fatalf("connect to the in-process daemon: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		cancel()
		<-served
		os.RemoveAll(home)
	})
	return &herdT{t: t, home: home, c: c, ctx: ctx}, store
}

// A task whose end could not be written (the database refused writes: full disk, read-only)
// is not lost: the end waits in memory and lands once writes work again, so the task reads
// done with its answer — never "gone, restarted since". Meanwhile reads do not invent an end,
// doctor fails naming the waiting writes, and prompts are refused (nothing typed).
func TestTaskEndLostToAWriteFailureIsKept(t *testing.T) {
	h, store := inProcessHerd(t)
	h.run("w", askScript)
	h.wait("w", herd.StateIdle)
	p, err := h.c.Prompt(h.ctx, "w", "first", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.wait("w", herd.StateBlocked)
	if err := store.SetQueryOnly(true); err != nil { // every write now fails as on a read-only database
		t.Fatal(err)
	}
	if _, err := h.c.SendKeys(h.ctx, "w", "y", "Enter"); err != nil {
		t.Fatal(err)
	}
	h.wait("w", herd.StateIdle) // the task's end is decided now, and its write fails
	ts, err := h.c.Tasks(h.ctx, herd.TasksFilter{Member: "w"})
	if err == nil {
		for _, tk := range ts {
			if tk.ID == p.Task && tk.State == herd.StateGone {
				t.Fatalf("a read while writes fail invented an end: %+v", tk)
			}
		}
	}
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dr.OK || !hasCheck(dr, "database writes", "fail", "wait in memory") {
		t.Fatalf("doctor while writes fail: %+v", dr.Checks)
	}
	_, err = h.c.Prompt(h.ctx, "w", "second", herd.PromptOptions{})
	wantCode(t, err, exitcode.Infra)
	if !strings.Contains(err.Error(), "nothing was typed") {
		t.Fatalf("prompt while writes fail: %v", err)
	}

	if err := store.SetQueryOnly(false); err != nil {
		t.Fatal(err)
	}
	task, err := h.c.Task(h.ctx, p.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.State == herd.StateGone || task.Artifact == nil || !strings.Contains(task.Artifact.Text, "answer:y") {
		t.Fatalf("the task whose end waited in memory: %+v %+v", task, task.Artifact)
	}
	dr, err = h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !dr.OK || !hasCheck(dr, "database writes", "ok", "went through") {
		t.Fatalf("doctor after writes work again: %+v", dr.Checks)
	}
}

// doctor tries a real write: on a full disk (the database capped at its size, SQLite then fails
// exactly as on a full disk) it fails, naming the disk, where it used to say OK.
func TestDoctorTriesAWrite(t *testing.T) {
	h, store := inProcessHerd(t)
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasCheck(dr, "database writes", "ok", "") || !hasCheck(dr, "disk", "", "free on the disk") {
		t.Fatalf("doctor on a healthy herd: %+v", dr.Checks)
	}
	pages, err := store.PageCount()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetMaxPages(pages); err != nil {
		t.Fatal(err)
	}
	dr, err = h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dr.OK || !hasCheck(dr, "database writes", "fail", "disk full") {
		t.Fatalf("doctor on a full disk: %+v", dr.Checks)
	}
	if err := store.SetMaxPages(0); err != nil {
		t.Fatal(err)
	}
	if dr, err = h.c.Doctor(h.ctx); err != nil || !hasCheck(dr, "database writes", "ok", "") {
		t.Fatalf("doctor after space came back: %+v %v", dr, err)
	}
}

func TestDiskLevel(t *testing.T) {
	for free, want := range map[uint64]string{0: "fail", 1 << 20: "fail", 64 << 20: "warn", 1 << 30: "ok"} {
		if c := diskLevel("/x", free); c.Level != want || (want != "ok" && c.Fix == "") {
			t.Errorf("%d bytes free: %+v, want %s", free, c, want)
		}
	}
}

func hasCheck(r *herd.DoctorResult, name, level, detail string) bool {
	for _, c := range r.Checks {
		if c.Name == name && (level == "" || c.Level == level) && strings.Contains(c.Detail, detail) {
			return true
		}
	}
	return false
}

// A daemon that starts while the previous one still holds the lifetime lock (it is stopping)
// waits for the lock instead of failing with "already serves", and serves once it is free.
func TestDaemonStartWaitsForAStoppingDaemon(t *testing.T) {
	home := newHome(t)
	if err := os.MkdirAll(herd.HerdDir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), holdLockEnv+"="+herd.HerdDir(home))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var buf [16]byte
	if n, _ := out.Read(buf[:]); !strings.HasPrefix(string(buf[:n]), "held") {
		t.Fatalf("lock holder said %q", buf[:n])
	}
	opened := make(chan *ledger.Store, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	waiting := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- serveForeground(ctx, home, serveSeams{
			ledgerOpened: func(s *ledger.Store) { opened <- s },
			lockWait:     func() { close(waiting) },
		})
	}()
	// The new daemon neither fails nor takes over while the old one holds the lock: it waits.
	select {
	case err := <-served:
		t.Fatalf("the daemon did not wait for the lock: %v", err)
	case <-opened:
		t.Fatal("the daemon opened the database while another held the lock")
	case <-waiting:
	}
	stdin.Close() // the old daemon ends: its lock goes with it
	select {
	case err := <-served:
		t.Fatalf("the daemon did not wait for the lock: %v", err)
	case <-opened:
	}
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.DaemonStatus(ctx)
	if err != nil || st.Pid != os.Getpid() {
		t.Fatalf("status %+v %v", st, err)
	}
	if _, err := c.DaemonStop(ctx, true); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
