// Package a2aserve is the herd behind `mosh herd serve`: an a2a.Backend over herd.Client. Every
// A2A call becomes the herd verb a person would use — message/send is `herd prompt` (the same
// daemon method, which mints the ledger task before the first keystroke), an answer is
// `herd prompt --answer`, tasks/get is `herd task` (which reconciles), tasks/cancel is
// `herd task.cancel`, whose interrupt the daemon does (the engines table's Escape, then Ctrl-C
// only while the member still reads busy; never a kill) — so A2A can do nothing the CLI cannot,
// and holds no policy of its own.
//
// # Task identity
//
// An A2A task is the ledger task its message minted; its id is the ledger's (t-N). A message
// that answers an input-required task is `herd prompt --answer`, which the daemon records on
// the blocked task itself (a transition noted "answered: …") instead of minting a new one, so
// the answer continues the same task — as does an answer typed with the CLI.
//
// # What the server itself remembers
//
// Nothing: whether a task's member was autonomous is the ledger's (the task keeps its member's
// flag from its mint, so a killed member's tasks stay hidden if it was autonomous, after any
// restart), closed tasks are read from the daemon each time, and a cancel is the ledger's (`herd task.cancel` removes a queued task untyped, or closes a
// running one canceled and interrupts its turn), so a canceled task reads canceled after a
// restart of this server or of the daemon. The ledger's own ends map honestly: canceled and
// interrupted → canceled, failed (the member's process died, the remote failed) → failed, never
// completed.
//
// # Queues and follow-ups
//
// A new message to a busy (working or blocked) member is queued by the daemon: its task reads
// submitted until it is typed. A follow-up carrying the id of a working task, or of one still
// queued, is queued into that task as its next turn (`herd prompt --continue`), ahead of every
// task queued behind it: the history lists it as a user message (for a task still queued, once
// the follow-up is typed, when the daemon can link its note to the running task).
//
// # Events, not polling
//
// One subscription to every member's events wakes the calls that wait on a member, and tells
// the server when the daemon went away (it redials in the background). Wait re-reads the task
// on each of its member's events.
package a2aserve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// Defaults for Options.
const (
	DefaultAnswerSettle = 3 * time.Second
	DefaultAskedLines   = 12
)

// Options tune the backend. The zero value gives the defaults.
type Options struct {
	// Redial reconnects after the daemon connection drops; nil means a dropped connection
	// stays dropped (every call then fails until the server restarts).
	Redial func(ctx context.Context) (*herd.Client, error)
	// AnswerSettle bounds how long an answer waits for the member to react before the task is
	// returned, so the caller sees the answer taken rather than the dialog it answered. 3s.
	AnswerSettle time.Duration
	// InterruptGrace, when positive, replaces the engines table's grace in the daemon's
	// interrupt of a canceled task (between Escape and the Ctrl-C sent only to a member still
	// busy). 0: the table's (1.5s for every embedded engine).
	InterruptGrace time.Duration
	// AskedLines is how many bottom screen lines show what a blocked member asks. 12.
	AskedLines int
}

// Backend implements a2a.Backend over a herd daemon connection.
type Backend struct {
	k    *conn
	opts Options
	// home is the client's $MOSH_HOME: errors from the daemon have it replaced by "$MOSH_HOME"
	// so a remote caller does not learn local paths.
	home string
}

var _ a2a.Backend = (*Backend)(nil)

// New returns a Backend over c, which it owns from now on (Close closes it). It subscribes to
// the herd's events before returning.
func New(ctx context.Context, c *herd.Client, opts Options) (*Backend, error) {
	if opts.AnswerSettle <= 0 {
		opts.AnswerSettle = DefaultAnswerSettle
	}
	if opts.AskedLines <= 0 {
		opts.AskedLines = DefaultAskedLines
	}
	k, err := newConn(ctx, c, opts.Redial)
	if err != nil {
		return nil, fmt.Errorf("subscribing to the herd's events: %w", err)
	}
	return &Backend{k: k, opts: opts, home: c.Home()}, nil
}

// Close stops the event subscription and closes the daemon connection.
func (b *Backend) Close() error {
	b.k.close()
	return nil
}

// Members implements a2a.Backend: the whole roster, live and remembered.
func (b *Backend) Members(ctx context.Context) ([]a2a.Member, error) {
	ms, err := b.k.members(ctx)
	if err != nil {
		return nil, b.wireErr(err)
	}
	out := make([]a2a.Member, len(ms))
	for i, m := range ms {
		out[i] = toMember(m)
	}
	return out, nil
}

// Member implements a2a.Backend.
func (b *Backend) Member(ctx context.Context, name string) (a2a.Member, error) {
	m, err := b.row(ctx, name)
	switch {
	case errors.Is(err, a2a.ErrNoMember):
		return a2a.Member{}, err
	case err != nil:
		return a2a.Member{}, b.wireErr(err)
	}
	return toMember(m), nil
}

// row is the member's ps row.
func (b *Backend) row(ctx context.Context, name string) (herd.Member, error) {
	ms, err := b.k.members(ctx)
	if err != nil {
		return herd.Member{}, err
	}
	for _, m := range ms {
		if m.Name == name {
			return m, nil
		}
	}
	return herd.Member{}, a2a.ErrNoMember
}

func toMember(m herd.Member) a2a.Member {
	return a2a.Member{Name: m.Name, Engine: m.Engine, State: a2a.HerdState(m.State), BlockedOn: m.BlockedOn,
		Authority: m.Authority, Autonomous: m.Autonomous, Remote: m.Kind == herd.KindRemote, Queued: m.Queued}
}

// Send implements a2a.Backend. A new task is `herd prompt`; an answer is `herd prompt --answer`
// into the member the task is blocked on, after which it waits (on events, at most
// AnswerSettle) for the member to react, and returns the same task.
func (b *Backend) Send(ctx context.Context, member, text, answerTaskID string) (a2a.TaskRecord, error) {
	c, err := b.k.client()
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	if answerTaskID == "" {
		res, err := c.Prompt(ctx, member, text, herd.PromptOptions{})
		if err != nil {
			return a2a.TaskRecord{}, b.promptErr(ctx, c, member, err)
		}
		if res.Task == "" {
			return a2a.TaskRecord{}, errors.New("the herd typed the prompt but minted no task: its ledger is unavailable (the operator should run `mosh herd doctor`)")
		}
		return b.Get(ctx, res.Task, -1)
	}

	v, err := b.view(ctx, c, answerTaskID)
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	if v.task.Member != member {
		return a2a.TaskRecord{}, a2a.ErrNoTask
	}
	rec := v.record()
	if rec.Outcome != a2a.OutcomeOpen {
		return a2a.TaskRecord{}, fmt.Errorf("task %s is not waiting for an answer any more (%s); send a new message without taskId", answerTaskID, rec.Outcome)
	}
	if rec.State != a2a.HerdBlocked || !v.reacted() {
		// A follow-up to a task that is working or still queued: queued into that task, typed
		// when the member is next at rest after the task's turn (the task stays open for it).
		if _, err := c.Prompt(ctx, member, text, herd.PromptOptions{Continue: answerTaskID}); err != nil {
			return a2a.TaskRecord{}, b.promptErr(ctx, c, member, err)
		}
		return b.Get(ctx, answerTaskID, -1)
	}
	w, unwatch := b.k.watchMember(member)
	defer unwatch()
	sentAt := time.Now().UnixMilli()
	res, err := c.Prompt(ctx, member, text, herd.PromptOptions{Answer: true})
	if err != nil {
		return a2a.TaskRecord{}, b.promptErr(ctx, c, member, err)
	}
	// The daemon joins an answer to the blocked member's open task. Should it have minted a
	// new one (the member's open task is not this one), that new task is what the text started.
	id := answerTaskID
	if res.Task != "" && res.Task != answerTaskID {
		id = res.Task
	}
	var seen []herd.Event
	settle, cancel := context.WithTimeout(ctx, b.opts.AnswerSettle)
	for {
		ev, err := w.next(settle)
		if err != nil {
			break // no reaction within the settle time: the task says so (input-required)
		}
		seen = append(seen, ev)
		if ev.Type == herd.EventRemoved || (ev.AtMs >= sentAt && (ev.Task == id || ev.Task == "")) {
			break
		}
	}
	cancel()
	v, err = b.view(ctx, c, id)
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	v.seen = seen
	return v.record(), nil
}

// Get implements a2a.Backend through `herd task`, which reconciles an open task whose member
// stopped.
func (b *Backend) Get(ctx context.Context, taskID string, historyLength int) (a2a.TaskRecord, error) {
	c, err := b.k.client()
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	v, err := b.view(ctx, c, taskID)
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	return v.record(), nil
}

// view reads a task from the ledger and adds what this server knows about it.
func (b *Backend) view(ctx context.Context, c *herd.Client, id string) (view, error) {
	if herd.CheckTaskID(id) != nil {
		return view{}, a2a.ErrNoTask
	}
	t, err := c.Task(ctx, id)
	if err != nil {
		return view{}, b.taskErr(id, err)
	}
	v := view{task: *t}
	if t.Open && t.State == herd.StateBlocked {
		v.asked = b.asked(ctx, c, t.Member)
	}
	return v, nil
}

// asked is the bottom of a blocked member's screen: the question or dialog it stopped on.
func (b *Backend) asked(ctx context.Context, c *herd.Client, member string) string {
	r, err := c.Read(ctx, member, b.opts.AskedLines*3)
	if err != nil {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(r.Screen, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " "))
		}
	}
	if len(lines) > b.opts.AskedLines {
		lines = lines[len(lines)-b.opts.AskedLines:]
	}
	return strings.Join(lines, "\n")
}

// Cancel implements a2a.Backend through `herd task.cancel`: the daemon removes a queued task
// untyped, or closes a running one canceled in the ledger and interrupts its member's turn (the
// engines table's keys; a remote member's task canceled at the remote). It never kills.
func (b *Backend) Cancel(ctx context.Context, taskID string) (a2a.TaskRecord, error) {
	c, err := b.k.client()
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	v, err := b.view(ctx, c, taskID)
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	if !v.task.Open {
		return a2a.TaskRecord{}, a2a.ErrTaskFinished
	}
	if _, err := c.CancelTask(ctx, taskID, herd.InterruptOptions{Grace: b.opts.InterruptGrace}); err != nil {
		if exitcode.Of(err) == exitcode.Gone {
			return a2a.TaskRecord{}, a2a.ErrTaskFinished // it ended meanwhile
		}
		return a2a.TaskRecord{}, b.wireErr(err)
	}
	return b.Get(ctx, taskID, -1)
}

// Wait implements a2a.Backend: it re-reads the task on each event of its member until the task
// is closed or the member, having reacted to the latest prompt or answer, is in one of until.
func (b *Backend) Wait(ctx context.Context, taskID string, until []a2a.HerdState) (a2a.TaskRecord, error) {
	c, err := b.k.client()
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	v, err := b.view(ctx, c, taskID)
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	w, unwatch := b.k.watchMember(v.task.Member)
	defer unwatch()
	var seen []herd.Event
	for {
		// Read after registering: a change between the first read and the watch is not lost.
		if v, err = b.view(ctx, c, taskID); err != nil {
			return a2a.TaskRecord{}, err
		}
		v.seen = seen
		rec := v.record()
		if rec.Outcome != a2a.OutcomeOpen {
			return rec, nil
		}
		if v.reacted() {
			for _, s := range until {
				if rec.State == s {
					return rec, nil
				}
			}
		}
		ev, err := w.next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return a2a.TaskRecord{}, ctx.Err()
			}
			return rec, nil // the connection ended: answer with what we know
		}
		if ev.Task == taskID {
			seen = append(seen, ev)
		}
	}
}

// ---- errors ------------------------------------------------------------------------------------

// taskErr maps a `herd task` failure: unknown (exit 3) or malformed (exit 1) ids are not found.
func (b *Backend) taskErr(id string, err error) error {
	switch exitcode.Of(err) {
	case exitcode.Gone, exitcode.Usage:
		return fmt.Errorf("%w: %s", a2a.ErrNoTask, id)
	}
	return b.wireErr(err)
}

// promptErr maps a `herd prompt` failure for the remote caller.
func (b *Backend) promptErr(ctx context.Context, c *herd.Client, member string, err error) error {
	switch exitcode.Of(err) {
	case exitcode.Gone:
		return fmt.Errorf("%w: %s is gone", a2a.ErrNoMember, member)
	case exitcode.Usage:
		if ms, lerr := b.k.members(ctx); lerr == nil {
			for _, m := range ms {
				if m.Name == member && m.State == herd.StateBlocked {
					return fmt.Errorf("member %s is blocked (%s) on an earlier task; answer it with a message carrying that task's id (tasks/get shows it input-required)%s",
						member, orBlocked(m.BlockedOn), b.openTaskHint(ctx, c, member))
				}
			}
		}
		// The herd refused what was sent (control characters in the text, a follow-up to a
		// task that takes none): the caller's to fix, with the herd's reason.
		return fmt.Errorf("%w: %v", a2a.ErrBadInput, b.wireErr(err))
	}
	return b.wireErr(err)
}

func orBlocked(kind string) string {
	if kind == "" {
		return "blocked"
	}
	return kind
}

// openTaskHint names the member's open task, the one to answer.
func (b *Backend) openTaskHint(ctx context.Context, c *herd.Client, member string) string {
	ts, err := c.Tasks(ctx, herd.TasksFilter{Member: member, State: "open", Limit: 1})
	if err != nil || len(ts) == 0 {
		return ""
	}
	return ": " + ts[0].ID
}

// wireErr turns a herd error into one fit for a remote caller: local paths are masked.
func (b *Backend) wireErr(err error) error {
	if err == nil || errors.Is(err, errDisconnected) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := err.Error()
	if b.home != "" {
		msg = strings.ReplaceAll(msg, b.home, "$MOSH_HOME")
	}
	return errors.New(msg)
}
