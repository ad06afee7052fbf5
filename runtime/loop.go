package runtime

import (
	"container/heap"
	"context"
	"errors"
	"flag"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/internal/queue"
)

// loop is the event loop of one VM. Only the goroutine inside loop.run touches the VM; other
// goroutines hand it work through reserved callbacks (RegisterCallback) or submit.
//
// The loop is finished when its queue is empty, no reservation is open and no timer is
// pending: Go work that holds a reservation keeps the script alive (goja_nodejs's loop does
// not wait for it, see facts/runtime.md §2.4).
type loop struct {
	vm *goja.Runtime

	// queue holds work for the loop goroutine; reserved (open reservations) is guarded by the
	// queue's lock (Update/TakeWith), so a callback that settles moves from "reserved" to
	// "queued" in one step and run never sees neither. Its wake means "the queue or the
	// reservation count changed".
	queue    queue.Q[func() error]
	reserved int

	timers     timerHeap
	timerByID  map[int64]*timer
	nextTimer  int64
	timerSeq   uint64
	rejections []*goja.Promise // promises rejected without a handler, in order

	// keepAlive keeps run waiting for submitted work even when nothing is pending (the REPL).
	keepAlive bool
	// exit is set by exit(n): the loop stops after the current callback.
	exit *exitRequest
}

func newLoop(vm *goja.Runtime) *loop {
	l := &loop{vm: vm, timerByID: map[int64]*timer{}}
	vm.SetPromiseRejectionTracker(l.trackRejection)
	return l
}

func (l *loop) trackRejection(p *goja.Promise, op goja.PromiseRejectionOperation) {
	switch op {
	case goja.PromiseRejectionReject:
		l.rejections = append(l.rejections, p)
	case goja.PromiseRejectionHandle:
		for i, q := range l.rejections {
			if q == p {
				l.rejections = append(l.rejections[:i], l.rejections[i+1:]...)
				break
			}
		}
	}
}

// takeRejections returns and forgets the promises that are still rejected without a handler.
func (l *loop) takeRejections() []*goja.Promise {
	r := l.rejections
	l.rejections = nil
	return r
}

// reserve opens a reservation; the returned func closes it exactly once (later calls do
// nothing) and queues f to run on the loop goroutine.
func (l *loop) reserve() func(func() error) {
	l.queue.Update(func(q []func() error) ([]func() error, bool) { l.reserved++; return q, false })
	var settled atomic.Bool
	return func(f func() error) {
		if settled.Swap(true) {
			// A callback settled twice is a bug in the builtin (a promise resolved twice): tests
			// panic, as k6's RegisterCallback does; the mosh binary ignores the second call.
			if inTestBinary() {
				panic("runtime: a RegisterCallback callback was called twice (a promise settled twice)")
			}
			return
		}
		l.queue.Update(func(q []func() error) ([]func() error, bool) { l.reserved--; return append(q, f), false })
	}
}

// inTestBinary reports whether this is a `go test` binary (its flags are registered), without
// linking package testing into the mosh binary.
func inTestBinary() bool { return flag.Lookup("test.v") != nil }

// submit queues f without a reservation; safe from any goroutine. Used by the REPL, whose loop
// keeps running between inputs.
func (l *loop) submit(f func() error) {
	l.queue.Push(f)
}

// errContextDone is returned by run when its context ended while it waited.
var errContextDone = errors.New("the run's context ended")

// run executes callbacks, due timers and queued work until nothing is pending (or, with
// keepAlive, until ctx ends). Each unit of work goes through step, which decides whether an
// error ends the loop: step returns a non-nil error to stop.
func (l *loop) run(ctx context.Context, step func(func() error) error) error {
	for {
		var pending int
		batch, _ := l.queue.TakeWith(func() { pending = l.reserved })

		for i, f := range batch {
			if err := step(f); err != nil {
				l.requeue(batch[i+1:])
				return err
			}
		}
		// One due timer per turn, between batches of callbacks, so that neither a stream of Go
		// results nor a busy interval starves the other.
		if t := l.dueTimer(); t != nil {
			if err := step(t.fire); err != nil {
				return err
			}
			continue
		}
		if len(batch) > 0 {
			continue // callbacks may have queued more work
		}

		if pending == 0 && len(l.timers) == 0 && !l.keepAlive {
			return nil
		}

		var timerC <-chan time.Time
		var tm *time.Timer
		if len(l.timers) > 0 {
			tm = time.NewTimer(time.Until(l.timers[0].when))
			timerC = tm.C
		}
		select {
		case <-l.queue.Wake():
		case <-timerC:
		case <-ctx.Done():
		}
		if tm != nil {
			tm.Stop()
		}
		if ctx.Err() != nil {
			return errContextDone
		}
	}
}

// requeue puts unrun callbacks back at the front of the queue so drain can still see them.
func (l *loop) requeue(rest []func() error) {
	if len(rest) == 0 {
		return
	}
	l.queue.Update(func(q []func() error) ([]func() error, bool) {
		return append(append([]func() error{}, rest...), q...), false
	})
}

// drain waits (up to grace) for the reservations still open after the run ended, and runs their
// callbacks with the VM interrupted, so their Go side can finish while no more JS runs. Builtins
// watch the run's context, which is cancelled before drain, so the wait is normally short.
func (l *loop) drain(grace time.Duration) {
	l.vm.Interrupt(errDraining)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	for {
		var pending int
		batch, _ := l.queue.TakeWith(func() { pending = l.reserved })
		for _, f := range batch {
			func() {
				defer func() { _ = recover() }()
				_ = f()
			}()
		}
		if pending == 0 && len(batch) == 0 {
			return
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-l.queue.Wake():
		case <-deadline.C:
			return
		}
	}
}

var errDraining = errors.New("the script has ended")

// timer is one setTimeout/setInterval registration.
type timer struct {
	id       int64
	when     time.Time
	seq      uint64 // ties on when fire in the order they were set
	interval time.Duration
	repeat   bool
	fn       func() error
	index    int
	loop     *loop
}

func (t *timer) fire() error {
	if t.repeat {
		t.when = time.Now().Add(t.interval)
		t.loop.timerSeq++
		t.seq = t.loop.timerSeq
		heap.Push(&t.loop.timers, t)
	} else {
		delete(t.loop.timerByID, t.id)
	}
	return t.fn()
}

func (l *loop) addTimer(d time.Duration, repeat bool, fn func() error) int64 {
	if d < time.Millisecond {
		d = time.Millisecond // as browsers and Node do: 0 means "as soon as possible", after I/O
	}
	l.nextTimer++
	l.timerSeq++
	t := &timer{id: l.nextTimer, when: time.Now().Add(d), seq: l.timerSeq, interval: d, repeat: repeat, fn: fn, loop: l}
	heap.Push(&l.timers, t)
	l.timerByID[t.id] = t
	return t.id
}

func (l *loop) clearTimer(id int64) {
	t, ok := l.timerByID[id]
	if !ok {
		return
	}
	delete(l.timerByID, id)
	t.repeat = false
	if t.index >= 0 {
		heap.Remove(&l.timers, t.index)
	}
}

// dueTimer pops the earliest timer whose time has come.
func (l *loop) dueTimer() *timer {
	if len(l.timers) == 0 || time.Now().Before(l.timers[0].when) {
		return nil
	}
	return heap.Pop(&l.timers).(*timer)
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
