//go:build !windows

package main

// The terminal side of `mosh attach`: the user's terminal goes raw, every input byte goes to the
// member and every output byte comes back, until the detach key (Ctrl-], 0x1d, the same key as
// telnet and moshcode's pty attach) or the member's end. The daemon redraws the member's screen
// when the attach starts, so nothing is replayed here.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/muesli/cancelreader"
	"golang.org/x/term"
)

// detachKey is Ctrl-]. It is never forwarded to the member.
const detachKey = 0x1d

// attachStream is the daemon side of an attach session.
type attachStream interface {
	io.Reader // the member's terminal output
	io.Writer // keystrokes for the member
	Resize(cols, rows int) error
	Close() error
}

// attachEnd says why a passthrough session ended.
type attachEnd int

const (
	endDetached attachEnd = iota // the user pressed the detach key
	endClosed                    // the daemon closed the stream (member exited, killed, daemon stopped)
	endInputEOF                  // the user's input ended (only without a terminal, in tests)
)

// splitDetach returns the bytes to forward from one input chunk and whether the chunk contained
// the detach key (everything after it is dropped: the user asked to leave).
func splitDetach(chunk []byte) (forward []byte, detach bool) {
	if i := bytes.IndexByte(chunk, detachKey); i >= 0 {
		return chunk[:i], true
	}
	return chunk, false
}

// pumpAttach copies in → stream (stopping at the detach key) and stream → out until one side
// ends or ctx is cancelled (SIGTERM). It does not touch terminal modes; runAttachTerminal does.
func pumpAttach(ctx context.Context, in io.Reader, out io.Writer, s attachStream) (attachEnd, error) {
	type result struct {
		end attachEnd
		err error
	}
	done := make(chan result, 2)
	var once sync.Once
	finish := func(r result) { once.Do(func() { done <- r }) }

	go func() {
		_, err := io.Copy(out, s)
		if err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
			finish(result{endClosed, err})
			return
		}
		finish(result{endClosed, nil})
	}()
	go func() {
		buf := make([]byte, 32*1024)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				fwd, detach := splitDetach(buf[:n])
				if len(fwd) > 0 {
					if _, werr := s.Write(fwd); werr != nil {
						finish(result{endClosed, nil})
						return
					}
				}
				if detach {
					finish(result{endDetached, nil})
					return
				}
			}
			if err != nil {
				finish(result{endInputEOF, nil})
				return
			}
		}
	}()
	select {
	case r := <-done:
		return r.end, r.err
	case <-ctx.Done():
		return endDetached, nil
	}
}

// terminalSize returns the size of the terminal on fd, or 0,0 when it cannot be read.
func terminalSize(fd int) (cols, rows int) {
	c, r, err := term.GetSize(fd)
	if err != nil {
		return 0, 0
	}
	return c, r
}

// Terminal modes around an attach. The session runs on the alternate screen, so detaching gives
// the user back the shell screen they left (as tmux and screen do); on the way out every mode a
// member may have switched on is switched off: mouse reporting, bracketed paste, application
// cursor keys and keypad, a hidden cursor, colours.
const (
	enterAttachScreen = "\x1b[?1049h\x1b[H\x1b[2J"
	leaveAttachScreen = "\x1b[0m\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>\x1b[?1049l"
)

// runAttachTerminal puts the terminal on fd into raw mode, forwards window-size changes, pumps
// bytes, and restores the terminal before returning, whatever happened. screen says whether out
// is that terminal (then the alternate screen is used and reset on the way out).
func runAttachTerminal(ctx context.Context, in *os.File, out io.Writer, screen bool, s attachStream) (attachEnd, error) {
	fd := int(in.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return endClosed, err
	}
	if screen {
		_, _ = io.WriteString(out, enterAttachScreen)
	}
	defer func() {
		if screen {
			_, _ = io.WriteString(out, leaveAttachScreen)
		}
		_ = term.Restore(fd, old) // best effort on the way out
	}()

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	stop := make(chan struct{})
	defer func() {
		signal.Stop(winch)
		close(stop)
	}()
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-winch:
				if c, r := terminalSize(fd); c > 0 && r > 0 {
					_ = s.Resize(c, r) // a failed resize only leaves the old size
				}
			}
		}
	}()
	// The input is read through a cancelable reader: when the member ends, the read pending on
	// the terminal is called off, so no keystroke typed after the session goes to it (top reads
	// the terminal again once an attach from it ends).
	var input io.Reader = in
	if cr, err := cancelreader.NewReader(in); err == nil {
		r := &heldReader{r: cr}
		input = r
		defer func() {
			cr.Cancel()
			// Close only once the read in flight has returned: closed under it, its epoll
			// descriptor's number can be reused by the next reader of the terminal (top's), and
			// the stale read would take that reader's next key.
			r.mu.Lock()
			_ = cr.Close()
			r.mu.Unlock()
		}()
	}
	return pumpAttach(ctx, input, out, s)
}

// heldReader holds a read lock while a Read runs, so its owner can wait for the read in flight.
type heldReader struct {
	mu sync.RWMutex
	r  io.Reader
}

func (h *heldReader) Read(p []byte) (int, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.r.Read(p)
}

// isTerminalFile reports whether f is a terminal (attach refuses anything else).
func isTerminalFile(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
