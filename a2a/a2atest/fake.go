// Package a2atest provides an in-memory a2a.Backend for tests and benchmarks: a herd whose
// members change state only when the test says so, and which records the keys it was sent.
package a2atest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/a2a"
)

// Fake is an in-memory herd. The zero value is not usable; call New.
type Fake struct {
	mu      sync.RWMutex
	members map[string]*a2a.Member
	tasks   map[string]*a2a.TaskRecord
	keys    map[string][]string // keys typed into each member: prompts and answers as "text:<…>", interrupts as key names
	seq     int
	changed chan struct{} // closed and replaced on every change: the event Wait listens to
	// Now is the clock stamped on submissions and transitions; tests fix it for golden files.
	Now func() time.Time
	// OnSend, when set, runs after a prompt or answer is recorded (outside the lock), so a test
	// can script the member's reaction.
	OnSend func(f *Fake, taskID, text string)
}

// New returns an empty fake herd.
func New() *Fake {
	return &Fake{members: map[string]*a2a.Member{}, tasks: map[string]*a2a.TaskRecord{},
		keys: map[string][]string{}, changed: make(chan struct{}), Now: time.Now}
}

// AddMember adds or replaces a member; an empty State becomes idle.
func (f *Fake) AddMember(m a2a.Member) {
	if m.State == "" {
		m.State = a2a.HerdIdle
	}
	f.mu.Lock()
	f.members[m.Name] = &m
	f.notifyLocked()
	f.mu.Unlock()
}

// RemoveMember makes a member gone: its open tasks close with OutcomeGone.
func (f *Fake) RemoveMember(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.members, name)
	for _, t := range f.tasks {
		if t.Member == name && t.Outcome == a2a.OutcomeOpen {
			t.Outcome, t.State, t.EndedAt, t.Error = a2a.OutcomeGone, a2a.HerdGone, f.Now(), "member "+name+" exited"
		}
	}
	f.notifyLocked()
}

// Keys returns what was typed into a member so far.
func (f *Fake) Keys(member string) []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.Clone(f.keys[member])
}

// SetState moves a task's member to state (with a transition) and, for a closing state, closes
// the task as settled with output. blocked closes the task too (it stopped to ask), as the ledger
// does; an answer reopens it.
func (f *Fake) SetState(taskID string, state a2a.HerdState, blockedOn, output string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[taskID]
	if !ok {
		return fmt.Errorf("fake: no task %s", taskID)
	}
	now := f.Now()
	t.State, t.BlockedOn, t.Authority = state, blockedOn, "hook"
	t.Transitions = append(t.Transitions, a2a.Transition{State: state, BlockedOn: blockedOn, Authority: "hook", At: now})
	if output != "" {
		t.Output, t.OutputChars = output, len([]rune(output))
	}
	switch state {
	case a2a.HerdDone, a2a.HerdIdle, a2a.HerdBlocked:
		t.Outcome, t.EndedAt = a2a.OutcomeSettled, now
	}
	if m, ok := f.members[t.Member]; ok {
		m.State, m.BlockedOn, m.Authority = state, blockedOn, "hook"
	}
	f.notifyLocked()
	return nil
}

// Task returns a copy of a task for assertions.
func (f *Fake) Task(id string) (a2a.TaskRecord, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t, ok := f.tasks[id]
	if !ok {
		return a2a.TaskRecord{}, false
	}
	return clone(t), true
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func clone(t *a2a.TaskRecord) a2a.TaskRecord {
	c := *t
	c.Answers = slices.Clone(t.Answers)
	c.Transitions = slices.Clone(t.Transitions)
	return c
}

// Members implements a2a.Backend.
func (f *Fake) Members(ctx context.Context) ([]a2a.Member, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]a2a.Member, 0, len(f.members))
	for _, m := range f.members {
		out = append(out, *m)
	}
	return out, nil
}

// Member implements a2a.Backend.
func (f *Fake) Member(ctx context.Context, name string) (a2a.Member, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	m, ok := f.members[name]
	if !ok {
		return a2a.Member{}, a2a.ErrNoMember
	}
	return *m, nil
}

// Send implements a2a.Backend: the prompt is typed and the member is working at once.
func (f *Fake) Send(ctx context.Context, member, text, answerTaskID string) (a2a.TaskRecord, error) {
	f.mu.Lock()
	m, ok := f.members[member]
	if !ok {
		f.mu.Unlock()
		return a2a.TaskRecord{}, a2a.ErrNoMember
	}
	now := f.Now()
	var t *a2a.TaskRecord
	if answerTaskID != "" {
		t, ok = f.tasks[answerTaskID]
		if !ok || t.Member != member {
			f.mu.Unlock()
			return a2a.TaskRecord{}, a2a.ErrNoTask
		}
		if t.State != a2a.HerdBlocked && t.State != a2a.HerdWorking && t.State != a2a.HerdSubmitted {
			f.mu.Unlock()
			return a2a.TaskRecord{}, fmt.Errorf("task %s is not waiting for an answer", answerTaskID)
		}
		asked := t.Output
		if t.State != a2a.HerdBlocked {
			asked = "" // a follow-up queued into a working or queued task, not an answer to a question
		}
		t.Answers = append(t.Answers, a2a.Turn{Asked: asked, Text: text, At: now})
		t.Outcome, t.EndedAt, t.BlockedOn = a2a.OutcomeOpen, time.Time{}, ""
		t.Output, t.OutputChars, t.Truncated = "", 0, false
	} else {
		f.seq++
		t = &a2a.TaskRecord{ID: fmt.Sprintf("t-%02d", f.seq), Member: member, Text: text, Submitted: now,
			Autonomous: m.Autonomous}
		f.tasks[t.ID] = t
	}
	t.State, t.Authority = a2a.HerdWorking, "hook"
	t.Transitions = append(t.Transitions, a2a.Transition{State: a2a.HerdWorking, Authority: "hook", At: now})
	m.State, m.BlockedOn = a2a.HerdWorking, ""
	f.keys[member] = append(f.keys[member], "text:"+text, "Enter")
	f.notifyLocked()
	out := clone(t)
	hook := f.OnSend
	f.mu.Unlock()
	if hook != nil {
		hook(f, out.ID, text)
		if again, ok := f.Task(out.ID); ok {
			out = again
		}
	}
	return out, nil
}

// Get implements a2a.Backend.
func (f *Fake) Get(ctx context.Context, taskID string, historyLength int) (a2a.TaskRecord, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t, ok := f.tasks[taskID]
	if !ok {
		return a2a.TaskRecord{}, a2a.ErrNoTask
	}
	return clone(t), nil
}

// Cancel implements a2a.Backend: Escape, then Ctrl-C; the member stays.
func (f *Fake) Cancel(ctx context.Context, taskID string) (a2a.TaskRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[taskID]
	if !ok {
		return a2a.TaskRecord{}, a2a.ErrNoTask
	}
	if t.Outcome != a2a.OutcomeOpen && t.State != a2a.HerdBlocked {
		return a2a.TaskRecord{}, a2a.ErrTaskFinished
	}
	now := f.Now()
	f.keys[t.Member] = append(f.keys[t.Member], "Escape", "C-c")
	t.Outcome, t.EndedAt, t.State = a2a.OutcomeCanceled, now, a2a.HerdIdle
	t.Transitions = append(t.Transitions, a2a.Transition{State: a2a.HerdIdle, Authority: "runtime", At: now})
	if m, ok := f.members[t.Member]; ok {
		m.State, m.BlockedOn = a2a.HerdIdle, ""
	}
	f.notifyLocked()
	return clone(t), nil
}

// Wait implements a2a.Backend on change events, never by polling.
func (f *Fake) Wait(ctx context.Context, taskID string, until []a2a.HerdState) (a2a.TaskRecord, error) {
	for {
		f.mu.RLock()
		t, ok := f.tasks[taskID]
		if !ok {
			f.mu.RUnlock()
			return a2a.TaskRecord{}, a2a.ErrNoTask
		}
		if t.Outcome != a2a.OutcomeOpen || slices.Contains(until, t.State) {
			out := clone(t)
			f.mu.RUnlock()
			return out, nil
		}
		ch := f.changed
		f.mu.RUnlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return a2a.TaskRecord{}, ctx.Err()
		}
	}
}

var _ a2a.Backend = (*Fake)(nil)
