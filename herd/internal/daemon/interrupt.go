package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// The interrupt policy lives here, in the daemon, once: `herd interrupt`, `task.cancel` (the A2A
// server's tasks/cancel) and any other adapter ask for it and never send the keys themselves.
//
//  1. The member's running task is closed first — interrupted (`interrupt`) or canceled
//     (`task.cancel`) — so the ledger says what happened even if the engine never reacts, and
//     a reader after a restart of anything reads it the same.
//  2. A local member gets its engine's interrupt keys (the engines table: Escape), then, only if
//     it still reads busy (working or blocked, and its screen does not already show it stopped)
//     once the grace has passed with no sign of stopping, the second keys (Ctrl-C: at an engine's
//     prompt Ctrl-C quits it, so it is never sent to a member at rest). It is never killed.
//  3. A remote member has no keys: its open task is canceled at the remote (tasks/cancel, or the
//     /run call abandoned); the member stays registered.

func hInterrupt(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.InterruptParams
	if err := decode(herd.MethodInterrupt, params, &p); err != nil {
		return nil, err
	}
	m, err := sc.d.liveMember(p.Name)
	if err != nil {
		return nil, err
	}
	d := sc.d
	r := herd.InterruptResult{Name: m.name}
	if d.tasks != nil {
		if id := d.closeRunningTask(m, ledger.StateInterrupted, "interrupted (mosh herd interrupt)"); id != "" {
			r.Task, r.TaskState = id, ledger.StateInterrupted
		}
	}
	if err := d.interruptTurn(ctx, m, time.Duration(p.GraceMs)*time.Millisecond, &r); err != nil {
		return nil, err
	}
	return r, nil
}

// closeRunningTask closes m's running task (not a queued one) with state and note, and returns
// its id ("" when none runs). Its continuations go with it.
func (d *daemon) closeRunningTask(m *member, state, note string) string {
	d.state.lock()
	t := m.task
	if t == nil || t.id == "" || t.id == "-" {
		d.state.unlock()
		return ""
	}
	d.closeRunningLocked(m, t, state, note, time.Now())
	d.state.unlock()
	m.wakeQueue()
	d.lw.flush(m.name)
	return t.id
}

// closeRunningLocked ends m's running task t: it leaves the member (with its queued follow-ups),
// its artifact is taken now, and the close is queued for the ledger with an event for the
// waiters. The caller holds the state lock.
func (d *daemon) closeRunningLocked(m *member, t *openTask, state, note string, now time.Time) {
	id := t.id
	m.task = nil
	kept := m.queue[:0]
	for _, q := range m.queue {
		if !(q.cont && q.id == id) {
			kept = append(kept, q)
		}
	}
	m.queue = kept
	art := d.artifactLocked(m, t)
	m.lastClosed = &closedTask{id: id, hook: true}
	end := ledger.Transition{At: now, State: state, Authority: herd.AuthorityRuntime, Note: note}
	d.lw.post(m.name, func() {
		if err := d.tasks.CloseTask(id, end, art); err != nil {
			d.logger.Printf("ledger: close %s: %v", id, err)
		}
	})
	d.bus.emitLocked(herd.Event{Type: eventTaskEnd, Name: m.name, State: m.reading.State, Task: id, TaskEnded: true, TaskState: state, AtMs: now.UnixMilli()})
}

// interruptTurn stops m's turn without killing it (steps 2 and 3 above, each in its member kind)
// and fills r in. grace 0 means the engines table's.
func (d *daemon) interruptTurn(ctx context.Context, m *member, grace time.Duration, r *herd.InterruptResult) error {
	if err := m.kind.interrupt(ctx, grace, r); err != nil {
		return err
	}
	r.State = d.readingOf(m).State
	return nil
}

// interrupt of a remote member: it has no keys; its open task is canceled at the remote
// (tasks/cancel, or the /run call abandoned), and it stays registered.
func (r remoteMember) interrupt(_ context.Context, _ time.Duration, res *herd.InterruptResult) error {
	res.Remote = true
	_, err := r.d.cancelRemote(r.member)
	return err
}

// interrupt of a pty member: the engines table's keys, then its second keys only while the
// member still reads busy once grace passed with no sign of it stopping.
func (p ptyMember) interrupt(ctx context.Context, grace time.Duration, r *herd.InterruptResult) error {
	d, m := p.d, p.member
	e, _ := d.engines.Table().Lookup(m.engine)
	in := e.InterruptKeys()
	if grace <= 0 {
		grace = time.Duration(in.GraceMs) * time.Millisecond
	}
	first, err := encodePresses(in.Keys)
	if err != nil {
		return exitcode.New(exitcode.Infra, "the engines table's interrupt keys for %s are not keys (%v): fix engines.json (mosh herd doctor)", m.engine, err)
	}
	// Watch before pressing, so the member's reaction cannot slip past.
	sub, _ := d.bus.subscribe([]string{m.name}, false)
	defer d.bus.unsubscribe(sub)
	at := time.Now().UnixMilli()
	d.noteKeys(m, in.Keys)
	if _, err := m.writePresses(ctx, first); err != nil {
		return err
	}
	r.Keys = in.Keys
	if len(in.ThenKeys) > 0 && !stoppedAfter(ctx, sub, at, grace) && d.stillBusy(m) {
		then, err := encodePresses(in.ThenKeys)
		if err != nil {
			return exitcode.New(exitcode.Infra, "the engines table's second interrupt keys for %s are not keys (%v): fix engines.json (mosh herd doctor)", m.engine, err)
		}
		d.noteKeys(m, in.ThenKeys)
		if _, err := m.writePresses(ctx, then); err != nil && exitcode.Of(err) != exitcode.Gone {
			return err
		}
		r.Then = in.ThenKeys
	}
	return nil
}

// stillBusy: m reads working or blocked and its screen classifier does not already read it
// stopped (a loaded machine can take longer than the grace to publish a stop the screen shows).
func (d *daemon) stillBusy(m *member) bool {
	d.state.lock()
	defer d.state.unlock()
	if m.exited {
		return false
	}
	switch m.reading.State {
	case herd.StateWorking, herd.StateBlocked:
	default:
		return false
	}
	s := m.screenR
	return s == nil || (s.State != herd.StateIdle && s.State != herd.StateDone)
}

// stoppedAfter waits up to within for an event of the subscription, stamped at or after since
// (unix ms), that shows the member stopped: idle, done, gone, or removed.
func stoppedAfter(ctx context.Context, sub *busSub, since int64, within time.Duration) bool {
	t := time.NewTimer(within)
	defer t.Stop()
	for {
		evs, ended := sub.take()
		for _, ev := range evs {
			if ev.AtMs < since {
				continue
			}
			if ev.Type == herd.EventRemoved {
				return true
			}
			switch ev.State {
			case herd.StateIdle, herd.StateDone, herd.StateGone:
				return true
			}
		}
		if ended {
			return false
		}
		if len(evs) > 0 {
			continue
		}
		select {
		case <-sub.wake():
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// cancelAndInterrupt is task.cancel: a queued task is removed untyped; a running one is closed
// canceled, then its member's turn is interrupted.
func (d *daemon) cancelAndInterrupt(ctx context.Context, id string, grace time.Duration) (herd.CancelTaskResult, error) {
	r, err := d.cancelTask(id)
	if err != nil || !r.Running {
		return r, err
	}
	m, err := d.liveMember(r.Member)
	if err != nil {
		return r, nil // the member ended meanwhile: nothing left to interrupt
	}
	in := herd.InterruptResult{Name: m.name, Task: id, TaskState: ledger.StateCanceled}
	if err := d.interruptTurn(ctx, m, grace, &in); err != nil {
		if exitcode.Of(err) == exitcode.Gone {
			return r, nil // it ended meanwhile
		}
		return r, err
	}
	r.Interrupt = &in
	return r, nil
}
