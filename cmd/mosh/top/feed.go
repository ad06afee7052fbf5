package top

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mosh-dev/mosh/herd"
)

// Feed turns the daemon's event stream into top's messages, in the daemon's order: a snapshot
// (list, the open tasks, the day's waiting-on-you time) first, then each batch of events as it
// arrives followed by a fresh snapshot (the question a member asks and its queue ride on the
// list, not on the event). Nothing is polled: a snapshot is read only after events, at the
// start, or when an action asks (Refresh). Events that arrive while a snapshot is read queue in
// the subscription and follow it, so the last word on a member is always the newest.
type Feed struct {
	ch      chan tea.Msg
	refresh chan struct{}
}

// StartFeed subscribes to every member's events and starts the feed; it ends with ctx or with
// the subscription (a FeedEndedMsg says why).
func StartFeed(ctx context.Context, c *herd.Client) (*Feed, error) {
	sub, err := c.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	f := &Feed{ch: make(chan tea.Msg), refresh: make(chan struct{}, 1)}
	go f.run(ctx, c, sub)
	return f, nil
}

// Next is the command that waits for the feed's next message (nil once it ended).
func (f *Feed) Next() tea.Msg {
	msg, ok := <-f.ch
	if !ok {
		return nil
	}
	return msg
}

// Refresh asks for a fresh snapshot (after an action whose effect comes without a state event,
// a prompt queued behind a working member).
func (f *Feed) Refresh() {
	select {
	case f.refresh <- struct{}{}:
	default:
	}
}

// maxBatch bounds the events handed over in one message, so a burst still repaints as it goes.
const maxBatch = 512

func (f *Feed) run(ctx context.Context, c *herd.Client, sub *herd.Subscription) {
	defer close(f.ch)
	defer sub.Close()
	send := func(msg tea.Msg) bool {
		select {
		case f.ch <- msg:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !send(snapshot(ctx, c, true)) {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.refresh:
			if !send(snapshot(ctx, c, false)) {
				return
			}
		case e, ok := <-sub.Events():
			if !ok {
				send(FeedEndedMsg{Err: sub.Err()})
				return
			}
			batch := EventsMsg{e}
			stats := leftBlocked(e)
		drain:
			for len(batch) < maxBatch {
				select {
				case e, ok := <-sub.Events():
					if !ok {
						break drain
					}
					batch = append(batch, e)
					stats = stats || leftBlocked(e)
				default:
					break drain
				}
			}
			if !send(batch) || !send(snapshot(ctx, c, stats)) {
				return
			}
		}
	}
}

// leftBlocked: the event ends a wait on the person, so the day's waiting time grew.
func leftBlocked(e herd.Event) bool {
	return e.Prev == herd.StateBlocked && e.State != herd.StateBlocked
}

// snapshotTimeout bounds one snapshot's reads.
const snapshotTimeout = 10 * time.Second

// snapshot reads the roster and the open tasks, and with stats the day's waiting-on-you time. A
// roster that cannot be read is a snapshot with Err (the rows stay as they were).
func snapshot(ctx context.Context, c *herd.Client, stats bool) tea.Msg {
	ctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
	defer cancel()
	ms, err := c.List(ctx)
	if err != nil {
		return SnapshotMsg{Err: err, WaitingMs: -1}
	}
	s := SnapshotMsg{Members: ms, WaitingMs: -1}
	if ts, err := c.Tasks(ctx, herd.TasksFilter{State: "open", Limit: -1}); err == nil {
		s.Open = ts
	}
	if stats {
		if r, err := c.Stats(ctx, "", time.Now().Add(-24*time.Hour)); err == nil && r.Total != nil {
			s.WaitingMs = r.Total.HumanLatencyMs
		}
	}
	return s
}

// Once is the view's content as data, for `top --json`: the members in top's order (the ones
// waiting on the person first) and the waiting-on-you times.
func Once(ctx context.Context, c *herd.Client) (*OnceResult, error) {
	msg := snapshot(ctx, c, true).(SnapshotMsg)
	if msg.Err != nil {
		return nil, msg.Err
	}
	m := New(Options{})
	m.applySnapshot(msg)
	return m.result(), nil
}
