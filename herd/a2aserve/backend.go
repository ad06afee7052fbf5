// Package a2aserve is the herd behind `mosh herd serve`: an a2a.Backend over herd.Client. Every
// A2A call becomes the herd verb a person would use — message/send is `herd prompt` (the same
// daemon method, which mints the ledger task before the first keystroke), an answer is
// `herd prompt --answer`, tasks/get is `herd task` (which reconciles), tasks/cancel is
// `herd send-keys Escape` then `C-c` — so A2A can do nothing the CLI cannot, and never kills.
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
// Which members were autonomous (a killed member leaves the roster; its tasks stay hidden if it
// was autonomous, and a member this server never saw counts as autonomous), in memory. A cancel
// is the ledger's: tasks/cancel is `herd task.cancel` (a queued task is removed untyped, a
// running one closed canceled) before the keys interrupt the turn, so a canceled task reads
// canceled after a restart too. The ledger's own ends map honestly: canceled and interrupted →
// canceled, failed (the member's process died, the remote failed) → failed, never completed.
//
// # Queues and follow-ups
//
// A new message to a busy (working or blocked) member is queued by the daemon: its task reads
// submitted until it is typed. A follow-up carrying the id of a working task is queued into that
// task (`herd prompt --continue`): the history lists it as a user message.
//
// # Events, not polling
//
// One subscription to every member's events feeds the roster cache (any event invalidates
// it), wakes the calls that wait on a member, and tells the server when the daemon went away
// (it redials in the background). Wait re-reads the task on each of its member's events.
package a2aserve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// Defaults for Options.
const (
	DefaultAnswerSettle   = 3 * time.Second
	DefaultInterruptGrace = 1500 * time.Millisecond
	DefaultAskedLines     = 12
	maxCanceled           = 4096
)

// Options tune the backend. The zero value gives the defaults.
type Options struct {
	// Redial reconnects after the daemon connection drops; nil means a dropped connection
	// stays dropped (every call then fails until the server restarts).
	Redial func(ctx context.Context) (*herd.Client, error)
	// AnswerSettle bounds how long an answer waits for the member to react before the task is
	// returned, so the caller sees the answer taken rather than the dialog it answered. 3s.
	AnswerSettle time.Duration
	// InterruptGrace is how long Cancel waits, after Escape, for the member to stop before it
	// sends Ctrl-C. Ctrl-C at an engine's prompt quits it, so it is sent only to a member
	// still working or blocked when the grace ends. 1.5s.
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
	// graceSet: Options.InterruptGrace was given, so it overrides the engines table's grace.
	graceSet bool

	mu            sync.Mutex
	canceled      map[string]time.Time // A2A task id → when this server interrupted it
	canceledOrder []string
}

var _ a2a.Backend = (*Backend)(nil)

// New returns a Backend over c, which it owns from now on (Close closes it). It subscribes to
// the herd's events before returning.
func New(ctx context.Context, c *herd.Client, opts Options) (*Backend, error) {
	if opts.AnswerSettle <= 0 {
		opts.AnswerSettle = DefaultAnswerSettle
	}
	graceSet := opts.InterruptGrace > 0
	if !graceSet {
		opts.InterruptGrace = DefaultInterruptGrace
	}
	if opts.AskedLines <= 0 {
		opts.AskedLines = DefaultAskedLines
	}
	k, err := newConn(ctx, c, opts.Redial)
	if err != nil {
		return nil, fmt.Errorf("subscribing to the herd's events: %w", err)
	}
	return &Backend{k: k, opts: opts, home: c.Home(), graceSet: graceSet, canceled: map[string]time.Time{}}, nil
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

// screenStopped: the screen classifier alone reads the member as stopped.
func screenStopped(m herd.Member) bool {
	return m.Screen != nil && (m.Screen.State == herd.StateIdle || m.Screen.State == herd.StateDone)
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
		// A follow-up to a task that is working: queued into that task, typed when the member
		// is next at rest (the task stays open for it), recorded on the task now.
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
	if !taskIDRE().MatchString(id) {
		return view{}, a2a.ErrNoTask
	}
	t, err := b.k.task(ctx, c, id)
	if err != nil {
		return view{}, b.taskErr(id, err)
	}
	v := view{task: *t, autonomous: b.k.autonomous(ctx, t.Member)}
	b.mu.Lock()
	v.canceledAt = b.canceled[id]
	b.mu.Unlock()
	if t.Open && v.canceledAt.IsZero() && t.State == herd.StateBlocked {
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

// Cancel implements a2a.Backend: Escape, then — only if the member is still working or blocked
// after InterruptGrace — Ctrl-C. It never kills the member.
func (b *Backend) Cancel(ctx context.Context, taskID string) (a2a.TaskRecord, error) {
	c, err := b.k.client()
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	v, err := b.view(ctx, c, taskID)
	if err != nil {
		return a2a.TaskRecord{}, err
	}
	if !v.canceledAt.IsZero() || !v.task.Open {
		return a2a.TaskRecord{}, a2a.ErrTaskFinished
	}
	member := v.task.Member
	remoteMember, engine := false, ""
	if row, err := b.row(ctx, member); err == nil {
		remoteMember, engine = row.Kind == herd.KindRemote, row.Engine
	}
	// The ledger records the cancel (it survives a restart of this server and of the daemon):
	// a queued task is removed untyped and that is all; a running one is closed canceled, then
	// its turn is interrupted below.
	r, err := c.CancelTask(ctx, taskID)
	switch {
	case err == nil && r.Queued:
		b.markCanceled(taskID, time.Now())
		return b.Get(ctx, taskID, -1)
	case err != nil && exitcode.Of(err) != exitcode.Gone:
		return a2a.TaskRecord{}, b.wireErr(err)
	}
	if remoteMember {
		// A remote member has no keys to press: kill cancels its open task and keeps it.
		at := time.Now()
		if _, err := c.Kill(ctx, []string{member}, false); err != nil {
			return a2a.TaskRecord{}, b.wireErr(err)
		}
		b.markCanceled(taskID, at)
		return b.Get(ctx, taskID, -1)
	}
	w, unwatch := b.k.watchMember(member)
	defer unwatch()
	// The keys are the engines table's interrupt (Escape, then Ctrl-C); an explicit
	// Options.InterruptGrace overrides the table's grace.
	keys, then, grace := herd.EngineInterrupt(b.home, engine)
	if b.graceSet {
		grace = b.opts.InterruptGrace
	}
	escAt := time.Now().UnixMilli()
	if _, err := c.SendKeysNow(ctx, member, keys...); err != nil {
		return a2a.TaskRecord{}, b.keysErr(member, err)
	}
	if len(then) > 0 && !b.stoppedAfter(ctx, w, escAt, grace) {
		// Ctrl-C at an engine's prompt quits it: send it only while the member still reads busy
		// and its screen does not already show it stopped (a loaded machine can take longer than
		// the grace to publish the stop the screen already shows).
		if m, err := b.row(ctx, member); err == nil && (m.State == herd.StateWorking || m.State == herd.StateBlocked) && !screenStopped(m) {
			if _, err := c.SendKeysNow(ctx, member, then...); err != nil && exitcode.Of(err) != exitcode.Gone {
				return a2a.TaskRecord{}, b.keysErr(member, err)
			}
		}
	}
	b.markCanceled(taskID, time.UnixMilli(escAt))
	return b.Get(ctx, taskID, -1)
}

// stoppedAfter waits up to within for an event, stamped at or after since, that shows
// the member stopped (idle, done, gone, removed).
func (b *Backend) stoppedAfter(ctx context.Context, w *watch, since int64, within time.Duration) bool {
	grace, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		ev, err := w.next(grace)
		if err != nil {
			return false
		}
		if ev.AtMs < since {
			continue
		}
		switch ev.State {
		case herd.StateIdle, herd.StateDone, herd.StateGone:
			return true
		}
		if ev.Type == herd.EventRemoved {
			return true
		}
	}
}

func (b *Backend) markCanceled(id string, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.canceled[id]; ok {
		return
	}
	b.canceled[id] = at
	b.canceledOrder = append(b.canceledOrder, id)
	if len(b.canceledOrder) > maxCanceled {
		drop := b.canceledOrder[0]
		b.canceledOrder = b.canceledOrder[1:]
		delete(b.canceled, drop)
	}
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

func (b *Backend) keysErr(member string, err error) error {
	if exitcode.Of(err) == exitcode.Gone {
		return fmt.Errorf("member %s is gone; nothing to interrupt", member)
	}
	return b.wireErr(err)
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
