package engines

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
)

// Terminal size the members run at (facts/engines.md and facts/vt.md used 120×40).
const (
	Cols = 120
	Rows = 40
)

// Mirror is what `mosh attach` shows of a member: the daemon's attach stream (a redraw of the
// member's screen, then every byte it writes) fed into a local herd/screen of the same size. The
// script reads it to know when start-up is over and when the screen has come to rest, and saves
// it as fixtures; the state under test is always the daemon's, never this copy's.
type Mirror struct {
	stream *herd.AttachStream
	scr    *screen.Screen
	raw    io.WriteCloser // every byte received, for debugging; may be nil

	mu sync.Mutex
	// settledText/settledAt: the last settled frame whose text differs from the one before it,
	// and when it settled — when the screen reached the picture it shows now.
	settledText string
	settledAt   time.Time
	ended       chan struct{}
	endErr      error
}

// AttachMirror attaches to a member at Cols×Rows. raw, when not nil, receives a copy of the output
// and is closed by Close.
func AttachMirror(ctx context.Context, c *herd.Client, name string, raw io.WriteCloser) (*Mirror, error) {
	st, err := c.Attach(ctx, name, Cols, Rows)
	if err != nil {
		return nil, fmt.Errorf("attaching to member %s: %w", name, err)
	}
	m := &Mirror{stream: st, raw: raw, ended: make(chan struct{}), settledAt: time.Now()}
	m.scr = screen.New(Cols, Rows, screen.Options{
		// Terminal queries are the daemon's screen's to answer (it writes to the member's pty):
		// answering them again from here would type the replies into the engine.
		OnSettled: func(snap screen.Snapshot) {
			if snap.InSync {
				return
			}
			text := snap.Text()
			m.mu.Lock()
			if text != m.settledText {
				m.settledText, m.settledAt = text, time.Now()
			}
			m.mu.Unlock()
		},
	})
	go m.readLoop()
	return m, nil
}

func (m *Mirror) readLoop() {
	buf := make([]byte, 32<<10)
	var err error
	for {
		var n int
		n, err = m.stream.Read(buf)
		if n > 0 {
			if m.raw != nil {
				_, _ = m.raw.Write(buf[:n])
			}
			m.scr.Write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) && m.stream.ExitCode != nil {
		err = fmt.Errorf("exit code %d", *m.stream.ExitCode)
	}
	m.mu.Lock()
	m.endErr = err
	m.mu.Unlock()
	close(m.ended)
}

// Snapshot is the mirrored screen now.
func (m *Mirror) Snapshot() screen.Snapshot { return m.scr.Snapshot() }

// RestingSince is when the screen last changed to the picture it shows now (as of the last
// settled frame).
func (m *Mirror) RestingSince() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.settledAt
}

// Ended reports whether the attach stream ended (the member exited, or the daemon went away).
func (m *Mirror) Ended() (bool, error) {
	select {
	case <-m.ended:
		m.mu.Lock()
		defer m.mu.Unlock()
		return true, m.endErr
	default:
		return false, nil
	}
}

// errEnded is returned by waits when the member's stream ended under them.
var errEnded = errors.New("the member's terminal stream ended (the engine exited, or the daemon stopped)")

// WaitScreen polls the mirrored screen until pred holds, the stream ends, or timeout passes.
func (m *Mirror) WaitScreen(ctx context.Context, timeout time.Duration, pred func(screen.Snapshot) bool) (screen.Snapshot, error) {
	deadline := time.Now().Add(timeout)
	for {
		snap := m.scr.Snapshot()
		if pred(snap) {
			return snap, nil
		}
		if done, err := m.Ended(); done {
			return snap, fmt.Errorf("%w (%v)", errEnded, err)
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

// WaitStable waits until no output has arrived for quiet and no synchronized frame is open,
// or until max passes (an animated screen never rests; the caller reads it anyway).
func (m *Mirror) WaitStable(ctx context.Context, quiet, max time.Duration) (screen.Snapshot, bool) {
	deadline := time.Now().Add(max)
	last := m.scr.Snapshot()
	since := time.Now()
	for {
		select {
		case <-ctx.Done():
			return last, false
		case <-time.After(50 * time.Millisecond):
		}
		snap := m.scr.Snapshot()
		// Any output counts, not only a changed picture: OpenCode keeps writing while it works
		// on a turn whose screen looks still.
		if snap.InSync || snap.Seq != last.Seq || strings.Join(snap.Lines, "\n") != strings.Join(last.Lines, "\n") {
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

// Close detaches (the member keeps running) and releases the local screen.
func (m *Mirror) Close() {
	_ = m.stream.Close()
	select {
	case <-m.ended:
	case <-time.After(2 * time.Second):
	}
	m.scr.Close()
	if m.raw != nil {
		_ = m.raw.Close()
	}
}
