package engines

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

// Terminal size the engines are run at (facts/engines.md and facts/vt.md used 120×40).
const (
	Cols = 120
	Rows = 40
)

// Session is one engine process under a pty, read the way the herd daemon reads a member:
// bytes into herd/screen, every settled screen into a herd/state tracker.
type Session struct {
	cmd     *exec.Cmd
	ptmx    *os.File
	scr     *screen.Screen
	tracker *state.Tracker
	raw     io.WriteCloser // every byte the engine wrote, for debugging; may be nil

	writeMu sync.Mutex // typed keys and query replies share the pty master
	readEOF chan struct{}
	exited  chan struct{}
	exitErr error
}

// StartSession launches cmd under a Cols×Rows pty. raw, when not nil, receives a copy of the
// output and is closed by Close.
func StartSession(cmd *exec.Cmd, table *state.Table, engineName string, raw io.WriteCloser) (*Session, error) {
	s := &Session{raw: raw, readEOF: make(chan struct{}), exited: make(chan struct{})}
	s.tracker = table.NewTracker(engineName, nil)
	s.scr = screen.New(Cols, Rows, screen.Options{
		// Answer terminal queries like a real terminal would, through the pty.
		OnReply: func(reply []byte) { _ = s.write(reply) },
		// The daemon classifies when output settles; so do we.
		OnSettle: func() { s.tracker.Observe(s.scr.Snapshot()) },
	})
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: Cols, Rows: Rows})
	if err != nil {
		s.scr.Close()
		s.tracker.Close()
		return nil, fmt.Errorf("starting %s under a pty: %w", cmd.Path, err)
	}
	s.cmd, s.ptmx = cmd, ptmx
	go s.readLoop()
	go func() {
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

func (s *Session) readLoop() {
	defer close(s.readEOF)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			if s.raw != nil {
				_, _ = s.raw.Write(buf[:n])
			}
			s.scr.Write(buf[:n])
		}
		if err != nil { // EIO once the child side is closed
			return
		}
	}
}

func (s *Session) write(p []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err := s.ptmx.Write(p)
	return err
}

// Type sends text as typed keys (one write).
func (s *Session) Type(text string) error { return s.write([]byte(text)) }

// Submit types text, pauses, then sends Enter as a separate write: TUIs that see text and
// Enter in one read treat it as a paste and keep the newline in the input.
func (s *Session) Submit(text string) error {
	if err := s.Type(text); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	return s.Type(keyEnter)
}

// Snapshot is the current screen.
func (s *Session) Snapshot() screen.Snapshot { return s.scr.Snapshot() }

// Fused is the herd's current reading of the member.
func (s *Session) Fused() state.Fused { return s.tracker.Current() }

// Tracker exposes the tracker, so hook reports can be fed to it.
func (s *Session) Tracker() *state.Tracker { return s.tracker }

// Exited reports whether the engine process has ended, and how.
func (s *Session) Exited() (bool, error) {
	select {
	case <-s.exited:
		return true, s.exitErr
	default:
		return false, nil
	}
}

// errExited is returned by waits when the engine quit under them.
var errExited = errors.New("the engine exited")

// WaitScreen polls the screen until pred holds, the engine exits, or timeout passes.
func (s *Session) WaitScreen(ctx context.Context, timeout time.Duration, pred func(screen.Snapshot) bool) (screen.Snapshot, error) {
	deadline := time.Now().Add(timeout)
	for {
		snap := s.scr.Snapshot()
		if pred(snap) {
			return snap, nil
		}
		if done, err := s.Exited(); done {
			return snap, fmt.Errorf("%w (%v)", errExited, err)
		}
		if time.Now().After(deadline) {
			return snap, context.DeadlineExceeded
		}
		select {
		case <-ctx.Done():
			return snap, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitStable waits until the screen has not changed for quiet and no synchronized frame is
// open, or until max passes (an animated screen never rests; the caller reads it anyway).
func (s *Session) WaitStable(ctx context.Context, quiet, max time.Duration) (screen.Snapshot, bool) {
	deadline := time.Now().Add(max)
	last := s.scr.Snapshot()
	since := time.Now()
	for {
		select {
		case <-ctx.Done():
			return last, false
		case <-time.After(50 * time.Millisecond):
		}
		snap := s.scr.Snapshot()
		if snap.Seq != last.Seq || snap.InSync {
			last, since = snap, time.Now()
		} else if text(snap) != text(last) {
			last, since = snap, time.Now()
		}
		if time.Since(since) >= quiet {
			return snap, true
		}
		if time.Now().After(deadline) {
			return snap, false
		}
	}
}

func text(s screen.Snapshot) string { return strings.Join(s.Lines, "\n") }

// Close kills the engine's whole process group and releases the pty and screen.
func (s *Session) Close() {
	if s.cmd != nil && s.cmd.Process != nil {
		// pty.Start makes the child a session (and group) leader: kill what it spawned too.
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
	}
	if s.ptmx != nil {
		_ = s.ptmx.Close()
	}
	select {
	case <-s.readEOF:
	case <-time.After(2 * time.Second):
	}
	s.scr.Close()
	s.tracker.Close()
	if s.raw != nil {
		_ = s.raw.Close()
	}
}
