package daemon

import (
	"sync"

	"github.com/mosh-dev/mosh/herd"
)

// eventSettle is internal: a member's screen settled (no state change). prompt --wait uses it; it
// carries no sequence number and never reaches clients.
const eventSettle = "settle"

// eventTaskEnd is internal: a task ended without a state change of its member (a queued task
// canceled or failed before it was typed, a running task canceled). prompt --wait uses it; it
// carries no sequence number and never reaches clients.
const eventTaskEnd = "taskend"

// eventTyped is internal: a prompt's text was typed into the member (Task names its task). A
// queued prompt's wait counts the member's states from here.
const eventTyped = "typed"

func internalEvent(t string) bool { return t == eventSettle || t == eventTaskEnd || t == eventTyped }

// subQueueLimit bounds the events queued for one subscriber that stopped reading; past it the
// subscription ends with an error instead of growing without bound or dropping silently.
const subQueueLimit = 1 << 16

// bus numbers events and hands them to subscribers. Its mutex is also the daemon's state lock:
// readings change and events are emitted under it, so a waiter that subscribes and reads current
// states under the same lock can never miss a change.
type bus struct {
	mu   sync.Mutex
	seq  uint64
	subs map[*busSub]struct{}
}

func newBus() *bus { return &bus{subs: map[*busSub]struct{}{}} }

type busSub struct {
	names    map[string]bool // nil: every member
	internal bool            // also receives settle events

	mu       sync.Mutex
	queue    []herd.Event
	wake     chan struct{}
	ended    bool
	overflow bool
}

// subscribeLocked registers a subscriber; the caller holds b.mu.
func (b *bus) subscribeLocked(names []string, internal bool) *busSub {
	s := &busSub{internal: internal, wake: make(chan struct{}, 1)}
	if len(names) > 0 {
		s.names = map[string]bool{}
		for _, n := range names {
			s.names[n] = true
		}
	}
	b.subs[s] = struct{}{}
	return s
}

func (b *bus) subscribe(names []string, internal bool) (*busSub, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subscribeLocked(names, internal), b.seq
}

func (b *bus) unsubscribe(s *busSub) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
	s.end()
}

// emitLocked numbers e (unless it is a settle) and queues it for every interested subscriber.
// The caller holds b.mu.
func (b *bus) emitLocked(e herd.Event) herd.Event {
	if !internalEvent(e.Type) {
		b.seq++
		e.Seq = b.seq
	}
	for s := range b.subs {
		if s.names != nil && !s.names[e.Name] {
			continue
		}
		if internalEvent(e.Type) && !s.internal {
			continue
		}
		s.push(e)
	}
	return e
}

func (b *bus) lastSeq() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

func (s *busSub) push(e herd.Event) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= subQueueLimit {
		s.overflow, s.ended = true, true
		s.queue = nil
	} else {
		s.queue = append(s.queue, e)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *busSub) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take returns the queued events, and whether the subscription ended (after the queue drained).
func (s *busSub) take() ([]herd.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q, s.ended && len(q) == 0
}
