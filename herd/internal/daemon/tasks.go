package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// Ledger reads: tasks, task, log, stats. Each read first lets the ledger writer finish what the
// daemon already queued for the members it reads (so a read right after `prompt --wait` sees the
// task closed), then reconciles: an open task whose member is not running any more is closed as
// gone with the observation as its note.

// ledgerUnavailable is the error of every verb that needs the ledger when the database could not
// be opened: the herd itself keeps running.
func (d *daemon) ledgerUnavailable() error {
	why := "the database could not be opened"
	if d.dbErr != nil {
		why = d.dbErr.Error()
	}
	return exitcode.New(exitcode.Infra, "the task ledger is unavailable (%s): members still run; `mosh herd doctor` names the problem and the fix", why)
}

// ledgerErr maps a ledger error for the wire: not-found and usage keep their codes, storage
// trouble is infra and says the herd keeps running.
func ledgerErr(err error) error {
	if err == nil {
		return nil
	}
	var ec *exitcode.Error
	if errors.Is(err, ledger.ErrNotFound) || errors.As(err, &ec) {
		return err
	}
	return exitcode.New(exitcode.Infra, "%v (the herd keeps running; see `mosh herd doctor`)", err)
}

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func zeroMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func wireTransition(tr ledger.Transition) herd.TaskTransition {
	return herd.TaskTransition{AtMs: tr.At.UnixMilli(), State: tr.State, BlockedOn: tr.Kind, Authority: tr.Authority, Note: tr.Note, Task: tr.TaskID}
}

func wireTask(t ledger.Task) herd.Task {
	w := herd.Task{ID: t.ID, Member: t.Member, Text: t.Text, SubmittedMs: t.Submitted.UnixMilli(), StateAtSubmit: t.StateAtSubmit,
		State: t.State, BlockedOn: t.Kind, Open: t.Open, EndedMs: zeroMs(t.EndedAt), DurationMs: t.DurationMs, Note: t.Note,
		RemoteTaskID: t.RemoteTaskID, RemoteContextID: t.RemoteContextID, Queued: t.Queued, Autonomous: t.Autonomous}
	if t.Transitions != nil {
		w.Transitions = make([]herd.TaskTransition, len(t.Transitions))
		for i, tr := range t.Transitions {
			w.Transitions[i] = wireTransition(tr)
			w.Transitions[i].Task = "" // all of them are this task's
		}
	}
	if a := t.Artifact; a != nil {
		w.Artifact = &herd.TaskArtifact{Text: a.Text, Source: a.Source, Truncated: a.Truncated, Chars: a.Chars}
	}
	return w
}

func wireStats(name string, s ledger.Stats) herd.MemberStats {
	totals := s.TotalsMs
	if totals == nil {
		totals = map[string]int64{}
	}
	return herd.MemberStats{Name: name, FromMs: zeroMs(s.From), ToMs: zeroMs(s.To), TotalsMs: totals, HumanLatencyMs: s.HumanLatencyMs,
		BlockedSpells: s.BlockedSpells, Tasks: s.Tasks, ClosedTasks: s.ClosedTasks, MedianDurationMs: s.MedianDurationMs}
}

// stoppedReason says why an open task of member can no longer progress, or "" when the member
// is running and the task is the one the daemon is tracking for it.
func (d *daemon) stoppedReason(member, taskID string) string {
	d.mu.Lock()
	m, live := d.members[member]
	_, remembered := d.remembered[member]
	d.mu.Unlock()
	if !live {
		if remembered {
			return "reconciled on read: " + member + " did not survive a daemon restart"
		}
		return "reconciled on read: " + member + " no longer exists"
	}
	d.state.lock()
	defer d.state.unlock()
	switch {
	case m.lastClosed != nil && m.lastClosed.id == taskID:
		// The daemon closed it itself (its turn ended, or its process exited a moment ago): that
		// close is queued behind this read and says how it ended (failed, with the exit code);
		// a "gone" here would overwrite it.
		return ""
	case m.exited:
		return fmt.Sprintf("reconciled on read: %s exited (code %d)", member, m.exitCode)
	case m.task != nil && m.task.id == "":
		return "" // a prompt's task is being minted: this is it, or it is about to supersede this one
	case m.task == nil || m.task.id != taskID:
		// The daemon tracks another task (or none) for this member: this one is left over from a
		// previous process of the same name, or its end could not be written (disk full).
		return "reconciled on read: " + member + " no longer works on this prompt (restarted since, or its end was not recorded)"
	}
	return ""
}

// queuedStoppedReason says why a queued task will never be typed (its member is gone, or the
// daemon that queued it restarted), or "" while it waits in its member's queue.
func (d *daemon) queuedStoppedReason(member, taskID string) string {
	if why, ok := d.headlessStoppedReason(member, taskID); ok {
		return why
	}
	d.mu.Lock()
	m, live := d.members[member]
	d.mu.Unlock()
	if !live {
		return "reconciled on read: never typed: " + member + " is gone"
	}
	d.state.lock()
	defer d.state.unlock()
	for _, q := range m.queue {
		if q.id == taskID || q.id == "" {
			return ""
		}
	}
	if m.typing == taskID || (m.task != nil && m.task.id == taskID) {
		return ""
	}
	return "reconciled on read: never typed: the queue that held it is gone (daemon restarted)"
}

// reconcileTasks closes every open task in ts whose member stopped, and reports whether it closed
// any. The decision is taken on the member's ledger queue, after the writes the daemon already
// queued for it: a close that was on its way (the task just ended) lands first and is not
// overwritten by a "gone", and a task a prompt is minting right now is left alone.
func (d *daemon) reconcileTasks(ts []ledger.Task) (bool, error) {
	closed := false
	for _, t := range ts {
		if !t.Open {
			continue
		}
		var err error
		if t.Queued {
			// Decided on the member's ledger queue, after what the daemon queued for it: a headless
			// call's close (or its mint, which registers the call) lands first.
			d.lw.do(t.Member, func() {
				why := d.queuedStoppedReason(t.Member, t.ID)
				if why == "" {
					return
				}
				err = d.tasks.CloseTask(t.ID, ledger.Transition{At: time.Now(), State: herd.StateGone, Authority: herd.AuthorityRuntime, Note: why},
					ledger.Artifact{Text: why, Source: ledger.SourceError})
				if errors.Is(err, ledger.ErrClosed) {
					err = nil
				} else if err == nil {
					closed = true
				}
			})
			if err != nil {
				return closed, ledgerErr(err)
			}
			continue
		}
		d.lw.do(t.Member, func() {
			open, e := d.tasks.OpenTask(t.Member)
			if e != nil {
				if !errors.Is(e, ledger.ErrNotFound) {
					err = e
				}
				return
			}
			if open.ID != t.ID {
				return // closed or superseded since it was read
			}
			why := d.stoppedReason(t.Member, t.ID)
			if why == "" {
				return
			}
			if _, e := d.tasks.Reconcile(t.Member, time.Now(), why); e != nil {
				err = e
				return
			}
			closed = true
		})
		if err != nil {
			return closed, ledgerErr(err)
		}
	}
	return closed, nil
}

func hTasks(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.TasksParams
	if err := decode(herd.MethodTasks, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if p.Member != "" {
		if err := herd.CheckName(p.Member); err != nil {
			return nil, err
		}
	}
	if err := checkTaskState(p.State); err != nil {
		return nil, err
	}
	if d.tasks == nil {
		return nil, d.ledgerUnavailable()
	}
	if p.Member != "" {
		d.lw.flush(p.Member)
	} else {
		d.lw.flushAll()
	}
	// Writes the database refused earlier (kept in memory) land before the read, if they can now.
	d.tasks.FlushKept(ctx)
	f := ledger.TaskFilter{Member: p.Member, State: p.State, Since: msTime(p.SinceMs), Limit: p.Limit}
	ts, err := d.tasks.Tasks(f)
	if err != nil {
		return nil, ledgerErr(err)
	}
	if again, err := d.reconcileTasks(ts); err != nil {
		return nil, err
	} else if again {
		if ts, err = d.tasks.Tasks(f); err != nil {
			return nil, ledgerErr(err)
		}
	}
	if len(ts) == 0 && p.Member != "" && !d.knownMember(p.Member) {
		known, err := d.tasks.KnownMember(p.Member)
		if err != nil {
			return nil, ledgerErr(err)
		}
		if !known {
			return nil, exitcode.New(exitcode.Gone, "no member named %s and no tasks of one in the ledger: see `mosh ps` and `mosh herd tasks`", p.Member)
		}
	}
	out := herd.TasksResult{Tasks: make([]herd.Task, len(ts))}
	for i, t := range ts {
		out.Tasks[i] = wireTask(t)
		d.headless.view(&out.Tasks[i])
	}
	return out, nil
}

// checkTaskState validates a --state filter.
func checkTaskState(s string) error {
	switch s {
	case "", "open", herd.StateWorking, herd.StateBlocked, herd.StateDone, herd.StateIdle, herd.StateUnknown, herd.StateGone, ledger.StateSubmitted, ledger.StateFailed, ledger.StateCanceled:
		return nil
	}
	return exitcode.New(exitcode.Usage, "unknown task state %q: use open, submitted, working, blocked, done, idle, unknown, gone, failed or canceled", s)
}

func (d *daemon) knownMember(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, live := d.members[name]
	_, old := d.remembered[name]
	return live || old
}

// unknownTask is the error for an id the ledger does not have.
func unknownTask(id string) error {
	return exitcode.New(exitcode.Gone, "no task %s — list them with `mosh herd tasks` (old tasks are pruned: 500 per member by default)", id)
}

func (d *daemon) readTask(id string) (ledger.Task, error) {
	t, err := d.tasks.Task(id)
	if errors.Is(err, ledger.ErrNotFound) {
		return t, unknownTask(id)
	}
	return t, ledgerErr(err)
}

func hTask(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.TaskParams
	if err := decode(herd.MethodTask, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	id := strings.TrimSpace(p.ID)
	if id == "" {
		return nil, exitcode.New(exitcode.Usage, "missing task id: mosh herd task t-N (mosh herd tasks lists them)")
	}
	if _, err := ledger.ParseTaskID(id); err != nil {
		return nil, err
	}
	if d.tasks == nil {
		return nil, d.ledgerUnavailable()
	}
	t, err := d.readTask(id)
	if err != nil {
		return nil, err
	}
	if t.Open {
		// The daemon may hold this task's next writes in its queue (or the ledger in memory, after
		// a refused write): let them land, then read again.
		d.lw.flush(t.Member)
		d.tasks.FlushKept(ctx)
		if t, err = d.readTask(id); err != nil {
			return nil, err
		}
		if again, err := d.reconcileTasks([]ledger.Task{t}); err != nil {
			return nil, err
		} else if again {
			if t, err = d.readTask(id); err != nil {
				return nil, err
			}
		}
	}
	w := wireTask(t)
	d.headless.view(&w)
	return w, nil
}

func hLog(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.LogParams
	if err := decode(herd.MethodLog, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if p.Name == "" {
		return nil, exitcode.New(exitcode.Usage, "missing member name: mosh herd log NAME (see `mosh ps`)")
	}
	if err := herd.CheckName(p.Name); err != nil {
		return nil, err
	}
	if d.tasks == nil {
		return nil, d.ledgerUnavailable()
	}
	d.lw.flush(p.Name)
	trs, err := d.tasks.Log(p.Name, msTime(p.SinceMs))
	if errors.Is(err, ledger.ErrNotFound) {
		if d.knownMember(p.Name) {
			trs, err = []ledger.Transition{}, nil // known, nothing recorded yet
		} else {
			return nil, exitcode.New(exitcode.Gone, "no member named %s and no history of one in the ledger: see `mosh ps`", p.Name)
		}
	}
	if err != nil {
		return nil, ledgerErr(err)
	}
	out := herd.LogResult{Name: p.Name, Transitions: make([]herd.TaskTransition, len(trs))}
	for i, tr := range trs {
		out.Transitions[i] = wireTransition(tr)
	}
	return out, nil
}

func hStats(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.StatsParams
	if err := decode(herd.MethodStats, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if p.Name != "" {
		if err := herd.CheckName(p.Name); err != nil {
			return nil, err
		}
	}
	if d.tasks == nil {
		return nil, d.ledgerUnavailable()
	}
	since := msTime(p.SinceMs)
	res := herd.StatsResult{SinceMs: p.SinceMs, Members: []herd.MemberStats{}}
	if p.Name != "" {
		d.lw.flush(p.Name)
		st, err := d.tasks.Stats(p.Name, since)
		if errors.Is(err, ledger.ErrNotFound) {
			if !d.knownMember(p.Name) {
				return nil, exitcode.New(exitcode.Gone, "no member named %s and no history of one in the ledger: see `mosh ps`", p.Name)
			}
			st, err = ledger.Stats{Member: p.Name, From: time.Now(), To: time.Now(), TotalsMs: map[string]int64{}}, nil
		}
		if err != nil {
			return nil, ledgerErr(err)
		}
		res.Members = append(res.Members, wireStats(p.Name, st))
		return res, nil
	}
	d.lw.flushAll()
	per, total, err := d.tasks.HerdStats(since)
	if err != nil {
		return nil, ledgerErr(err)
	}
	sort.Slice(per, func(i, j int) bool { return per[i].Member < per[j].Member })
	for _, st := range per {
		res.Members = append(res.Members, wireStats(st.Member, st))
	}
	t := wireStats("", total)
	res.Total = &t
	return res, nil
}
