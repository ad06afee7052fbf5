package daemon

import (
	"sync"

	"github.com/mosh-dev/mosh/herd"
)

// stateLock is the daemon's one state lock. It guards every member's reading (and its screen
// and hook readings, exited, removed), its tasks (task, lastClosed), its prompt queue and typing
// flags, a remote member's link state, and the bus's subscribers and sequence numbers. A reading
// changes and its event is emitted under it, so a waiter that subscribes and reads the current
// states under it never misses a change. Hold it briefly and never across I/O (pty writes, ledger
// writes, network calls): take what is needed, unlock, then act.
//
// The daemon's roster (d.members, d.remembered) has its own lock, d.mu, and a member's terminal
// (attachments, size) m.mu: those are not the state lock.
type stateLock struct{ mu sync.Mutex }

func (l *stateLock) lock()   { l.mu.Lock() }
func (l *stateLock) unlock() { l.mu.Unlock() }

// withState runs fn holding the state lock (no defer, as with the manual pairs it replaced). fn
// does not escape, so its closure and what it captures stay on the stack.
func (d *daemon) withState(fn func()) {
	d.state.lock()
	fn()
	d.state.unlock()
}

// readingOf is m's fused reading now (taken under the state lock).
func (d *daemon) readingOf(m *member) (r herd.Reading) {
	d.withState(func() { r = m.reading })
	return r
}

// exitReasonOf is what m's exited process left on its screen ("" while it runs).
func (d *daemon) exitReasonOf(m *member) (reason string) {
	d.withState(func() { reason = m.exitReason })
	return reason
}

// exitedOf says whether m's process exited, and with which code (under the state lock).
func (d *daemon) exitedOf(m *member) (exited bool, code int) {
	d.withState(func() { exited, code = m.exited, m.exitCode })
	return exited, code
}
