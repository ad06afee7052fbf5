package a2aserve

import (
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd"
)

func tr(ms int64, state, kind, note string) herd.TaskTransition {
	return herd.TaskTransition{AtMs: ms, State: state, BlockedOn: kind, Authority: "screen", Note: note}
}

// TestRecordMapping pins the adapter's decisions, and what the a2a server makes of them.
func TestRecordMapping(t *testing.T) {
	base := herd.Task{ID: "t-7", Member: "api", Text: "port the routes", SubmittedMs: 1000, Open: true}
	with := func(f func(*herd.Task)) herd.Task { c := base; f(&c); return c }
	cases := []struct {
		name      string
		v         view
		state     a2a.HerdState
		authority string
		outcome   a2a.Outcome
		a2aState  goa2a.TaskState
	}{
		{"fresh prompt into an idle member", view{task: with(func(t *herd.Task) { t.State, t.StateAtSubmit = "submitted", "idle" })},
			a2a.HerdIdle, "", a2a.OutcomeOpen, goa2a.TaskStateWorking},
		{"a done line left from the previous turn is not this task's", view{task: with(func(t *herd.Task) { t.State, t.StateAtSubmit = "submitted", "done" })},
			a2a.HerdIdle, "", a2a.OutcomeOpen, goa2a.TaskStateWorking},
		{"typed into a busy member", view{task: with(func(t *herd.Task) { t.State, t.StateAtSubmit = "submitted", "working" })},
			a2a.HerdWorking, "", a2a.OutcomeOpen, goa2a.TaskStateWorking},
		{"working", view{task: with(func(t *herd.Task) {
			t.State, t.Transitions = "working", []herd.TaskTransition{tr(1010, "working", "", "")}
		})}, a2a.HerdWorking, "screen", a2a.OutcomeOpen, goa2a.TaskStateWorking},
		{"stopped to ask", view{task: with(func(t *herd.Task) {
			t.State, t.Transitions = "blocked", []herd.TaskTransition{tr(1010, "working", "", ""), tr(1020, "blocked", "permission", "")}
		}), asked: "Allow touch perm.txt? 1 yes 2 no"}, a2a.HerdBlocked, "screen", a2a.OutcomeOpen, goa2a.TaskStateInputRequired},
		{"answer not taken yet", view{task: with(func(t *herd.Task) {
			t.State, t.Transitions = "blocked", []herd.TaskTransition{tr(1010, "working", "", ""), tr(1020, "blocked", "permission", ""), tr(1030, "blocked", "permission", "answered: 1")}
		})}, a2a.HerdBlocked, "", a2a.OutcomeOpen, goa2a.TaskStateInputRequired},
		{"answer taken", view{task: with(func(t *herd.Task) {
			t.State, t.Transitions = "working", []herd.TaskTransition{tr(1010, "working", "", ""), tr(1020, "blocked", "permission", ""),
				tr(1030, "blocked", "permission", "answered: 1"), tr(1040, "working", "", "")}
		})}, a2a.HerdWorking, "screen", a2a.OutcomeOpen, goa2a.TaskStateWorking},
		// Eval finding 5: a hooked engine's screen read done (the last turn's done line) after
		// the prompt, ahead of the hooks; the herd kept the task open and the engine went on to
		// ask a permission. completed would have been terminal for the remote following it.
		{"a screen done while the herd keeps the task open", view{task: with(func(t *herd.Task) {
			t.State, t.StateAtSubmit = "done", "done"
			t.Transitions = []herd.TaskTransition{{AtMs: 1005, State: "working", Authority: "runtime"}, tr(1010, "working", "", ""), tr(1020, "done", "", "")}
		})}, a2a.HerdWorking, "", a2a.OutcomeOpen, goa2a.TaskStateWorking},
		{"idle after working while the herd keeps the task open", view{task: with(func(t *herd.Task) {
			t.State, t.StateAtSubmit = "idle", "idle"
			t.Transitions = []herd.TaskTransition{tr(1010, "working", "", ""), tr(1020, "idle", "", "")}
		})}, a2a.HerdWorking, "", a2a.OutcomeOpen, goa2a.TaskStateWorking},
		{"finished", view{task: with(func(t *herd.Task) {
			t.Open, t.State, t.EndedMs = false, "done", 1100
			t.Transitions = []herd.TaskTransition{tr(1010, "working", "", ""), tr(1100, "done", "", "")}
			t.Artifact = &herd.TaskArtifact{Text: "all tests pass", Source: "screen", Chars: 14}
		})}, a2a.HerdDone, "screen", a2a.OutcomeSettled, goa2a.TaskStateCompleted},
		{"member stopped", view{task: with(func(t *herd.Task) {
			t.Open, t.State, t.EndedMs, t.Note = false, "gone", 1100, "reconciled on read: api no longer exists"
			t.Artifact = &herd.TaskArtifact{Text: "reconciled on read: api no longer exists", Source: "error"}
		})}, a2a.HerdGone, "", a2a.OutcomeGone, goa2a.TaskStateFailed},
		{"canceled (the ledger's close, read by any server)", view{task: with(func(t *herd.Task) {
			t.Open, t.State, t.EndedMs, t.Note = false, "canceled", 1150, "canceled"
			t.Transitions = []herd.TaskTransition{tr(1010, "working", "", ""), tr(1150, "canceled", "", "canceled")}
		})}, a2a.HerdWorking, "screen", a2a.OutcomeCanceled, goa2a.TaskStateCanceled},
		{"interrupted", view{task: with(func(t *herd.Task) {
			t.Open, t.State, t.EndedMs = false, "interrupted", 1150
			t.Transitions = []herd.TaskTransition{tr(1010, "working", "", ""), tr(1150, "interrupted", "", "interrupted (mosh herd interrupt)")}
		})}, a2a.HerdWorking, "screen", a2a.OutcomeCanceled, goa2a.TaskStateCanceled},
	}
	for _, c := range cases {
		rec := c.v.record()
		if rec.State != c.state || rec.Authority != c.authority || rec.Outcome != c.outcome {
			t.Errorf("%s: state %q authority %q outcome %q; want %q %q %q", c.name, rec.State, rec.Authority, rec.Outcome, c.state, c.authority, c.outcome)
		}
		if got := a2a.StateOf(rec); got != c.a2aState {
			t.Errorf("%s: A2A state %s, want %s", c.name, got, c.a2aState)
		}
		if rec.ID != "t-7" || rec.Member != "api" || rec.Text != "port the routes" || !rec.Submitted.Equal(time.UnixMilli(1000)) {
			t.Errorf("%s: identity lost: %+v", c.name, rec)
		}
	}
}

func TestRecordAnswersAndOutput(t *testing.T) {
	v := view{task: herd.Task{ID: "t-2", Member: "api", Text: "perm run", SubmittedMs: 1000, Open: true, State: "blocked", Autonomous: true,
		Transitions: []herd.TaskTransition{tr(1010, "working", "", ""), tr(1020, "blocked", "permission", ""),
			tr(1030, "blocked", "permission", "answered: no, use sqlite"), tr(1040, "working", "", ""), tr(1050, "blocked", "question", "")}},
		asked: "Which port?"}
	rec := v.record()
	if len(rec.Answers) != 1 || rec.Answers[0].Text != "no, use sqlite" || !rec.Answers[0].At.Equal(time.UnixMilli(1030)) {
		t.Fatalf("answers %+v", rec.Answers)
	}
	if len(rec.Transitions) != 4 {
		t.Fatalf("the answer note is not a state change: transitions %+v", rec.Transitions)
	}
	if rec.BlockedOn != "question" || rec.Output != "Which port?" || rec.OutputChars != len("Which port?") || !rec.Autonomous {
		t.Fatalf("blocked record %+v", rec)
	}
	// The screen's question is only the output of an open, blocked task.
	v.task.Open, v.task.State, v.task.EndedMs = false, "done", 1100
	v.task.Artifact = &herd.TaskArtifact{Text: "used sqlite", Source: "hook", Chars: 11}
	if rec := v.record(); rec.Output != "used sqlite" {
		t.Fatalf("closed output %q", rec.Output)
	}
}

// TestSeenEventsFillTheLedgerLag: an event the ledger has not recorded yet counts; one it has,
// or one of another task, or one older than the last recorded change, does not.
func TestSeenEventsFillTheLedgerLag(t *testing.T) {
	task := herd.Task{ID: "t-3", Member: "api", SubmittedMs: 1000, Open: true, State: "blocked",
		Transitions: []herd.TaskTransition{tr(1010, "blocked", "permission", ""), tr(1020, "blocked", "permission", "answered: 1")}}
	v := view{task: task}
	if v.reacted() {
		t.Fatal("an answer alone is not a reaction")
	}
	v.seen = []herd.Event{
		{Type: herd.EventState, Name: "api", Task: "t-2", State: "working", AtMs: 1030},                      // another task
		{Type: herd.EventState, Name: "api", Task: "t-3", State: "idle", AtMs: 1005},                         // older than the ledger
		{Type: herd.EventState, Name: "api", Task: "t-3", State: "working", Authority: "screen", AtMs: 1030}, // the reaction
	}
	rec := v.record()
	if !v.reacted() || rec.State != a2a.HerdWorking || rec.Authority != "screen" || len(rec.Transitions) != 2 {
		t.Fatalf("with the seen event: reacted %v, %+v", v.reacted(), rec)
	}
	if len(v.task.Transitions) != 2 {
		t.Fatal("withSeen changed the ledger's slice")
	}
	// A closed task is the ledger's final word.
	v.task.Open, v.task.State = false, "done"
	if rec := v.record(); rec.State != a2a.HerdBlocked && rec.State != a2a.HerdDone {
		t.Fatalf("closed task took a seen event: %+v", rec)
	}
}
