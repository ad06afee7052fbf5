package daemon

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// The prompt queue: each member has a FIFO of submitted prompts. A prompt to a member that is
// working or blocked, or that already has prompts waiting, or into which a prompt is being typed
// right now, waits its turn: its task is minted at once (state submitted, queued in the ledger)
// and the prompt is typed when the member next reads idle or done — one at a time, into an input
// line cleared first when the screen shows leftover text. The queue is driven by the member's
// state changes (taskEventLocked wakes it), never by polling: one goroutine per member (pumpQueue)
// sleeps until woken.
//
// `prompt --now` types at once on purpose (the running task ends canceled, superseded); `kill t-N`
// or A2A tasks/cancel of a queued task removes it untyped (canceled). An A2A follow-up message
// carrying the id of a task that has not ended (running, or still queued) is queued into that
// task (a continuation): it goes right behind the task's own turns, ahead of every other task,
// the task stays open past the end of its turn and the continuation is typed as part of it.

// queuedPrompt is one prompt waiting for its member. Guarded by the state lock.
type queuedPrompt struct {
	id   string // ledger task id; "" while its mint is in flight
	text string
	cont bool // continues task id instead of being a task of its own
	// unnoted: a continuation of a task that was not running yet when it came, so its
	// "continued" note could not be linked to the task; it is recorded when it is typed.
	unnoted bool
}

// takesFollowUpLocked says whether task id can take a follow-up on this member: it is the
// running task, the one being typed, or a task waiting in the queue. The caller holds the state
// lock.
func (m *member) takesFollowUpLocked(id string) bool {
	if (m.task != nil && m.task.id == id) || m.typing == id {
		return true
	}
	for _, q := range m.queue {
		if q.id == id && !q.cont {
			return true
		}
	}
	return false
}

// enqueueLocked puts qp in the member's queue. A new task goes last; a continuation goes right
// behind the last entry of its task (the task itself or an earlier continuation of it), or
// first when the task is running, so a task's turns are never split by another task (which
// would supersede it) and are typed in the order they came. The caller holds the state lock.
func (m *member) enqueueLocked(qp *queuedPrompt) {
	if !qp.cont {
		m.queue = append(m.queue, qp)
		return
	}
	at := 0
	queued := false
	for i, q := range m.queue {
		if q.id == qp.id {
			at = i + 1
			queued = queued || !q.cont
		}
	}
	qp.unnoted = queued || m.task == nil || m.task.id != qp.id
	m.queue = slices.Insert(m.queue, at, qp)
}

// busyLocked says whether a new prompt must wait in the queue. The caller holds the state lock.
func (m *member) busyLocked() bool {
	return m.typing != "" || len(m.queue) > 0 || m.reading.State == herd.StateWorking || m.reading.State == herd.StateBlocked ||
		(m.task != nil && m.task.typed)
}

// wakeQueue asks the member's queue goroutine to look again. It never blocks.
func (m *member) wakeQueue() {
	if m.queueWake == nil {
		return
	}
	select {
	case m.queueWake <- struct{}{}:
	default:
	}
}

// queuePosLocked returns the 1-based position of the task in the member's queue and the task it
// waits behind (the one ahead of it, else the one being typed or running). The caller holds the
// state lock.
func (m *member) queuePosLocked(qp *queuedPrompt) (int, string) {
	for i, q := range m.queue {
		if q != qp {
			continue
		}
		if i > 0 {
			return i + 1, m.queue[i-1].id
		}
		switch {
		case m.typing != "" && m.typing != "-":
			return 1, m.typing
		case m.task != nil && m.task.id != "":
			return 1, m.task.id
		case m.lastClosed != nil:
			return 1, m.lastClosed.id
		}
		return 1, ""
	}
	return 0, ""
}

// removeQueuedLocked takes qp out of the queue. The caller holds the state lock.
func (m *member) removeQueuedLocked(qp *queuedPrompt) bool {
	for i, q := range m.queue {
		if q == qp {
			m.queue = append(m.queue[:i:i], m.queue[i+1:]...)
			return true
		}
	}
	return false
}

// enqueuePrompt mints a queued task for text (or, with cont, joins the running task) and puts
// the prompt in the member's queue; qp was appended to m.queue by the caller under the state
// lock, in the same critical section that found the member busy.
func (d *daemon) enqueuePrompt(m *member, qp *queuedPrompt, cur herd.Reading) (herd.PromptResult, error) {
	res := herd.PromptResult{Name: m.name, Queued: true}
	if d.tasks == nil {
		d.withState(func() {
			m.removeQueuedLocked(qp)
		})
		return res, d.ledgerUnavailable()
	}
	now := time.Now()
	if qp.cont && !qp.unnoted {
		// The follow-up is part of the running task: recorded on it now (a "continued" note, so
		// the task's history lists it), typed when the member is next at rest. A follow-up to a
		// task not running yet is noted when it is typed (typeQueued), once the task is the one
		// the note links to.
		tr := ledger.Transition{At: now, State: cur.State, Kind: cur.BlockedOn, Authority: cur.Authority, Note: herd.NoteContinued + clip(qp.text, 200)}
		var err error
		d.lw.do(m.name, func() { _, err = d.tasks.RecordTransition(m.name, tr) })
		if err != nil {
			d.withState(func() {
				m.removeQueuedLocked(qp)
			})
			return res, exitcode.New(exitcode.Infra, "cannot record the follow-up in the ledger: %v (nothing was queued; see `mosh herd doctor`)", err)
		}
	} else if !qp.cont {
		var (
			t   ledger.Task
			err error
		)
		d.lw.do(m.name, func() { t, err = d.tasks.MintQueued(m.name, qp.text, cur.State, now) })
		if err != nil {
			d.withState(func() {
				m.removeQueuedLocked(qp)
			})
			m.wakeQueue()
			return res, exitcode.New(exitcode.Infra, "cannot record the prompt in the ledger: %v (nothing was queued; see `mosh herd doctor`)", ledgerErr(err))
		}
		d.withState(func() {
			qp.id = t.ID
		})
	}
	d.state.lock()
	res.Task = qp.id
	res.Position, res.Behind = m.queuePosLocked(qp)
	if res.Position == 0 {
		// Already taken off the queue: it is being typed (the member came to rest meanwhile).
		res.Queued = false
	}
	d.state.unlock()
	m.wakeQueue()
	return res, nil
}

// pumpQueue types the member's queued prompts, one at a time, each when the member reads idle or
// done. It sleeps until woken (a state change, a mint completed, a prompt typed).
func (d *daemon) pumpQueue(m *member) {
	stop := m.kind.stopped()
	for {
		select {
		case <-m.queueWake:
		case <-stop:
			return
		case <-d.stopCh:
			return
		}
		for d.dispatchOne(m) {
		}
	}
}

// dispatchOne types the head of the queue if the member is at rest; it reports whether it did.
func (d *daemon) dispatchOne(m *member) bool {
	d.state.lock()
	if m.exited || m.removed || m.typing != "" || len(m.queue) == 0 {
		d.state.unlock()
		return false
	}
	qp := m.queue[0]
	st := m.reading.State
	// The member is at rest and its running task ended (or this continues it): a task still
	// open means the engine has not finished that turn, whatever the screen shows.
	running := m.task != nil && !(qp.cont && qp.id == m.task.id)
	if qp.id == "" || running || (st != herd.StateIdle && st != herd.StateDone) {
		d.state.unlock()
		return false
	}
	m.queue = m.queue[1:]
	m.typing = qp.id
	d.state.unlock()
	d.typeQueued(m, qp)
	return true
}

// doneTyping releases the terminal after a prompt was typed (or failed to be) and wakes the
// queue: the next prompt goes once the member reads idle or done again.
func (d *daemon) doneTyping(m *member) {
	d.withState(func() {
		m.typing = ""
	})
	m.wakeQueue()
}

// typeQueued starts the task of a queued prompt (or resumes the running one for a
// continuation), clears leftover input, types the text and claims working.
func (d *daemon) typeQueued(m *member, qp *queuedPrompt) {
	defer d.doneTyping(m)
	m.kind.typeQueued(qp)
}

func (p ptyMember) typeQueued(qp *queuedPrompt) {
	d, m := p.d, p.member
	baseLines, base := m.scr.Snapshot().Lines, m.scr.HistoryLen()
	if qp.cont {
		d.state.lock()
		t := m.task
		if t == nil || t.id != qp.id {
			// The task ended meanwhile (canceled, its member killed): nothing to continue.
			d.state.unlock()
			return
		}
		// The artifact keeps the turn that ended (earlier) and starts over for this one.
		t.earlier = d.artifactLocked(m, t).Text + turnHeader(qp.text)
		t.baseLines, t.baseHist, t.sawActive, t.final = baseLines, base, false, ""
		t.started, t.screenActive = false, false
		t.stopGrace()
		cur := m.reading
		d.state.unlock()
		if qp.unnoted {
			// Its task was still queued when the follow-up came: noted now that it runs.
			tr := ledger.Transition{At: time.Now(), State: cur.State, Kind: cur.BlockedOn, Authority: cur.Authority, Note: herd.NoteContinued + clip(qp.text, 200)}
			var err error
			d.lw.do(m.name, func() { _, err = d.tasks.RecordTransition(m.name, tr) })
			if err != nil {
				d.logger.Printf("queue: %s: noting the follow-up to %s: %v", m.name, qp.id, err)
			}
		}
	} else if err := d.startQueued(m, qp, baseLines, base); err != nil {
		d.logger.Printf("queue: %s: cannot start %s: %v", m.name, qp.id, err)
		return
	}
	d.clearInput(m)
	typed := time.Now()
	if err := m.typePrompt(qp.text); err != nil {
		d.promptFailed(m, qp.id, err)
		return
	}
	d.promptTyped(m, qp.id)
	m.trk.Prompted(time.Now())
	d.refresh(m, false)
	// The next prompt waits until the engine took this one (submit.go).
	d.confirmTaken(m, qp.text, typed)
}

// startQueued makes qp's task the member's running task: a task still open is superseded
// (ended canceled), the ledger marks the queued task started.
func (d *daemon) startQueued(m *member, qp *queuedPrompt, baseLines []string, base int) error {
	now := time.Now()
	errc := make(chan error, 1)
	d.state.lock()
	d.supersedeLocked(m, now)
	t := &openTask{id: qp.id, baseHist: base, baseLines: baseLines}
	m.task = t
	id := qp.id
	// Queued on the member's ledger queue before any transition of the new task can be.
	d.lw.postMust(m.name, func() { errc <- d.tasks.StartTask(id, now) })
	d.state.unlock()
	if err := <-errc; err != nil {
		d.state.lock()
		if m.task == t {
			m.task = nil
		}
		d.state.unlock()
		return err
	}
	return nil
}

// supersedeLocked ends the member's open task, if any, because another prompt is typed over it:
// canceled, with what it showed as its artifact. The caller holds the state lock.
func (d *daemon) supersedeLocked(m *member, now time.Time) {
	old := m.task
	if old == nil || old.id == "" {
		return
	}
	m.task = nil
	end := ledger.Transition{At: now, State: ledger.StateCanceled, Authority: herd.AuthorityRuntime, Note: "superseded by the next prompt"}
	if old.endPending && (m.reading.State == herd.StateDone || m.reading.State == herd.StateIdle) {
		// Its turn had ended on the screen, the engine's done hook still on its way: it ended,
		// it was not cut short. A late final message still becomes its artifact (lastClosed).
		end = ledger.Transition{At: now, State: m.reading.State, Authority: m.reading.Authority,
			Note: "ended on the screen's word: the next prompt came before the engine's done hook"}
	}
	old.stopGrace()
	art := d.artifactLocked(m, old)
	m.lastClosed = &closedTask{id: old.id, hook: art.Source == ledger.SourceHook, earlier: old.earlier}
	d.lw.post(m.name, func() {
		if err := d.tasks.CloseTask(old.id, end, art); err != nil {
			d.logger.Printf("ledger: close %s: %v", old.id, err)
		}
	})
	d.bus.emitLocked(herd.Event{Type: eventTaskEnd, Name: m.name, State: m.reading.State, Task: old.id, TaskEnded: true, TaskState: end.State, AtMs: now.UnixMilli()})
}

// clearInput empties the member's input line before a prompt is typed, with the engine's own
// keys (engines table: clearInput), when the screen shows text left on the input line (e.g. a
// prompt interrupted with Escape comes back into the box).
func (d *daemon) clearInput(m *member) {
	if len(m.spec.ClearInput) == 0 || m.spec.InputLeftover == nil {
		return
	}
	if !m.spec.InputLeftover(m.scr.Snapshot()) {
		return
	}
	b, err := encodeKeys(m.spec.ClearInput)
	if err != nil {
		d.logger.Printf("queue: %s: clearInput keys: %v", m.name, err)
		return
	}
	if err := m.write(b); err != nil {
		d.logger.Printf("queue: %s: clearing the input line: %v", m.name, err)
	}
}

// cancelQueuedLocked removes every queued prompt of the member and returns their task ids (the
// continuations, which belong to the running task, are dropped). The caller holds the state lock.
func (m *member) drainQueueLocked() []string {
	var ids []string
	for _, q := range m.queue {
		if !q.cont && q.id != "" {
			ids = append(ids, q.id)
		}
	}
	m.queue = nil
	return ids
}

// closeQueued ends queued tasks that will never be typed, in state (canceled or failed) with note.
func (d *daemon) closeQueued(m *member, ids []string, state, note string) {
	d.withState(func() {
		d.closeQueuedLocked(m, ids, state, note)
	})
}

// closeQueuedLocked is closeQueued for a caller that holds the state lock. The writes are queued
// before the events go out: a caller woken by an event and reading the task at once (reads flush
// the writer first) finds it closed.
func (d *daemon) closeQueuedLocked(m *member, ids []string, state, note string) {
	if len(ids) == 0 || d.tasks == nil {
		return
	}
	now := time.Now()
	for _, id := range ids {
		id := id
		end := ledger.Transition{At: now, State: state, Authority: herd.AuthorityRuntime, Note: note}
		d.lw.post(m.name, func() {
			if err := d.tasks.CloseTask(id, end, ledger.Artifact{Text: note, Source: ledger.SourceError}); err != nil {
				d.logger.Printf("ledger: close %s: %v", id, err)
			}
		})
	}
	var exit *int
	if m.exited { // the member's process died: its waiters learn the exit code from this event
		c := m.exitCode
		exit = &c
	}
	for _, id := range ids {
		d.bus.emitLocked(herd.Event{Type: eventTaskEnd, Name: m.name, State: m.reading.State, Task: id, TaskEnded: true, TaskState: state, ExitCode: exit, AtMs: now.UnixMilli()})
	}
}

// cancelTask cancels one task by id: a queued task is removed untyped; the running task of a
// member is closed canceled (cancelAndInterrupt then interrupts the turn). Exit 3 when no member
// has it open.
func (d *daemon) cancelTask(id string) (herd.CancelTaskResult, error) {
	d.mu.Lock()
	ms := make([]*member, 0, len(d.members))
	for _, m := range d.members {
		ms = append(ms, m)
	}
	d.mu.Unlock()
	now := time.Now()
	for _, m := range ms {
		d.state.lock()
		for _, q := range m.queue {
			if q.id == id && !q.cont {
				// Untyped, with the follow-ups queued into it.
				m.queue = slices.DeleteFunc(m.queue, func(q *queuedPrompt) bool { return q.id == id })
				d.state.unlock()
				d.closeQueued(m, []string{id}, ledger.StateCanceled, "canceled before it was typed")
				d.lw.flush(m.name)
				return herd.CancelTaskResult{ID: id, Member: m.name, Queued: true}, nil
			}
		}
		if t := m.task; t != nil && t.id == id {
			d.closeRunningLocked(m, t, ledger.StateCanceled, "canceled", now)
			d.state.unlock()
			m.wakeQueue()
			d.lw.flush(m.name)
			return herd.CancelTaskResult{ID: id, Member: m.name, Running: true}, nil
		}
		d.state.unlock()
	}
	return herd.CancelTaskResult{}, exitcode.New(exitcode.Gone, "task %s is not open (queued or running): see `mosh herd task %s`", id, id)
}

// looksLikeTaskID: kill takes task ids (t-N) as well as member names.
func looksLikeTaskID(s string) bool {
	rest, ok := strings.CutPrefix(s, "t-")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// exitQueueLocked ends the queued prompts of a member whose process exited: never typed, they
// fail (canceled when kill ended the process). The caller holds the state lock and calls it
// before it publishes the member gone, so a wait woken by that finds the tasks closed.
func (d *daemon) exitQueueLocked(m *member, code int) {
	ids := m.drainQueueLocked()
	if m.killing {
		d.closeQueuedLocked(m, ids, ledger.StateCanceled, "the member was killed before it was typed")
		return
	}
	d.closeQueuedLocked(m, ids, ledger.StateFailed, "never typed: the process exited with code "+itoa(code))
}

// killTask is `kill t-N`: a queued task is removed untyped (canceled); a running task is refused
// with the fix (its turn is interrupted with Escape, or its member killed).
func (d *daemon) killTask(id string) error {
	d.mu.Lock()
	ms := make([]*member, 0, len(d.members))
	for _, m := range d.members {
		ms = append(ms, m)
	}
	d.mu.Unlock()
	for _, m := range ms {
		d.state.lock()
		running := m.task != nil && m.task.id == id
		d.state.unlock()
		if running {
			return exitcode.New(exitcode.Usage, "%s is running on %s, not queued: interrupt it with `mosh herd send-keys %s Escape`, or `mosh herd kill %s` to end the member", id, m.name, m.name, m.name)
		}
	}
	r, err := d.cancelTask(id)
	if err != nil {
		return exitcode.New(exitcode.Gone, "no member named %s and no queued task %s: see `mosh ps` and `mosh herd tasks --state submitted`", id, id)
	}
	if !r.Queued {
		return exitcode.New(exitcode.Usage, "%s is running, not queued", id)
	}
	return nil
}

func hCancelTask(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.CancelTaskParams
	if err := decode(herd.MethodCancelTask, params, &p); err != nil {
		return nil, err
	}
	id := strings.TrimSpace(p.ID)
	if _, err := ledger.ParseTaskID(id); err != nil {
		return nil, err
	}
	if sc.d.tasks == nil {
		return nil, sc.d.ledgerUnavailable()
	}
	return sc.d.cancelAndInterrupt(ctx, id, time.Duration(p.GraceMs)*time.Millisecond)
}
