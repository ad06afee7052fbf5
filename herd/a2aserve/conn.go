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
// wake the Waits watching a member; their end tells us the daemon went away (then we redial in
// the background). The roster and the tasks are the daemon's: every read asks it (`herd list`,
// `herd task`); nothing of them is kept here, so nothing is lost or stale after a restart.
type conn struct {
	redial func(ctx context.Context) (*herd.Client, error)

	mu      sync.Mutex
	c       *herd.Client // nil while disconnected
	watches map[*watch]struct{}
	up      chan struct{} // closed while connected; replaced by an open one on disconnect

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
	k := &conn{redial: redial, watches: map[*watch]struct{}{},
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

// members returns the roster as the daemon lists it now.
func (k *conn) members(ctx context.Context) ([]herd.Member, error) {
	c, err := k.client()
	if err != nil {
		return nil, err
	}
	return c.List(ctx)
}
