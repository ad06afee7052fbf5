package a2a

import (
	"context"
	"errors"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/herd/vocab"
)

// Backend is everything the A2A server needs from the herd. It speaks herd terms (members, herd
// states, open/closed tasks); the server translates to A2A. The herd wires it over its Go client:
//
//	Members  → the roster (status of every member)
//	Member   → status of one member
//	Send     → the prompt path (mint a task in the ledger, then type the text); for an answer,
//	           type the text into the member the task is blocked on and reopen that task
//	Get      → the ledger's task read, which reconciles an open task whose member stopped
//	Cancel   → send-keys Escape, then Ctrl-C, then close the task as canceled; never kill
//	Wait     → the herd's event-based wait on the task's member
//
// Implementations must be safe for concurrent use. Errors: return ErrNoMember / ErrNoTask
// (wrapped or not) for lookups that find nothing, ErrTaskFinished from Cancel on a closed task,
// ErrBadInput (wrapped, with the herd's reason) from Send for text the herd refuses; any other
// error becomes a JSON-RPC internal error whose detail is the error's text, so write
// it for the remote caller (it must not leak paths or secrets).
type Backend interface {
	// Members lists every member of the herd, exposed or not; the server filters.
	Members(ctx context.Context) ([]Member, error)
	// Member returns one member, or ErrNoMember.
	Member(ctx context.Context, name string) (Member, error)
	// Send prompts member with text and returns the task it minted (a busy member queues it:
	// the task reads submitted until it is typed). When answerTaskID is not empty the text goes
	// into that open task: it answers it when it is blocked, and is queued into it as its next
	// turn when it is working or still queued (A2A allows continuing a task that has not ended);
	// the returned record is that same task, with the text appended to Answers (a backend may
	// list a follow-up to a task still queued only once it is typed).
	Send(ctx context.Context, member, text, answerTaskID string) (TaskRecord, error)
	// Get returns a task, reconciled against the member's live state. historyLength is a hint
	// (-1: all) for backends that store many turns; the server trims the history it renders.
	Get(ctx context.Context, taskID string, historyLength int) (TaskRecord, error)
	// Cancel interrupts the task's turn: Escape, then Ctrl-C. It never kills the member. It
	// returns the task closed as OutcomeCanceled, or ErrTaskFinished when the task was closed
	// already (the server checks first; this covers the race).
	Cancel(ctx context.Context, taskID string) (TaskRecord, error)
	// Wait blocks until the task is closed or its member, observed after the prompt took
	// effect, is in one of the herd states in until; then it returns the task. It returns
	// ctx.Err() when ctx ends first. It must wait on events, not poll in a loop.
	Wait(ctx context.Context, taskID string, until []HerdState) (TaskRecord, error)
}

// Errors a Backend returns for lookups that find nothing.
var (
	ErrNoMember     = errors.New("no such member")
	ErrNoTask       = errors.New("no such task")
	ErrTaskFinished = errors.New("task already finished")
	// ErrBadInput: the herd refused the message's text (e.g. it holds control characters); the
	// caller's to fix, so it is invalid params (-32602), never an internal error.
	ErrBadInput = errors.New("the herd refused the message")
)

// HerdState is the herd's own state vocabulary (working, blocked, done, idle, unknown, gone).
type HerdState = vocab.State

const (
	HerdWorking HerdState = vocab.Working
	HerdBlocked HerdState = vocab.Blocked
	HerdDone    HerdState = vocab.Done
	HerdIdle    HerdState = vocab.Idle
	HerdUnknown HerdState = vocab.Unknown
	HerdGone    HerdState = vocab.Gone
	// HerdSubmitted: the task waits in its member's queue, not typed yet.
	HerdSubmitted HerdState = vocab.Submitted
)

// Member is one herd member as the server sees it.
type Member struct {
	Name        string
	Engine      string // e.g. "claude"; "" when unknown
	Description string // optional; the server writes one from Engine and State when empty
	State       HerdState
	BlockedOn   string // permission | question | menu, when State is blocked
	Authority   string // runtime | hook | screen | remote
	// Autonomous members were launched with auto-approve flags. They are not exposed (not on
	// a card, not addressable, their tasks not found) unless Config.ExposeAutonomous.
	Autonomous bool
	// Remote members live behind someone else's endpoint; the server never relays to them.
	Remote bool
	// Queued is how many prompts wait in the member's queue (routing picks the least loaded).
	Queued int
}

// Outcome is how a task closed.
type Outcome string

const (
	OutcomeOpen     Outcome = ""         // still open
	OutcomeSettled  Outcome = "settled"  // the member finished its turn; State says how (done/idle, or blocked: it stopped to ask)
	OutcomeCanceled Outcome = "canceled" // interrupted by Cancel
	OutcomeGone     Outcome = "gone"     // the member exited or was removed while the task was open
	OutcomeFailed   Outcome = "failed"   // mosh could not deliver the prompt, the task errored or its member's process died; Error says why
)

// TaskRecord is a ledger task as the server needs it.
type TaskRecord struct {
	ID        string
	Member    string
	Text      string // the prompt that minted the task
	Submitted time.Time
	// State is the member's herd state: live while the task is open, the final reading once
	// it is closed. BlockedOn and Authority qualify it.
	State     HerdState
	BlockedOn string
	Authority string
	Outcome   Outcome
	EndedAt   time.Time // zero while open
	Error     string    // why it failed, for OutcomeFailed / OutcomeGone
	// Output is the artifact: the engine's last message or the screen delta, tail-truncated;
	// OutputChars is the length before truncation.
	Output      string
	Truncated   bool
	OutputChars int
	// Answers are follow-up messages that answered the task while it was blocked, oldest first.
	Answers []Turn
	// Transitions are the member's state changes since the task was submitted, oldest first.
	Transitions []Transition
	// Autonomous copies the member's flag at mint time, so a task of a hidden member stays
	// hidden even after the member is gone.
	Autonomous bool
}

// Turn is a follow-up message typed into a blocked task.
type Turn struct {
	Asked string // what the member showed when it stopped to ask (optional; becomes an agent message in history)
	Text  string // the answer typed in
	At    time.Time
}

// Transition is one observed state change.
type Transition struct {
	State     HerdState
	BlockedOn string
	Authority string
	At        time.Time
}

// StateOf maps a task to its A2A state. Rounding applies to open tasks only (PRD 0011
// decisions): a closed task is completed, or input-required when it ended by stopping to ask.
//
//	open:   submitted (queued) → submitted; working → working; blocked → input-required; done → completed;
//	        idle → completed once the member has been seen busy since submission (the turn
//	        ended), else working (the prompt has not taken yet); unknown → unknown;
//	        gone → failed
//	closed: settled+blocked → input-required; settled → completed; canceled → canceled;
//	        gone, failed → failed
func StateOf(t TaskRecord) goa2a.TaskState {
	switch t.Outcome {
	case OutcomeCanceled:
		return goa2a.TaskStateCanceled
	case OutcomeGone, OutcomeFailed:
		return goa2a.TaskStateFailed
	case OutcomeSettled:
		if t.State == HerdBlocked {
			return goa2a.TaskStateInputRequired
		}
		return goa2a.TaskStateCompleted
	}
	switch t.State {
	case HerdSubmitted:
		return goa2a.TaskStateSubmitted
	case HerdWorking:
		return goa2a.TaskStateWorking
	case HerdBlocked:
		return goa2a.TaskStateInputRequired
	case HerdDone:
		return goa2a.TaskStateCompleted
	case HerdIdle:
		if busySinceSubmit(t) {
			return goa2a.TaskStateCompleted
		}
		return goa2a.TaskStateWorking
	case HerdGone:
		return goa2a.TaskStateFailed
	}
	return goa2a.TaskStateUnknown
}

// busySinceSubmit reports whether the member was seen working or blocked after the latest
// prompt or answer went in, which is what makes a later idle the end of that turn.
func busySinceSubmit(t TaskRecord) bool {
	since := t.Submitted
	if n := len(t.Answers); n > 0 && t.Answers[n-1].At.After(since) {
		since = t.Answers[n-1].At
	}
	for _, tr := range t.Transitions {
		if tr.At.Before(since) {
			continue
		}
		if tr.State == HerdWorking || tr.State == HerdBlocked {
			return true
		}
	}
	return false
}
