package daemon

import (
	"errors"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/queue"
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

// bus numbers events and hands them to subscribers. Its subscribers and sequence are guarded by
// the daemon's state lock (statelock.go): readings change and events are emitted under it, so a
// waiter that subscribes and reads current states under the same lock can never miss a change.
type bus struct {
	state *stateLock
	seq   uint64
	subs  map[*busSub]struct{}
}

func newBus(state *stateLock) *bus { return &bus{state: state, subs: map[*busSub]struct{}{}} }

type busSub struct {
	names    map[string]bool // nil: every member
	internal bool            // also receives settle events
	screens  bool            // receives settle events as herd.EventScreen (a client asked)

	// q holds the events not yet taken; it closes when the subscription ends, with
	// errSubOverflow when the subscriber fell more than subQueueLimit events behind.
	q queue.Q[herd.Event]
}

// errSubOverflow ends a subscription whose reader fell more than subQueueLimit events behind.
var errSubOverflow = errors.New("the subscriber fell too far behind")

// subscribeLocked registers a subscriber; the caller holds the state lock.
func (b *bus) subscribeLocked(names []string, internal bool) *busSub {
	s := &busSub{internal: internal}
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
	b.state.lock()
	defer b.state.unlock()
	return b.subscribeLocked(names, internal), b.seq
}

// subscribeScreens is subscribe for a client that also wants herd.EventScreen events.
func (b *bus) subscribeScreens(names []string) (*busSub, uint64) {
	b.state.lock()
	defer b.state.unlock()
	s := b.subscribeLocked(names, false)
	s.screens = true
	return s, b.seq
}

func (b *bus) unsubscribe(s *busSub) {
	b.state.lock()
	delete(b.subs, s)
	b.state.unlock()
	s.end()
}

// emitLocked numbers e (unless it is a settle) and queues it for every interested subscriber.
// The caller holds the state lock.
func (b *bus) emitLocked(e herd.Event) herd.Event {
	if !internalEvent(e.Type) {
		b.seq++
		e.Seq = b.seq
	}
	for s := range b.subs {
		if s.names != nil && !s.names[e.Name] {
			continue
		}
		switch {
		case e.Type == eventSettle && s.screens:
			se := e
			se.Type = herd.EventScreen
			s.push(se)
			continue
		case internalEvent(e.Type) && !s.internal:
			continue
		}
		s.push(e)
	}
	return e
}

func (b *bus) lastSeq() uint64 {
	b.state.lock()
	defer b.state.unlock()
	return b.seq
}

func (s *busSub) push(e herd.Event) { s.q.PushMax(e, subQueueLimit, errSubOverflow) }

func (s *busSub) end() { s.q.Close(nil) }

// take returns the queued events, and whether the subscription ended (after the queue drained).
func (s *busSub) take() ([]herd.Event, bool) {
	q, closed := s.q.Take()
	return q, closed && len(q) == 0
}

// wake receives when events were queued or the subscription ended.
func (s *busSub) wake() <-chan struct{} { return s.q.Wake() }

// overflowed says whether the subscription ended because its reader fell too far behind.
func (s *busSub) overflowed() bool { return errors.Is(s.q.Err(), errSubOverflow) }
