package a2aserve

import (
	"strings"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/vocab"
)

// stateSubmitted is the ledger's state of a task no state change was recorded against yet.
const stateSubmitted = string(vocab.Submitted)

func isTaskEnd(s string) bool { return vocab.State(s).IsTaskEnd() }

// exitNote is the note of the transition that closed t because its member's process exited.
func exitNote(t herd.Task) string {
	if n := len(t.Transitions); n > 0 && strings.HasPrefix(t.Transitions[n-1].Note, herd.NoteExited) {
		return "member " + t.Member + " stopped: " + t.Transitions[n-1].Note
	}
	return ""
}

// view is one A2A task: its ledger task plus what only this server knows.
type view struct {
	task  herd.Task
	asked string // the bottom of the screen while the member is blocked on this task
	// seen are state events of this task the caller received; see withSeen.
	seen []herd.Event
}

// withSeen returns the task with the state events the ledger does not show yet appended as
// transitions. The daemon emits an event and then queues its ledger write, so a read made on
// an event can come back a moment behind it; the event is the herd's own reading, so it is
// as honest as the row it precedes. Only events of this task, newer than its last recorded
// transition, count.
func (v view) withSeen() herd.Task {
	t := v.task
	if len(v.seen) == 0 || !t.Open {
		return t
	}
	var lastAt int64
	if n := len(t.Transitions); n > 0 {
		lastAt = t.Transitions[n-1].AtMs
	}
	added := false
	for _, ev := range v.seen {
		if ev.Task != t.ID || ev.Type != herd.EventState || ev.AtMs < lastAt || ev.AtMs < t.SubmittedMs {
			continue
		}
		if n := len(t.Transitions); n > 0 {
			l := t.Transitions[n-1]
			if l.AtMs == ev.AtMs && l.State == ev.State && l.BlockedOn == ev.BlockedOn && l.Authority == ev.Authority && l.Note == "" {
				continue // already recorded
			}
		}
		if !added {
			t.Transitions = append([]herd.TaskTransition(nil), t.Transitions...)
			added = true
		}
		t.Transitions = append(t.Transitions, herd.TaskTransition{AtMs: ev.AtMs, State: ev.State, BlockedOn: ev.BlockedOn, Authority: ev.Authority})
		t.State, t.BlockedOn = ev.State, ev.BlockedOn
		lastAt = ev.AtMs
	}
	return t
}

func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// turns splits the ledger's transitions into observed state changes and answers, and reports
// whether the member changed state after the latest prompt or answer went in. Until it has,
// its state belongs to the previous turn (a done line, the dialog just answered) and says
// nothing about this one.
func turns(t herd.Task) (trs []a2a.Transition, answers []a2a.Turn, reacted bool) {
	for _, tr := range t.Transitions {
		at := msTime(tr.AtMs)
		if text, ok := strings.CutPrefix(tr.Note, herd.NoteAnswered); ok {
			answers = append(answers, a2a.Turn{Text: text, At: at})
			reacted = false
			continue
		}
		if text, ok := strings.CutPrefix(tr.Note, herd.NoteContinued); ok {
			// A follow-up queued into the task: a user message of its history. The member's
			// state is unchanged by it (the task keeps reading as it did).
			answers = append(answers, a2a.Turn{Text: text, At: at})
			continue
		}
		if isTaskEnd(tr.State) {
			continue // how the task ended, not a state of the member (record() reads it)
		}
		trs = append(trs, a2a.Transition{State: a2a.HerdState(tr.State), BlockedOn: tr.BlockedOn, Authority: tr.Authority, At: at})
		reacted = true
	}
	return trs, answers, reacted
}

// reacted: see turns.
func (v view) reacted() bool {
	_, _, r := turns(v.withSeen())
	return r
}

// record maps the view to the a2a server's TaskRecord. Decisions:
//
//   - State is the herd's own reading, unrounded (the a2a server rounds it for A2A and shows
//     it as is in metadata), with the sub-kind and the authority of the last state change.
//   - Before the member reacted to the latest prompt or answer its reading is the previous
//     turn's, so the record says what that means for this task instead: a prompt into a member
//     at rest reads idle (A2A: working — the prompt has not taken yet) even while the screen
//     still shows the last turn's done line; an answer not taken yet reads blocked (A2A:
//     input-required); a prompt typed into a busy member reads working. Authority stays empty:
//     there is no reading of this turn yet.
//   - An open task is never at rest: while the ledger task is open a done or idle reading
//     reads working (authority empty). The herd ends a task by closing it (a hooked engine on
//     its done hook, the screen when the daemon takes it as the turn's end); until then a done
//     line on the screen is the last turn's, or this one's ahead of the hooks that say so, and
//     the A2A server would round it to completed, which is terminal: a remote member reading
//     it would close its task with no answer while this one runs on (and asks a permission).
//     The transitions keep the reading as seen; Wait returns once the task closes.
//   - Answers are the ledger's "answered" notes (the daemon clips their text to 200 runes).
//   - A closed task is settled with its last state, or gone when its member stopped: its process
//     exited during the task (the daemon closes it as done, noted "the process exited …") or
//     it was killed or vanished (the ledger's reconcile). The note becomes Error.
func (v view) record() a2a.TaskRecord {
	t := v.withSeen()
	trs, answers, reacted := turns(t)
	rec := a2a.TaskRecord{
		ID: t.ID, Member: t.Member, Text: t.Text, Submitted: msTime(t.SubmittedMs),
		Transitions: trs, Answers: answers, Autonomous: t.Autonomous,
	}
	switch {
	case t.Open && t.Queued:
		rec.State = a2a.HerdSubmitted // waiting in its member's queue
	case reacted && len(trs) > 0:
		last := trs[len(trs)-1]
		rec.State, rec.BlockedOn, rec.Authority = last.State, last.BlockedOn, last.Authority
		if t.Open && (last.State == a2a.HerdDone || last.State == a2a.HerdIdle) {
			// The member is at rest but the herd has not ended the task: a hooked engine's
			// screen shows a done line (the last turn's, or this one's before the hooks that say
			// so arrive), or a follow-up waits to be typed into it. Only the herd closing the
			// task ends it; completed is terminal in A2A, and a remote that read it would close
			// its own task with no answer while this one runs on and asks (eval finding 5).
			rec.State, rec.BlockedOn, rec.Authority = a2a.HerdWorking, "", ""
		}
	case len(answers) > 0 || t.StateAtSubmit == herd.StateBlocked:
		rec.State = a2a.HerdBlocked
		for i := len(trs) - 1; i >= 0 && rec.BlockedOn == ""; i-- {
			rec.BlockedOn = trs[i].BlockedOn
		}
	case t.StateAtSubmit == herd.StateWorking:
		rec.State = a2a.HerdWorking
	default:
		rec.State = a2a.HerdIdle
	}

	if a := t.Artifact; a != nil {
		if a.Source == "error" {
			rec.Error = a.Text
		} else {
			rec.Output, rec.Truncated, rec.OutputChars = a.Text, a.Truncated, a.Chars
		}
	}

	switch {
	case !t.Open && (vocab.State(t.State) == vocab.Canceled || vocab.State(t.State) == vocab.Interrupted):
		// Canceled (tasks/cancel, kill, superseded) or interrupted: never completed.
		rec.Outcome, rec.EndedAt = a2a.OutcomeCanceled, msTime(t.EndedMs)
		if rec.Error == "" {
			rec.Error = t.Note
		}
	case !t.Open && vocab.State(t.State) == vocab.Failed:
		// Its member's process died mid-turn (the note has the exit code), or the remote failed.
		rec.Outcome, rec.EndedAt = a2a.OutcomeFailed, msTime(t.EndedMs)
		if rec.Error == "" {
			rec.Error = exitNote(t)
		}
		if rec.Error == "" {
			rec.Error = t.Note
		}
	case t.Open:
		rec.Outcome = a2a.OutcomeOpen
		if rec.State == a2a.HerdBlocked && rec.Output == "" && v.asked != "" {
			rec.Output, rec.OutputChars = v.asked, len([]rune(v.asked))
		}
	case t.State == herd.StateGone || exitNote(t) != "":
		rec.Outcome, rec.EndedAt, rec.State = a2a.OutcomeGone, msTime(t.EndedMs), a2a.HerdGone
		if rec.Error == "" {
			rec.Error = exitNote(t)
		}
		if rec.Error == "" {
			rec.Error = t.Note
		}
		if rec.Error == "" {
			rec.Error = "member " + t.Member + " stopped before the task finished"
		}
	default:
		rec.Outcome, rec.EndedAt = a2a.OutcomeSettled, msTime(t.EndedMs)
	}
	return rec
}
