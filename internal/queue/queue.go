// Package queue is the one "mutex + slice + wake channel" queue of mosh: producers that must never
// block (they may hold a lock of their own, or run on a connection's read loop) hand items to one
// consumer goroutine, which takes them in order and sleeps on a wake channel in between.
//
// It is a leaf: the runtime's event loop and the herd (its event bus, attach streams, ledger
// writer, client subscriptions, the A2A server's watches) all use it, and it knows neither.
package queue

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is what Next and Err report for a queue closed without a reason.
var ErrClosed = errors.New("queue closed")

// Q is an unbounded FIFO with one wake channel. The zero value is ready to use. Producers call
// Push (or Update) and never block; the consumer calls Take or Next and, when nothing is queued,
// waits on Wake. Close ends it: items queued before the close are still delivered, later pushes
// are refused.
type Q[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	err    error
	wake   chan struct{}
}

// New returns an empty queue (the zero value works as well).
func New[T any]() *Q[T] { return &Q[T]{wake: make(chan struct{}, 1)} }

// wakeLocked returns the wake channel, making it on first use. The caller holds q.mu.
func (q *Q[T]) wakeLocked() chan struct{} {
	if q.wake == nil {
		q.wake = make(chan struct{}, 1)
	}
	return q.wake
}

// signal wakes the consumer (at most one wake is ever pending; it never blocks).
func signal(w chan struct{}) {
	select {
	case w <- struct{}{}:
	default:
	}
}

// Push appends v and wakes the consumer. It reports false, and queues nothing, once the queue is
// closed.
func (q *Q[T]) Push(v T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, v)
	w := q.wakeLocked()
	q.mu.Unlock()
	signal(w)
	return true
}

// PushMax is Push with a bound: when limit items are already queued (a consumer that stopped
// reading), the queue is emptied and closed with err instead, and PushMax reports false.
func (q *Q[T]) PushMax(v T, limit int, err error) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	ok := len(q.items) < limit
	if ok {
		q.items = append(q.items, v)
	} else {
		q.items, q.closed, q.err = nil, true, err
	}
	w := q.wakeLocked()
	q.mu.Unlock()
	signal(w)
	return ok
}

// Update runs f under the queue's lock with the queued items and keeps what it returns (f may
// append, drop or replace; it must not block), then wakes the consumer. State that f reads or
// writes besides the items is guarded by the same lock, so a producer and the consumer can
// change a counter together with the queue. When f says close, the queue closes after the items
// it returned. Update reports false, without calling f, once the queue is closed.
func (q *Q[T]) Update(f func(items []T) (keep []T, close bool)) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	var closeNow bool
	q.items, closeNow = f(q.items)
	if closeNow {
		q.closed = true
	}
	w := q.wakeLocked()
	q.mu.Unlock()
	signal(w)
	return true
}

// Take returns every queued item, oldest first, and empties the queue. closed says that no item
// will follow these (the queue was closed): the consumer handles them, then stops.
func (q *Q[T]) Take() (items []T, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items = q.items
	q.items = nil
	return items, q.closed
}

// TakeWith is Take that also runs f under the queue's lock (f reads state that producers change
// in Update, such as a count of work still to come).
func (q *Q[T]) TakeWith(f func()) (items []T, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items = q.items
	q.items = nil
	f()
	return items, q.closed
}

// Wake is the channel the consumer waits on when Take returned nothing: it receives after a push,
// an update or the close.
func (q *Q[T]) Wake() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.wakeLocked()
}

// Next returns the oldest item, waiting for one. Once the queue is closed and drained it returns
// the close's error (ErrClosed when none was given); when ctx ends first, ctx's error.
func (q *Q[T]) Next(ctx context.Context) (T, error) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v := q.items[0]
			var zero T
			q.items[0] = zero
			q.items = q.items[1:]
			q.mu.Unlock()
			return v, nil
		}
		closed, err, w := q.closed, q.err, q.wakeLocked()
		q.mu.Unlock()
		if closed {
			var zero T
			if err == nil {
				err = ErrClosed
			}
			return zero, err
		}
		select {
		case <-w:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
}

// Close ends the queue: items already queued are still delivered, later pushes are refused. The
// first Close's err is kept (nil is allowed). Closing twice is harmless.
func (q *Q[T]) Close(err error) {
	q.mu.Lock()
	if !q.closed {
		q.closed, q.err = true, err
	}
	w := q.wakeLocked()
	q.mu.Unlock()
	signal(w)
}

// Closed reports whether the queue was closed.
func (q *Q[T]) Closed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// Err is the error the queue was closed with (nil while open, or when closed without one).
func (q *Q[T]) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// Len is the number of items queued now.
func (q *Q[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
