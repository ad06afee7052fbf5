package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/screen"
)

const (
	// writeChunk is the most written to the pty in one call; writeStall is how long one chunk may
	// wait for a member that is not reading its input before the write fails.
	writeChunk = 4096
	writeStall = 30 * time.Second
	// killGrace is how long a member has to exit after SIGHUP+SIGTERM before SIGKILL.
	killGrace = 2 * time.Second
	// drainGrace bounds how long process exit waits for the last output to be read, when a
	// background child keeps the terminal open.
	drainGrace = time.Second
)

// launchSpec is everything needed to start one member.
type launchSpec struct {
	name   string
	engine string
	spec   engineSpec
	known  bool // the engine is in the table (prompts may use bracketed paste)
	bin    string
	args   []string // the member's own arguments (what the manifest remembers)
	// resumeArgs go before args for this launch only (restore --resume): never remembered, so a
	// second restore --resume does not stack them.
	resumeArgs []string
	cwd        string
	env        []string
	autonomous bool
	cols, rows int
	created    time.Time
}

// member is one local session on the pty substrate.
type member struct {
	d          *daemon
	name       string
	engine     string
	spec       engineSpec
	known      bool
	bin        string
	args       []string
	env        []string // the caller's environment it was launched with (before the herd's own)
	cwd        string
	autonomous bool
	created    time.Time

	// kind is what the member is: a process on a pty here (ptyMember) or an agent reached over
	// the network (remoteMember). The daemon's verbs call it, never branch on it (kind.go).
	kind memberKind
	// remote is the link of a remote member (remote.go), which has no process, pty, screen or
	// tracker; only the remote member's own code (remote.go) reads it.
	remote *remoteLink

	// The process on a pty: nil for a remote member, so only the pty member's code can use it.
	*ptyProc

	// Guarded by d.state (the state lock, statelock.go).
	reading    herd.Reading
	stateSince time.Time // when reading.State last changed (zero: since created); setReadingLocked keeps it
	screenR    *herd.Reading
	hookR      *herd.Reading
	exited     bool
	removed    bool // killed or pruned: the name no longer refers to this member
	exitCode   int
	exitReason string      // the last non-blank lines of its screen when it exited (exitReason)
	task       *openTask   // the last prompt's task until it ends (tasks_record.go)
	lastClosed *closedTask // the task that ended last, until the next prompt
	// The prompt queue (queue.go): prompts waiting for the member to read idle or done, and
	// whether a prompt is being typed right now (the terminal is taken).
	queue   []*queuedPrompt
	typing  string // the task id being typed, "" when none ("-" while its id is unknown)
	killing bool   // kill is ending the process: its open task ends canceled, not failed
	hooked  bool   // the engine has reported a hook: its own word says when it took a prompt up
	// hooksInstalled: the herd's hooks are installed for the member's engine in its HOME, so its
	// turns' ends are expected from a hook (tasks_record.go). Set at start.
	hooksInstalled bool
	// graceEnds counts the tasks that ended on the screen's word after the hook grace, with no hook
	// ever reported: installed hooks that do not fire (doctor says so).
	graceEnds int
	// staleHook: the hook report being applied belongs to the task before the running one
	// (hookArrived sets it, hReport clears it).
	staleHook bool

	// question is what the member asks while it reads blocked (question.go), nil otherwise;
	// hookAsked is the question the blocked state's hook payload carried, kept while the member
	// reads blocked (a later Notification's payload says less).
	question  *herd.Question
	hookAsked *state.Asked
	// answerPending: a keys answer went to the question on screen (answer.go); another answer is
	// refused until the member leaves blocked or its screen draws a dialog anew.
	answerPending bool

	// ignored are the last reports not applied (reporter.go), for explain.
	ignored []herd.IgnoredReport

	// Guarded by mu.
	mu       sync.Mutex
	attached map[*attachment]struct{}
	ended    bool // the process exited and attachments were told
	endCode  int
	cols     int
	rows     int

	readDone  chan struct{} // the read loop ended
	exitDone  chan struct{} // the process was reaped and its exit published
	queueWake chan struct{} // the queue may be able to move (queue.go)
	// settleWake: a screen settled or a hook reported (submit.go watches a typed prompt).
	settleWake chan struct{}
	// outputWake: the engine wrote to its terminal (writePresses waits for a key to be taken).
	outputWake chan struct{}

	// lastReport is when the engine last reported a hook (guarded by the state lock); lastInput
	// when keys other than a typed prompt's last reached the terminal (send-keys, attach input),
	// in Unix nanoseconds.
	lastReport time.Time
	lastInput  atomic.Int64
}

// ptyProc is what only a member on a pty has: its process, terminal, screen and state tracker,
// and the hook reports from inside it. A remote member has none (its link is remoteLink).
type ptyProc struct {
	cmd  *exec.Cmd
	ptmx *os.File
	pid  int
	scr  *screen.Screen
	trk  tracker

	ttyName string // the terminal's path (/dev/pts/N), for the foreground probe
	nonce   string // MOSH_HERD_NONCE of this launch: a report carrying another is not this member's

	// writeMu keeps a prompt's text and its Enter together: no other write lands between them.
	writeMu sync.Mutex

	// menuSince is when the settled screen began to read blocked (zero while it does not):
	// an answer waits for the engine's menu settle from then (answer.go). Guarded by d.state.
	menuSince time.Time

	// reportMu guards enginePid: the engine process whose hooks report for this member
	// (reporter.go; 0 until the first report from inside the member).
	reportMu  sync.Mutex
	enginePid int
}

// memberEnv is the caller's environment minus the engine's stripped names and any stale herd
// variables, plus MOSH_HERD_NAME, MOSH_HERD_DIR and MOSH_HERD_BIN (self: the daemon's own binary,
// left out when unknown). Nothing else of the daemon's own environment.
func memberEnv(callerEnv []string, strip []string, name, herdDir, self string) []string {
	drop := map[string]bool{"MOSH_HERD_NAME": true, "MOSH_HERD_DIR": true, herd.EnvNonce: true, herd.EnvBin: true}
	for _, k := range strip {
		drop[k] = true
	}
	out := make([]string, 0, len(callerEnv)+3)
	hasTerm := false
	for _, kv := range callerEnv {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] {
			continue
		}
		if k == "TERM" {
			hasTerm = true
		}
		out = append(out, kv)
	}
	if !hasTerm {
		// A member's terminal is the daemon's VT emulator; without TERM, TUIs fall back to dumb
		// output. Only added when the caller has none.
		out = append(out, "TERM=xterm-256color")
	}
	out = append(out, "MOSH_HERD_NAME="+name, "MOSH_HERD_DIR="+herdDir)
	if self != "" {
		out = append(out, herd.EnvBin+"="+self)
	}
	return out
}

// startMember launches ls under a new pty. The member is not yet registered with the daemon.
func (d *daemon) startMember(ls launchSpec) (*member, error) {
	cols, rows := ls.cols, ls.rows
	if cols <= 0 || rows <= 0 {
		cols, rows = herd.DefaultCols, herd.DefaultRows
	}
	m := &member{
		d: d, name: ls.name, engine: ls.engine, spec: ls.spec, known: ls.known, bin: ls.bin, args: ls.args, env: ls.env, cwd: ls.cwd,
		autonomous: ls.autonomous, created: ls.created, cols: cols, rows: rows, ptyProc: &ptyProc{},
		attached: map[*attachment]struct{}{}, readDone: make(chan struct{}), exitDone: make(chan struct{}), queueWake: make(chan struct{}, 1),
		settleWake: make(chan struct{}, 1), outputWake: make(chan struct{}, 1),
		reading: herd.Reading{State: herd.StateUnknown, Authority: herd.AuthorityScreen},
	}
	m.kind = ptyMember{m}
	if ls.spec.Hooks {
		if e, ok := d.engines.Table().Lookup(ls.engine); ok {
			m.hooksInstalled = e.HooksInstalled(envHome(ls.env))
		}
	}
	m.trk = d.engines.NewTracker(ls.engine, func() { d.refresh(m, false) })
	m.scr = screen.New(cols, rows, screen.Options{History: herd.HistoryLines, OnReply: m.writeReply, OnSettled: m.onSettled, OnRest: d.releaseMemoryAtRest})

	master, tty, err := pty.Open()
	if err != nil {
		m.scr.Close()
		return nil, exitcode.New(exitcode.Infra, "cannot open a pty for %s: %v (is /dev/ptmx available?)", ls.name, err)
	}
	defer tty.Close()
	_ = unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	cmd := exec.Command(ls.bin, append(append([]string(nil), ls.resumeArgs...), ls.args...)...)
	cmd.Path = ls.bin
	cmd.Dir = ls.cwd
	m.nonce = newNonce()
	cmd.Env = append(memberEnv(ls.env, ls.spec.StripEnv, ls.name, d.dir, d.self), herd.EnvNonce+"="+m.nonce)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		master.Close()
		m.scr.Close()
		return nil, exitcode.New(exitcode.Usage, "cannot start %s: %v (check the command and --cwd)", ls.bin, err)
	}
	// pty.Open leaves the master in blocking mode (it calls Fd()). A non-blocking copy goes
	// through Go's poller: Close interrupts Read, and writes honour deadlines and retry EAGAIN.
	m.ptmx, err = nonBlockingCopy(master)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		m.scr.Close()
		return nil, exitcode.New(exitcode.Infra, "cannot set up the pty of %s: %v", ls.name, err)
	}
	m.cmd, m.pid, m.ttyName = cmd, cmd.Process.Pid, tty.Name()
	return m, nil
}

func nonBlockingCopy(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// run starts the member's read and wait loops; call once it is registered.
func (m *member) run() {
	m.trk.SetProbe(m.probeForeground)
	go m.readLoop()
	go m.waitLoop()
	go m.d.pumpQueue(m)
}

func (m *member) readLoop() {
	defer close(m.readDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := m.ptmx.Read(buf)
		if n > 0 {
			m.mu.Lock()
			m.scr.Write(buf[:n])
			for a := range m.attached {
				a.output(buf[:n])
			}
			m.mu.Unlock()
			select {
			case m.outputWake <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return // EIO once the last process holding the terminal is gone, or Close
		}
	}
}

func (m *member) waitLoop() {
	err := m.cmd.Wait()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else {
				code = ee.ExitCode()
			}
		} else {
			code = -1
		}
	}
	// Let the final output reach the screen before the state says done.
	select {
	case <-m.readDone:
	case <-time.After(drainGrace):
	}
	m.ptmx.Close()
	<-m.readDone
	m.d.memberExited(m, code) // ends the queued prompts too
	m.mu.Lock()
	m.ended, m.endCode = true, code
	for a := range m.attached {
		a.exit(code)
	}
	m.mu.Unlock()
	close(m.exitDone)
}

// onSettled runs when the screen's output settled: classify that snapshot (never a torn
// synchronized-output frame) and publish any change.
func (m *member) onSettled(snap screen.Snapshot) {
	now := time.Now()
	m.trk.Screen(snap, now)
	// When the question appeared, before the settle event wakes an answer waiting for it.
	_, scr, _ := m.trk.Readings(now)
	m.d.withState(func() {
		switch {
		case scr == nil || scr.State != herd.StateBlocked:
			m.menuSince = time.Time{}
		case m.menuSince.IsZero():
			m.menuSince = now
			m.answerPending = false // a dialog drawn anew asks again
		}
	})
	m.d.refresh(m, true)
	m.pokeSettle()
}

// writeReply sends the emulator's answers to terminal queries back to the program.
func (m *member) writeReply(b []byte) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	_ = m.writeLocked(b)
}

// writeLocked writes b in chunks, each with a deadline so a member that stopped reading its input
// fails the write instead of hanging the caller. Go's poller retries EAGAIN and partial writes.
func (m *member) writeLocked(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		_ = m.ptmx.SetWriteDeadline(time.Now().Add(writeStall))
		k, err := m.ptmx.Write(b[:n])
		b = b[k:]
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return exitcode.New(exitcode.Infra, "%s is not reading its input (a write stalled for %s): see `mosh herd read %s`", m.name, writeStall, m.name)
			}
			if errors.Is(err, os.ErrClosed) {
				return exitcode.New(exitcode.Gone, "%s has exited", m.name)
			}
			return exitcode.New(exitcode.Infra, "writing to %s failed: %v", m.name, err)
		}
	}
	return nil
}

// write sends raw bytes (send-keys, attach input).
func (m *member) write(b []byte) error {
	m.lastInput.Store(time.Now().UnixNano())
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	return m.writeLocked(b)
}

// writePresses writes each key press on its own (send-keys, interrupt): two Escapes in one read
// are one press to some engines (OpenCode). A press after the first waits for the engine's key
// gap and for the engine to have taken the press before it from its terminal (keyTaken), so a
// loaded engine that reads late still reads them apart. The write lock is taken per press, so
// terminal replies are not held up by the pause. It returns the bytes written.
func (m *member) writePresses(ctx context.Context, presses [][]byte) (int, error) {
	n := 0
	for i, b := range presses {
		if i > 0 {
			if err := m.keyTaken(ctx); err != nil {
				return n, exitcode.New(exitcode.Interrupted, "send-keys to %s was canceled after %d of %d keys", m.name, i, len(presses))
			}
		}
		select { // output from before this press says nothing about it
		case <-m.outputWake:
		default:
		}
		if err := m.write(b); err != nil {
			return n, err
		}
		n += len(b)
	}
	return n, nil
}

// keyTakenBound bounds how long a press waits for the engine to take the one before it: an
// engine that reads nothing (stopped, or at rest and silent) gets the next key then anyway.
const keyTakenBound = 2 * time.Second

// keyTaken returns once the key gap has passed and the engine has read what was written to its
// terminal: nothing waits unread in the terminal's input queue. It looks again each time the
// engine writes to the terminal (its reaction to the key), never on a timer, and gives up at
// keyTakenBound. An error only when ctx ends.
func (m *member) keyTaken(ctx context.Context) error {
	gap := time.NewTimer(m.spec.keyGap())
	defer gap.Stop()
	select {
	case <-gap.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	bound := time.NewTimer(keyTakenBound)
	defer bound.Stop()
	for m.inputUnread() {
		select {
		case <-m.outputWake:
		case <-m.readDone:
			return nil
		case <-bound.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// typePrompt writes text, then Enter as a separate write: TUIs treat a CR arriving in the same
// read as pasted text as part of the text. Text goes in bracketed paste when the program asked
// for it (mode 2004) and the engine table allows it, so newlines inside the prompt do not submit.
func (m *member) typePrompt(text string) error {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	body := []byte(text)
	if m.scr.BracketedPaste() && (m.spec.BracketedPaste || !m.known) {
		body = append(append([]byte("\x1b[200~"), body...), "\x1b[201~"...)
	}
	if err := m.writeLocked(body); err != nil {
		return err
	}
	return m.writeLocked([]byte("\r"))
}

func (m *member) resize(cols, rows int) {
	cols, rows = herd.ClampSize(cols), herd.ClampSize(rows)
	m.mu.Lock()
	if cols == m.cols && rows == m.rows {
		m.mu.Unlock()
		return
	}
	m.cols, m.rows = cols, rows
	m.mu.Unlock()
	if rc, err := m.ptmx.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_ = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
		})
	}
	m.scr.Resize(cols, rows)
}

func (m *member) size() (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cols, m.rows
}

func (m *member) attachedCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.attached)
}

// terminate ends the member (its process, or the link to a remote).
func (m *member) terminate() { m.kind.terminate() }

// terminate ends the process group: SIGHUP+SIGTERM, then SIGKILL after killGrace.
func (p ptyMember) terminate() {
	m := p.member
	select {
	case <-m.exitDone:
		return
	default:
	}
	_ = syscall.Kill(-m.pid, syscall.SIGHUP)
	_ = syscall.Kill(-m.pid, syscall.SIGTERM)
	select {
	case <-m.exitDone:
		return
	case <-time.After(killGrace):
	}
	_ = syscall.Kill(-m.pid, syscall.SIGKILL)
	_ = syscall.Kill(m.pid, syscall.SIGKILL)
	<-m.exitDone
}

// envHome is the HOME the member runs with: the caller's, else the daemon's.
func envHome(env []string) string {
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if home == "" {
		home = os.Getenv("HOME")
	}
	return home
}

// setReadingLocked sets the member's fused reading and, when its state changes, when that state
// began (the row's StateSinceMs). The caller holds the state lock.
func (m *member) setReadingLocked(r herd.Reading, now time.Time) {
	if r.State != m.reading.State {
		m.stateSince = now
	}
	m.reading = r
}

// stateSinceLocked is when the member's current state began: its last change, else its creation.
func (m *member) stateSinceLocked() time.Time {
	if m.stateSince.IsZero() {
		return m.created
	}
	return m.stateSince
}
