package daemon

import (
	"slices"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
)

// askedNow is what a blocked member's screen and live hook payload say it asks, read outside the
// state lock (the screen has its own lock): the engines table reads both (state.ReadQuestion).
type askedNow struct {
	screen *state.Asked // from the settled screen, when it reads blocked
	hook   *state.Asked // from the live hook report's payload
}

// readQuestion reads what m asks when its tracker says blocked: the screen only when the screen
// itself reads blocked (a hook's blocked leads the drawing, and an older numbered list on the
// screen is not the question), the hook's payload when a live report carries one.
func (d *daemon) readQuestion(m *member, now time.Time) askedNow {
	fused, scr, _ := m.trk.Readings(now)
	if fused.State != herd.StateBlocked {
		return askedNow{}
	}
	table, kind := d.engines.Table(), state.Kind(fused.BlockedOn)
	var a askedNow
	if scr != nil && scr.State == herd.StateBlocked {
		snap := m.scr.Snapshot()
		a.screen = table.ReadQuestion(m.engine, kind, &snap, nil)
	}
	if p := m.trk.HookPayload(); len(p) > 0 {
		a.hook = table.ReadQuestion(m.engine, kind, nil, p)
	}
	return a
}

// setQuestionLocked sets m's question for its fused reading: nil unless blocked; the hook's text
// (the tool and its command say more than "Do you want to proceed?") over the screen's, the
// screen's options (as drawn) over the hook's. The hook's question is kept while the member reads
// blocked, as a later report (Claude's Notification) carries less. It reports whether the
// question changed. Called under the state lock.
func (d *daemon) setQuestionLocked(m *member, fused herd.Reading, a askedNow) (*herd.Question, bool) {
	if fused.State != herd.StateBlocked {
		changed := m.question != nil
		m.question, m.hookAsked, m.answerPending = nil, nil, false
		return nil, changed
	}
	if a.hook != nil {
		m.hookAsked = a.hook
	}
	var q *herd.Question
	if s, h := a.screen, m.hookAsked; s != nil || h != nil {
		q = &herd.Question{Kind: fused.BlockedOn}
		if h != nil {
			q.Text, q.Source = h.Text, h.Source
			q.Options = wireOptions(h.Options)
		}
		if s != nil {
			if q.Text == "" {
				q.Text = s.Text
			}
			if len(s.Options) > 0 {
				q.Options, q.Source = wireOptions(s.Options), s.Source
			}
			if q.Source == "" {
				q.Source = s.Source
			}
		}
	}
	if sameQuestion(m.question, q) {
		return m.question, false
	}
	m.question = q
	return q, true
}

func wireOptions(opts []state.AskedOption) []herd.QuestionOption {
	if len(opts) == 0 {
		return nil
	}
	out := make([]herd.QuestionOption, len(opts))
	for i, o := range opts {
		out[i] = herd.QuestionOption{Key: o.Key, Label: o.Label}
	}
	return out
}

func sameQuestion(a, b *herd.Question) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Kind == b.Kind && a.Text == b.Text && a.Source == b.Source && slices.Equal(a.Options, b.Options)
}

// askedOf turns the wire question back into the table's, to check an answer against it.
func askedOf(q *herd.Question) *state.Asked {
	if q == nil {
		return nil
	}
	a := &state.Asked{Kind: state.Kind(q.Kind), Text: q.Text, Source: q.Source}
	for _, o := range q.Options {
		a.Options = append(a.Options, state.AskedOption{Key: o.Key, Label: o.Label})
	}
	return a
}
