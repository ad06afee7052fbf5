package a2aserve

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/queue"
)

// errDisconnected is what a request gets while the daemon connection is down.
var errDisconnected = errors.New("the herd daemon is not answering; mosh herd serve reconnects on its own (check it with `mosh herd daemon status`)")

// conn keeps one herd.Client and one subscription to every member's events on it. The events
// wake the Waits watching a member and invalidate closed tasks read before them; their end tells
// us the daemon went away (then we redial in the background). The roster is the daemon's: every
// read asks it (`herd list`).
type conn struct {
	redial func(ctx context.Context) (*herd.Client, error)

	mu      sync.Mutex
	c       *herd.Client    // nil while disconnected
	auto    map[string]bool // member → autonomous, as last listed (a killed member leaves the roster)
	watches map[*watch]struct{}
	up      chan struct{} // closed while connected; replaced by an open one on disconnect

	// Closed tasks are cached: the ledger does not change them, except that a member's next
	// events may (a hook's final message replacing the screen artifact, retention pruning), so
	// an entry lives only while its member has had no event and the connection is the same.
	memberGen map[string]uint64
	epoch     uint64
	tasks     map[string]cachedTask

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// watch collects one member's events for one Wait or Cancel. The queue is unbounded but lives
// only as long as the call that registered it; it closes with errDisconnected when the
// connection ends.
type watch struct {
	member string
	q      queue.Q[herd.Event]
}

func (w *watch) push(ev herd.Event) { w.q.Push(ev) }

func (w *watch) end(err error) { w.q.Close(err) }

// next returns the member's next event, or why there will be none.
func (w *watch) next(ctx context.Context) (herd.Event, error) { return w.q.Next(ctx) }

func newConn(ctx context.Context, c *herd.Client, redial func(ctx context.Context) (*herd.Client, error)) (*conn, error) {
	k := &conn{redial: redial, auto: map[string]bool{}, watches: map[*watch]struct{}{},
		memberGen: map[string]uint64{}, tasks: map[string]cachedTask{},
		up: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	close(k.up)
	sub, err := c.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	k.c = c
	go k.run(c, sub)
	return k, nil
}

// run pumps events until the connection ends, then redials (when it can) and starts over.
func (k *conn) run(c *herd.Client, sub *herd.Subscription) {
	defer close(k.done)
	backoff := 200 * time.Millisecond
	for {
		if sub != nil {
			for ev := range sub.Events() {
				k.onEvent(ev)
			}
			k.disconnect(c)
			sub = nil
		}
		if k.redial == nil {
			return
		}
		select {
		case <-k.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		nc, err := k.redial(ctx)
		if err == nil {
			if sub, err = nc.Subscribe(ctx); err != nil {
				nc.Close()
			}
		}
		cancel()
		if err != nil {
			continue
		}
		c = nc
		backoff = 200 * time.Millisecond
		k.mu.Lock()
		k.c = c
		close(k.up)
		k.mu.Unlock()
	}
}

func (k *conn) onEvent(ev herd.Event) {
	k.mu.Lock()
	k.memberGen[ev.Name]++
	for w := range k.watches {
		if w.member == ev.Name {
			w.push(ev)
		}
	}
	k.mu.Unlock()
}

// disconnect forgets a dead client and ends every watch on it: their callers answer with what
// they know rather than waiting for events that cannot come.
func (k *conn) disconnect(c *herd.Client) {
	k.mu.Lock()
	if k.c == c {
		k.c = nil
		k.epoch++
		k.tasks = map[string]cachedTask{}
		k.up = make(chan struct{})
	}
	ws := make([]*watch, 0, len(k.watches))
	for w := range k.watches {
		ws = append(ws, w)
	}
	k.mu.Unlock()
	for _, w := range ws {
		w.end(errDisconnected)
	}
	c.Close()
}

func (k *conn) close() {
	k.mu.Lock()
	c := k.c
	k.mu.Unlock()
	k.stopOnce.Do(func() { close(k.stop) }) // two closers at once must not both close it
	if c != nil {
		c.Close() // ends the subscription, so run returns
	}
	<-k.done
}

func (k *conn) client() (*herd.Client, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c == nil {
		return nil, errDisconnected
	}
	return k.c, nil
}

// connected returns a channel that is closed while a daemon connection is up.
func (k *conn) connected() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.up
}

// watchMember starts collecting member's events. Register before acting (typing, sending keys)
// so the member's reaction cannot slip past.
func (k *conn) watchMember(member string) (*watch, func()) {
	w := &watch{member: member}
	k.mu.Lock()
	if k.c == nil {
		w.end(errDisconnected)
	}
	k.watches[w] = struct{}{}
	k.mu.Unlock()
	return w, func() {
		k.mu.Lock()
		delete(k.watches, w)
		k.mu.Unlock()
	}
}

// members returns the roster as the daemon lists it now, noting who is autonomous.
func (k *conn) members(ctx context.Context) ([]herd.Member, error) {
	c, err := k.client()
	if err != nil {
		return nil, err
	}
	ms, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	for _, m := range ms {
		k.auto[m.Name] = m.Autonomous
	}
	k.mu.Unlock()
	return ms, nil
}

// autonomous says whether member's tasks must be treated as an autonomous member's. A member
// this server never saw (killed before it looked) counts as autonomous: hiding a task is the
// safe mistake.
func (k *conn) autonomous(ctx context.Context, member string) bool {
	k.mu.Lock()
	a, ok := k.auto[member]
	k.mu.Unlock()
	if ok {
		return a
	}
	if _, err := k.members(ctx); err != nil {
		return true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	a, ok = k.auto[member]
	return a || !ok
}

// maxCachedTasks bounds the closed-task cache; past it the cache starts over.
const maxCachedTasks = 4096

type cachedTask struct {
	t     herd.Task
	gen   uint64 // the member's event count when it was read
	epoch uint64
}

// task reads a task through the cache: a closed task read since its member's last event is
// served from memory, anything else is asked of the daemon (`herd task`, which reconciles).
func (k *conn) task(ctx context.Context, c *herd.Client, id string) (*herd.Task, error) {
	k.mu.Lock()
	if e, ok := k.tasks[id]; ok && e.epoch == k.epoch && e.gen == k.memberGen[e.t.Member] {
		k.mu.Unlock()
		t := e.t
		return &t, nil
	}
	epoch := k.epoch
	k.mu.Unlock()
	// The member's generation is taken after the read: an event that arrives meanwhile bumps
	// it again, and the entry is dropped on its next use.
	t, err := c.Task(ctx, id)
	if err != nil || t.Open {
		return t, err
	}
	k.mu.Lock()
	if k.epoch == epoch {
		if len(k.tasks) >= maxCachedTasks {
			k.tasks = map[string]cachedTask{}
		}
		k.tasks[id] = cachedTask{t: *t, gen: k.memberGen[t.Member], epoch: epoch}
	}
	k.mu.Unlock()
	return t, nil
}
