package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// Headless calls (herd/headless.go): ai() asks a model in the script's own process and records
// each call here, as a task of a headless member (ai-claude, ai-anthropic). The call itself never
// passes through the daemon: the script keeps its environment (the API key, PATH), its working
// directory and its process group (a timeout or Ctrl-C kills the engine there), and the herd
// only mints, closes and reads the task. A headless member is a name in the ledger, not a member
// of d.members: no process, no screen, no queue, and several calls of one member run at once.
//
// So that concurrent calls of one member do not supersede each other (the ledger keeps one
// running task per member), a call's task is minted like a queued prompt's (MintQueued): it is
// open, linked to no member's turn, and closed by its own CloseTask. While the call runs, reads
// show it working (headlessCalls.view).
//
// An open call belongs to the connection that began it: when that connection ends first (the
// script was killed, or ended mid-call), the call's task is closed failed. When the daemon itself
// dies mid-call, the next read closes the task gone (headlessStoppedReason), as it closes any open
// task whose member stopped: no call is left open for ever.

// headlessCalls are the headless calls in flight. The zero value is ready.
type headlessCalls struct {
	mu     sync.Mutex
	next   int64
	calls  map[string]*headlessCall // call handle → call, from begin to end
	byTask map[string]*headlessCall // task id → call, from its mint to its close (on the ledger queue)
}

type headlessCall struct {
	handle string
	member string
	sc     *serverConn // the connection that began it; only it may end it
	// id is the task's id once minted ("" before, or when the mint failed). Guarded by mu.
	id string
	// stop detaches the close that the end of the caller's connection would do.
	stop func() bool
}

// headlessGoneNote is the ledger's word for an open call no daemon knows of any more.
const headlessGoneNote = "reconciled on read: the ai() call ended without recording its answer (its script or the herd daemon stopped mid-call)"

// hHeadlessBegin answers at once: the task's mint is queued on the member's ledger queue, off the
// caller's path (a mint waits for the commit, and behind the close of the member's previous call;
// the script's call waits for neither). Every later write of the call (its close) and every
// read's reconcile of it run on that queue after the mint. A ledger that is not open refuses the
// call; a mint the database refuses later is logged (the call is then unrecorded, as a transition
// the database refused is).
func hHeadlessBegin(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.HeadlessBeginParams
	if err := decode(herd.MethodHeadlessBegin, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if err := herd.CheckName(p.Member); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(p.Member, herd.HeadlessPrefix) {
		return nil, exitcode.New(exitcode.Usage, "%s is not a headless member: headless calls are recorded under %s<engine> (herd.HeadlessMember)", p.Member, herd.HeadlessPrefix)
	}
	if strings.TrimSpace(p.Text) == "" {
		return nil, exitcode.New(exitcode.Usage, "a headless call needs its prompt (text)")
	}
	d.mu.Lock()
	_, live := d.members[p.Member]
	launching := d.reserved[p.Member]
	d.mu.Unlock()
	if live || launching {
		return nil, exitcode.New(exitcode.Usage, "a member named %s runs in the herd: ai() records its calls under that name; rename the member (`mosh herd kill %s`, then run it under another name)", p.Member, p.Member)
	}
	if d.tasks == nil {
		return nil, d.ledgerUnavailable()
	}
	at := time.Now()
	if p.StartedMs > 0 && p.StartedMs < at.UnixMilli() {
		at = time.UnixMilli(p.StartedMs)
	}
	c := d.headless.add(d, sc, p.Member)
	d.lw.postMust(p.Member, func() {
		t, err := d.tasks.MintQueued(p.Member, p.Text, "", at)
		if err != nil {
			d.logger.Printf("ledger: the ai() call %s of %s is not recorded: %v", c.handle, p.Member, err)
			return
		}
		d.headless.minted(c, t.ID)
	})
	return herd.HeadlessBeginResult{Call: c.handle}, nil
}

func hHeadlessEnd(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.HeadlessEndParams
	if err := decode(herd.MethodHeadlessEnd, params, &p); err != nil {
		return nil, err
	}
	end := ledger.Transition{At: time.Now(), State: p.State, Authority: herd.AuthorityRuntime}
	if p.EndedMs > 0 && p.EndedMs < end.At.UnixMilli() {
		end.At = time.UnixMilli(p.EndedMs)
	}
	var art ledger.Artifact
	switch p.State {
	case ledger.StateDone:
		art = ledger.Artifact{Text: p.Answer, Source: ledger.SourceHeadless}
	case ledger.StateFailed, ledger.StateCanceled:
		why := strings.TrimSpace(p.Error)
		if why == "" {
			why = "the call " + p.State + " without saying why"
		}
		end.Note = clip(why, 200)
		art = ledger.Artifact{Text: why, Source: ledger.SourceError}
	default:
		return nil, exitcode.New(exitcode.Usage, "a headless call ends done, failed or canceled, not %q", p.State)
	}
	if u := usageNote(p.Usage); u != "" {
		if end.Note != "" {
			end.Note += "; "
		}
		end.Note += u
	}
	if !sc.d.headless.finish(sc.d, sc, p.Call, end, art) {
		return nil, exitcode.New(exitcode.Gone, "no headless call %q in flight on this connection: it ended already, or the daemon that began it stopped (see `mosh herd tasks`)", p.Call)
	}
	return struct{}{}, nil
}

// usageNote renders the stated usage for the task's note: "usage " and its compact JSON.
func usageNote(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == "{}" {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return "usage " + string(b)
}

// add registers a call of sc's caller: if sc ends before the call does, the call's task is closed
// failed.
func (h *headlessCalls) add(d *daemon, sc *serverConn, member string) *headlessCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.calls == nil {
		h.calls, h.byTask = map[string]*headlessCall{}, map[string]*headlessCall{}
	}
	h.next++
	c := &headlessCall{handle: "c-" + itoa(int(h.next)), member: member, sc: sc}
	h.calls[c.handle] = c
	c.stop = context.AfterFunc(sc.ctx, func() {
		why := "the caller went away before the answer (its script ended, was interrupted or killed)"
		select {
		case <-d.stopCh:
			why = "the herd daemon stopped before the answer"
		default:
		}
		h.finish(d, sc, c.handle, ledger.Transition{At: time.Now(), State: ledger.StateFailed, Authority: herd.AuthorityRuntime, Note: why},
			ledger.Artifact{Text: why, Source: ledger.SourceError})
	})
	return c
}

// minted records the call's task id (on the member's ledger queue, right after the mint).
func (h *headlessCalls) minted(c *headlessCall, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.id = id
	h.byTask[id] = c
}

// finish ends the call handle begun on sc, if it is still in flight, and reports whether it was.
// The close is queued on the member's ledger queue, after the call's mint; until it ran, reads
// still find the task in flight (byTask), so no reconcile closes it first.
func (h *headlessCalls) finish(d *daemon, sc *serverConn, handle string, end ledger.Transition, art ledger.Artifact) bool {
	h.mu.Lock()
	c, ok := h.calls[handle]
	if !ok || c.sc != sc {
		h.mu.Unlock()
		return false
	}
	delete(h.calls, handle)
	h.mu.Unlock()
	c.stop()
	d.lw.postMust(c.member, func() {
		h.mu.Lock()
		id := c.id
		delete(h.byTask, id)
		h.mu.Unlock()
		if id == "" {
			return // its mint failed (logged)
		}
		if err := d.tasks.CloseTask(id, end, art); err != nil {
			d.logger.Printf("ledger: close the ai() call %s: %v", id, err)
		}
	})
	return true
}

// inFlight reports whether task id is a headless call's, minted and not closed yet.
func (h *headlessCalls) inFlight(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.byTask[id]
	return ok
}

// view shows a call in flight as what it is, a task being worked on, not a prompt waiting in a
// queue (its ledger row is minted like one: see the top of this file).
func (h *headlessCalls) view(t *herd.Task) {
	if t.Open && t.Queued && strings.HasPrefix(t.Member, herd.HeadlessPrefix) && h.inFlight(t.ID) {
		t.Queued = false
		t.State = herd.StateWorking
	}
}

// headlessStoppedReason decides a read's reconcile of an open headless call (on the member's
// ledger queue): ("", true) while it runs, (why, true) when no caller holds it any more, and ok
// false for a task that is not a headless call (its member is not a headless name, or a member of
// that name runs).
func (d *daemon) headlessStoppedReason(member, taskID string) (why string, ok bool) {
	if !strings.HasPrefix(member, herd.HeadlessPrefix) {
		return "", false
	}
	if d.headless.inFlight(taskID) {
		return "", true
	}
	d.mu.Lock()
	_, live := d.members[member]
	d.mu.Unlock()
	if live {
		return "", false
	}
	return headlessGoneNote, true
}
