package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// want is one wanted state; an empty kind matches any blocked sub-kind.
type want struct{ state, kind string }

// waitStateParts splits the states a request names ("blocked,done", "idle"), blanks dropped.
func waitStateParts(in []string) []string {
	var parts []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
	}
	return parts
}

func parseWaitStates(in []string, def []string) ([]want, error) {
	parts := waitStateParts(in)
	if len(parts) == 0 {
		parts = def
	}
	out := make([]want, 0, len(parts))
	for _, p := range parts {
		if p == herd.StateGone {
			out = append(out, want{state: herd.StateGone})
			continue
		}
		st, kind, err := herd.ParseStateArg(p)
		if err != nil {
			return nil, err
		}
		out = append(out, want{st, kind})
	}
	return out, nil
}

func wanted(ws []want, state, kind string) bool {
	for _, w := range ws {
		if w.state == state && (w.kind == "" || w.kind == kind) {
			return true
		}
	}
	return false
}

// waitee is what a wait knows about one name.
type waitee struct {
	herd.WaitOutcome
	exited bool
	// failed: a remote member's task failed. Whatever state the member reads then (idle, done,
	// unknown), nothing came of the prompt: the wait ends with outcome ended.
	failed bool
	// pending: at rest, its task waiting for the engine's done hook (herd.Event.TaskPending).
	pending bool
	// turn: the wait was given no states, so it waits for the end of the task open when it began,
	// whatever state that end leaves (a shell's turn ends idle, an engine's done), or for blocked.
	// task is that task's id ("" when none was open, or its id was not minted yet: any task end
	// counts); open says one was; taskEnded that it ended.
	turn      bool
	open      bool
	task      string
	taskEnded bool
}

// turnWants are what a wait without states matches besides its open task's end: blocked, and
// (with no task open) a member at rest.
var (
	turnBlocked = []want{{state: herd.StateBlocked}}
	turnAtRest  = []want{{state: herd.StateBlocked}, {state: herd.StateDone}, {state: herd.StateIdle}}
)

// decide sets the outcome from the current knowledge: matched, ended (the process exited
// without reaching a wanted state), gone, or "" (keep waiting).
func (w *waitee) decide(ws []want) {
	switch {
	case w.exited:
		// The process exited (state gone, with its exit code): the wait is over, matched only
		// when gone itself was wanted — never "matched done".
		if wanted(ws, herd.StateGone, "") {
			w.Outcome = herd.OutcomeMatched
		} else {
			w.Outcome = herd.OutcomeEnded
		}
	case w.State == herd.StateGone:
		if wanted(ws, herd.StateGone, "") {
			w.Outcome = herd.OutcomeMatched
		} else {
			w.Outcome = herd.OutcomeGone
		}
	case w.failed:
		w.Outcome = herd.OutcomeEnded
	case w.turn && w.open && w.taskEnded:
		w.Outcome = herd.OutcomeMatched // the open task ended, whatever its end
	case w.pending && (w.State == herd.StateDone || w.State == herd.StateIdle):
		// At rest on the screen, the turn's task still waiting for the engine's done hook: the
		// turn is not over for a reader of its task yet (tasks_record.go).
	case w.turn && w.open:
		if wanted(turnBlocked, w.State, w.BlockedOn) {
			w.Outcome = herd.OutcomeMatched
		}
	case w.turn:
		if wanted(turnAtRest, w.State, w.BlockedOn) {
			w.Outcome = herd.OutcomeMatched
		}
	case wanted(ws, w.State, w.BlockedOn):
		w.Outcome = herd.OutcomeMatched
	}
}

// endsTask: the event e (of w's member) closed the task w waits for.
func (w *waitee) endsTask(e herd.Event) bool {
	return w.turn && w.open && e.TaskEnded && e.Task != "" && (w.task == "" || e.Task == w.task)
}

func hWait(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.WaitParams
	if err := decode(herd.MethodWait, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if len(p.Names) == 0 {
		return nil, exitcode.New(exitcode.Usage, "wait needs at least one member name: mosh wait NAME… [--any|--all] [--state S,…] [--timeout D]")
	}
	if p.Any && p.All {
		return nil, exitcode.New(exitcode.Usage, "pass --any or --all, not both")
	}
	turn := len(waitStateParts(p.States)) == 0
	ws, err := parseWaitStates(p.States, herd.DefaultWaitStates)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, n := range p.Names {
		if err := herd.CheckName(n); err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	mode := "all"
	switch {
	case p.Any:
		mode = "any"
	case len(names) == 1 && !p.All:
		mode = "one"
	}

	// Find the members (d.mu), then subscribe and read their states under the state lock, so
	// every change after this point arrives as an event and none before it is missed.
	d.mu.Lock()
	ms := make([]*member, len(names))
	for i, n := range names {
		ms[i] = d.members[n]
	}
	d.mu.Unlock()
	d.state.lock()
	sub := d.bus.subscribeLocked(names, turn) // a turn's end may come as an internal task-end event
	ws2 := make([]*waitee, len(names))
	byName := map[string]*waitee{}
	var tasksEnded []string // tasks seen ending, in order
	for i, n := range names {
		w := &waitee{WaitOutcome: herd.WaitOutcome{Name: n, State: herd.StateGone, Authority: herd.AuthorityRuntime}}
		if m := ms[i]; m != nil && !m.removed {
			w.State, w.BlockedOn, w.Authority, w.exited = m.reading.State, m.reading.BlockedOn, m.reading.Authority, m.exited
			if m.exited {
				c := m.exitCode
				w.ExitCode, w.ExitReason = &c, m.exitReason
			}
			w.failed = m.task == nil && m.kind.failedLocked()
			w.pending = m.task != nil && m.task.endPending
			if w.turn = turn; turn && m.task != nil {
				w.open = true
				if id := m.task.id; id != "-" {
					w.task = id
				}
			}
		}
		w.decide(ws)
		if m := ms[i]; w.Outcome != "" && m != nil && m.task == nil && m.lastClosed != nil {
			// Decided by the state the member is already in: that state ended its last task.
			w.TasksEnded = []string{m.lastClosed.id}
			tasksEnded = append(tasksEnded, m.lastClosed.id)
		}
		ws2[i], byName[n] = w, w
	}
	d.state.unlock()
	defer d.bus.unsubscribe(sub)

	var deadline <-chan time.Time
	if p.TimeoutMs > 0 {
		t := time.NewTimer(time.Duration(p.TimeoutMs) * time.Millisecond)
		defer t.Stop()
		deadline = t.C
	}
	for {
		if res, done := verdict(mode, ws2); done {
			res.TasksEnded = append([]string{}, tasksEnded...)
			d.flushEnded(ws2)
			return res, nil
		}
		select {
		case <-sub.wake():
			evs, ended := sub.take()
			for _, e := range evs {
				w := byName[e.Name]
				if w == nil || w.Outcome != "" {
					continue
				}
				switch e.Type {
				case herd.EventRemoved:
					w.State, w.BlockedOn, w.Authority = herd.StateGone, "", herd.AuthorityRuntime
				case eventTaskEnd:
					// A task ended with no change of state (interrupted, superseded…).
					if !w.endsTask(e) {
						continue
					}
					w.taskEnded = true
					w.TasksEnded = append(w.TasksEnded, e.Task)
					tasksEnded = append(tasksEnded, e.Task)
				case herd.EventState:
					w.State, w.BlockedOn, w.Authority = e.State, e.BlockedOn, e.Authority
					if e.ExitCode != nil {
						w.exited, w.ExitCode, w.ExitReason = true, e.ExitCode, e.ExitReason
					}
					w.failed = e.TaskState == ledger.StateFailed
					w.pending = e.TaskPending
					if e.TaskEnded && e.Task != "" {
						w.TasksEnded = append(w.TasksEnded, e.Task)
						tasksEnded = append(tasksEnded, e.Task)
					}
					if w.endsTask(e) {
						w.taskEnded = true
					}
				default:
					continue
				}
				w.Seq = e.Seq
				w.decide(ws)
			}
			if ended && len(evs) == 0 {
				return nil, exitcode.New(exitcode.Infra, "wait: the daemon dropped the event stream")
			}
		case <-deadline:
			for _, w := range ws2 {
				if w.Outcome == "" {
					w.Outcome = herd.OutcomeTimeout
				}
			}
			res := result(mode, herd.OutcomeTimeout, "", ws2)
			res.TasksEnded = append([]string{}, tasksEnded...)
			d.flushEnded(ws2)
			return res, nil
		case <-ctx.Done():
			return nil, exitcode.New(exitcode.Interrupted, "wait cancelled: the client cancelled it or went away")
		case <-sc.d.stopCh:
			return nil, exitcode.New(exitcode.Infra, "wait ended: the herd daemon is stopping")
		}
	}
}

// flushEnded makes the ends a wait reports durable before it answers: a task named in
// tasksEnded reads closed from the ledger, even after a crash of the daemon right after.
func (d *daemon) flushEnded(ws []*waitee) {
	for _, w := range ws {
		if len(w.TasksEnded) > 0 {
			d.lw.flush(w.Name)
		}
	}
}

// verdict says whether the wait is over and with what result.
func verdict(mode string, ws []*waitee) (herd.WaitResult, bool) {
	switch mode {
	case "one":
		if ws[0].Outcome != "" {
			return result(mode, ws[0].Outcome, "", ws), true
		}
	case "any":
		undecided, failed := 0, ""
		for _, w := range ws {
			switch w.Outcome {
			case herd.OutcomeMatched:
				for _, o := range ws {
					if o.Outcome == "" {
						o.Outcome = herd.OutcomePending
					}
				}
				return result(mode, herd.OutcomeMatched, w.Name, ws), true
			case "":
				undecided++
			case herd.OutcomeEnded:
				failed = herd.OutcomeEnded
			default:
				if failed == "" {
					failed = w.Outcome
				}
			}
		}
		if undecided == 0 {
			return result(mode, failed, "", ws), true
		}
	default: // all
		all := true
		for _, w := range ws {
			switch w.Outcome {
			case herd.OutcomeMatched:
			case "":
				all = false
			default:
				for _, o := range ws {
					if o.Outcome == "" {
						o.Outcome = herd.OutcomePending
					}
				}
				return result(mode, w.Outcome, "", ws), true
			}
		}
		if all {
			return result(mode, herd.OutcomeMatched, "", ws), true
		}
	}
	return herd.WaitResult{}, false
}

func result(mode, outcome, winner string, ws []*waitee) herd.WaitResult {
	r := herd.WaitResult{Mode: mode, Outcome: outcome, Winner: winner, Results: make([]herd.WaitOutcome, len(ws))}
	for i, w := range ws {
		r.Results[i] = w.WaitOutcome
	}
	return r
}

// promptOutcome is how a prompt --wait ended, and how its task ended when it ended other than
// done or idle.
type promptOutcome struct {
	herd.WaitOutcome
	taskState string
}

// awaitAfterPrompt waits for the member's reaction to a prompt: the first state change into a
// wanted state after the prompt was typed (a state that was already showing does not count).
// A queued prompt's wait starts counting once its task is typed (the first event of that task);
// the task ending untyped (canceled, failed), failing, or the member's process exiting ends the
// wait with outcome ended.
func (d *daemon) awaitAfterPrompt(ctx context.Context, m *member, sub *busSub, ws []want, timeout time.Duration, task string, queued bool) promptOutcome {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	started := !queued
	for {
		select {
		case <-sub.wake():
			evs, ended := sub.take()
			for _, e := range evs {
				if e.Name != m.name {
					continue
				}
				switch e.Type {
				case herd.EventRemoved:
					return promptOutcome{WaitOutcome: herd.WaitOutcome{Name: m.name, Outcome: herd.OutcomeGone, State: herd.StateGone}}
				case eventTyped:
					if e.Task == task {
						started = true
					}
				case eventTaskEnd:
					if task != "" && e.Task == task && e.TaskState != "" && e.TaskState != ledger.StateDone && e.TaskState != ledger.StateIdle {
						return promptOutcome{herd.WaitOutcome{Name: m.name, Outcome: herd.OutcomeEnded, State: e.State, Seq: e.Seq, ExitCode: e.ExitCode, ExitReason: e.ExitReason}, e.TaskState}
					}
					if task != "" && e.Task == task && started && wanted(ws, e.TaskState, "") {
						// Its turn ended without a state change (a prompt typed with now over a task
						// that waited for its engine's done hook).
						return promptOutcome{herd.WaitOutcome{Name: m.name, Outcome: herd.OutcomeMatched, State: e.State, BlockedOn: e.BlockedOn, Authority: e.Authority, Seq: e.Seq}, e.TaskState}
					}
				case herd.EventState:
					o := promptOutcome{WaitOutcome: herd.WaitOutcome{Name: m.name, State: e.State, BlockedOn: e.BlockedOn, Authority: e.Authority, Seq: e.Seq}}
					if e.ExitCode != nil {
						// The process exited: whatever the prompt was waiting for, it is over.
						o.Outcome, o.ExitCode, o.ExitReason = herd.OutcomeEnded, e.ExitCode, e.ExitReason
						if e.Task == task {
							o.taskState = e.TaskState
						}
						return o
					}
					if !started {
						continue // the turns ahead of this queued prompt
					}
					if task != "" && e.Task == task && e.TaskEnded && isFailedEnd(e.TaskState) {
						// The prompt's task failed (a remote's error, a dead remote): that is the
						// answer, whatever state the member reads now.
						o.Outcome, o.taskState = herd.OutcomeEnded, e.TaskState
						return o
					}
					if e.TaskState == ledger.StateFailed {
						o.Outcome, o.taskState = herd.OutcomeEnded, e.TaskState
						return o
					}
					if task != "" && (e.State == herd.StateDone || e.State == herd.StateIdle) && !(e.Task == task && e.TaskEnded) {
						// At rest, but the prompt's own turn has not ended (tasks_record.go): the
						// screen of the turn before, a prompt not taken up yet, or a task waiting
						// for its engine's done hook. Its end comes as an event of its own.
						continue
					}
					if wanted(ws, e.State, e.BlockedOn) {
						o.Outcome = herd.OutcomeMatched
						if e.Task == task && e.TaskEnded {
							o.taskState = e.TaskState
						}
						return o
					}
				}
			}
			if ended && len(evs) == 0 {
				return promptOutcome{WaitOutcome: herd.WaitOutcome{Name: m.name, Outcome: herd.OutcomeGone, State: herd.StateGone}}
			}
		case <-deadline:
			return promptOutcome{WaitOutcome: herd.WaitOutcome{Name: m.name, Outcome: herd.OutcomeTimeout, State: d.readingOf(m).State}}
		case <-ctx.Done():
			return promptOutcome{WaitOutcome: herd.WaitOutcome{Name: m.name, Outcome: herd.OutcomeGone, State: herd.StateGone}}
		case <-d.stopCh:
			return promptOutcome{WaitOutcome: herd.WaitOutcome{Name: m.name, Outcome: herd.OutcomeGone, State: herd.StateGone}}
		}
	}
}

// isFailedEnd: a task end that is not its own turn ending (done or idle).
func isFailedEnd(s string) bool {
	switch s {
	case ledger.StateFailed, ledger.StateCanceled, ledger.StateInterrupted, ledger.StateGone:
		return true
	}
	return false
}
