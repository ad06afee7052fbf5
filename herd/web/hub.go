package web

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// row is one member on the roster, as the page draws it.
type row struct {
	Name       string         `json:"name"`
	Engine     string         `json:"engine"`
	Kind       string         `json:"kind"`
	State      string         `json:"state"`
	BlockedOn  string         `json:"blockedOn,omitempty"`
	Authority  string         `json:"authority"`
	SinceMs    int64          `json:"sinceMs"` // when it entered its state (unix ms), as far as seen
	Alive      bool           `json:"alive"`
	Autonomous bool           `json:"autonomous,omitempty"`
	Actionable bool           `json:"actionable"` // the dashboard may act on it (not autonomous, or --expose-autonomous)
	Task       string         `json:"task,omitempty"`
	Queued     int            `json:"queued,omitempty"`
	Question   *herd.Question `json:"question,omitempty"`
}

// rosterMsg is one roster update: every member, those waiting on a person first.
type rosterMsg struct {
	Seq     uint64 `json:"seq"`
	AtMs    int64  `json:"atMs"`
	Members []row  `json:"members"`
	Error   string `json:"error,omitempty"` // the daemon is unreachable
}

// hub keeps one subscription to every member's events and turns bursts of them into one roster
// update (at most one per coalesce window), sent to every open roster stream. Nothing of the
// herd is kept but the last update and when each member entered its state.
type hub struct {
	ctx      context.Context
	cancel   context.CancelFunc
	redial   func(ctx context.Context) (*herd.Client, error)
	coalesce time.Duration
	visible  func(herd.Member) (shown, actionable bool)

	mu      sync.Mutex
	c       *herd.Client
	last    []byte // the last update, as JSON
	seq     uint64
	since   map[string]int64
	streams map[chan []byte]struct{}
	kick    chan struct{}
	ready   chan struct{} // closed once the first update is out
}

func newHub(ctx context.Context, c *herd.Client, redial func(context.Context) (*herd.Client, error), coalesce time.Duration,
	visible func(herd.Member) (bool, bool)) *hub {
	ctx, cancel := context.WithCancel(ctx)
	h := &hub{ctx: ctx, cancel: cancel, redial: redial, coalesce: coalesce, visible: visible, c: c,
		since: map[string]int64{}, streams: map[chan []byte]struct{}{}, kick: make(chan struct{}, 1), ready: make(chan struct{})}
	go h.run()
	return h
}

func (h *hub) close() { h.cancel() }

// client is the current herd client (nil while the daemon is unreachable).
func (h *hub) client() *herd.Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

// refresh asks for a roster update soon (after an action), without waiting for an event.
func (h *hub) refresh() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *hub) run() {
	backoff := 100 * time.Millisecond
	for h.ctx.Err() == nil {
		c := h.client()
		if c == nil {
			if h.redial == nil {
				h.publish(nil, "the herd daemon is unreachable; restart mosh herd serve")
				return
			}
			nc, err := h.redial(h.ctx)
			if err != nil {
				h.publish(nil, "the herd daemon is unreachable ("+err.Error()+"); retrying")
				select {
				case <-time.After(backoff):
				case <-h.ctx.Done():
					return
				}
				backoff = min(backoff*2, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			h.mu.Lock()
			h.c = nc
			h.mu.Unlock()
			c = nc
		}
		h.follow(c)
		h.mu.Lock()
		if h.c == c {
			h.c = nil
		}
		h.mu.Unlock()
		c.Close()
	}
}

// follow pumps c's events until its subscription ends.
func (h *hub) follow(c *herd.Client) {
	sub, err := c.Subscribe(h.ctx)
	if err != nil {
		return
	}
	defer sub.Close()
	h.update(c)
	var fire <-chan time.Time
	for {
		select {
		case <-h.ctx.Done():
			return
		case ev, ok := <-sub.Events():
			if !ok {
				return
			}
			h.mu.Lock()
			switch ev.Type {
			case herd.EventState, herd.EventAdded:
				h.since[ev.Name] = ev.AtMs
			case herd.EventRemoved:
				delete(h.since, ev.Name)
			}
			h.mu.Unlock()
			if fire == nil {
				fire = time.After(h.coalesce)
			}
		case <-h.kick:
			if fire == nil {
				fire = time.After(h.coalesce)
			}
		case <-fire:
			fire = nil
			h.update(c)
		}
	}
}

// update reads the roster and open tasks and publishes them.
func (h *hub) update(c *herd.Client) {
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	ms, err := c.List(ctx)
	if err != nil {
		h.publish(nil, "cannot read the roster: "+err.Error())
		return
	}
	open, _ := c.Tasks(ctx, herd.TasksFilter{State: "open", Limit: -1})
	task := map[string]string{}
	for _, t := range open {
		if !t.Queued {
			task[t.Member] = t.ID
		}
	}
	rows := make([]row, 0, len(ms))
	h.mu.Lock()
	for _, m := range ms {
		shown, act := h.visible(m)
		if !shown {
			continue
		}
		since := h.since[m.Name]
		if since == 0 {
			since = m.CreatedMs
		}
		rows = append(rows, row{Name: m.Name, Engine: m.Engine, Kind: m.Kind, State: m.State, BlockedOn: m.BlockedOn,
			Authority: m.Authority, SinceMs: since, Alive: m.Alive, Autonomous: m.Autonomous, Actionable: act,
			Task: task[m.Name], Queued: m.Queued, Question: m.Question})
	}
	h.mu.Unlock()
	sortRoster(rows)
	h.publish(rows, "")
}

// sortRoster puts the members waiting on a person (blocked) first, longest waiting first, then
// working, then the rest, by name.
func sortRoster(rows []row) {
	rank := func(s string) int {
		switch s {
		case herd.StateBlocked:
			return 0
		case herd.StateWorking:
			return 1
		default:
			return 2
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ra, rb := rank(a.State), rank(b.State); ra != rb {
			return ra < rb
		}
		if a.State == herd.StateBlocked && a.SinceMs != b.SinceMs {
			return a.SinceMs < b.SinceMs
		}
		return a.Name < b.Name
	})
}

func (h *hub) publish(rows []row, errMsg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	if rows == nil {
		rows = []row{}
	}
	b, _ := json.Marshal(rosterMsg{Seq: h.seq, AtMs: time.Now().UnixMilli(), Members: rows, Error: errMsg})
	if h.last == nil {
		close(h.ready)
	}
	h.last = b
	for ch := range h.streams {
		// Each update is the whole roster: a stream that has not taken the previous one gets
		// this one instead.
		select {
		case <-ch:
		default:
		}
		ch <- b
	}
}

// stream registers a roster stream; it starts with the last update.
func (h *hub) stream() (ch chan []byte, stop func()) {
	ch = make(chan []byte, 1)
	h.mu.Lock()
	h.streams[ch] = struct{}{}
	if h.last != nil {
		ch <- h.last
	}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.streams, ch)
		h.mu.Unlock()
	}
}

// current is the last roster update.
func (h *hub) current() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}
