// Package ledger is the herd's durable store: one SQLite database (herd.db) holding the manifest of
// members and the task ledger (tasks, every state transition a member goes through, and the artifact
// each task ended with).
//
// Concurrency: a *Store is safe for use by many goroutines. Writes go through one connection;
// concurrent write calls are committed together (group commit, see writer.go), each call returning
// once its own data is committed. Reads use a pool of read-only connections that see the last
// committed write (WAL mode) and never wait for the writer.
//
// Durability: every call that returned survives kill -9 of the process (DurabilityNormal, proven by
// TestKill9MidWritesLosesNothingAcknowledged); DurabilityFull also survives power loss at ~1 ms
// (one fsync) per commit.
//
// Identifiers: tasks are numbered herd-wide and shown as "t-N" (t-1, t-2, …). Ids are never reused,
// even after their task was pruned. Times are stored with millisecond precision.
//
// Retention (see Options), applied per member and incrementally after each task closes:
//   - the newest MaxTasksPerMember closed tasks are kept (default 500),
//   - and at most MaxBytesPerMember bytes of prompt text + artifact text (default 16 MiB; the newest
//     task is kept even if it alone is larger),
//   - pruned tasks take their transitions and artifact with them, and the member's untasked log rows
//     older than its oldest kept task go too,
//   - a member's untasked log rows (state changes while no prompt was open) are capped at
//     MaxLogPerMember (default 10,000), checked every 256th insert.
//
// Open tasks are never pruned. A pruning step reads at most about cap index entries of that one
// member, so its cost does not grow with the herd.
//
// Errors: an unknown member or task returns a *NotFoundError (errors.Is(err, ErrNotFound); exitcode.Of
// gives 3); malformed input (bad name, bad task id, empty state) carries exitcode.Usage. Database
// trouble (damaged, locked, disk full, unwritable) is returned as an error naming the file and the
// fix (exitcode.Of gives 5); the package never panics on a bad database.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/vocab"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxTasksPerMember = 500
	DefaultMaxBytesPerMember = 16 << 20
	DefaultMaxLogPerMember   = 10000
	DefaultBusyTimeout       = 5 * time.Second
	DefaultReadConns         = 4
	// ArtifactMaxChars is how many characters (runes, not bytes) of an artifact are kept: the tail.
	ArtifactMaxChars = 8000
)

// Durability selects SQLite's synchronous setting for the WAL.
type Durability string

const (
	// DurabilityNormal (the default) makes every committed write survive a crash or kill -9 of the
	// process (the durability test proves it); a power loss or kernel crash may lose the last few
	// commits but never corrupts the database. One fsync per WAL checkpoint, not per commit.
	DurabilityNormal Durability = "normal"
	// DurabilityFull also survives power loss, at the cost of an fsync on every commit.
	DurabilityFull Durability = "full"
)

// Options configures Open. The zero value gives the documented defaults.
type Options struct {
	// MaxTasksPerMember caps how many closed tasks a member keeps (newest first). 0 = 500; <0 = no cap.
	MaxTasksPerMember int
	// MaxBytesPerMember caps the bytes of task text + artifact text a member keeps. 0 = 16 MiB; <0 = no cap.
	MaxBytesPerMember int64
	// MaxLogPerMember caps a member's log rows that belong to no task (state changes while no prompt
	// was open). 0 = 10,000; <0 = no cap. Rows linked to a task live and die with their task.
	MaxLogPerMember int
	// BusyTimeout is how long a call waits for a lock held by another process before failing. 0 = 5s.
	BusyTimeout time.Duration
	// ReadConns is the size of the read-only connection pool. 0 = 4.
	ReadConns int
	// Durability: DurabilityNormal (default) or DurabilityFull.
	Durability Durability
	// Now is the clock used for open spans in Stats and for durations of open tasks. nil = time.Now.
	Now func() time.Time
}

// ---- Manifest ----

// Member kinds.
const (
	KindLocal  = "local"
	KindRemote = "remote"
)

// Member is one manifest row: everything `restore` needs to bring a member back, never environment
// values (they hold API keys). Zero-valued fields are stored as empty.
type Member struct {
	Name       string    `json:"name"`
	Kind       string    `json:"kind"` // KindLocal or KindRemote
	Engine     string    `json:"engine,omitempty"`
	Bin        string    `json:"bin,omitempty"`
	Args       []string  `json:"args"`
	Cwd        string    `json:"cwd,omitempty"`
	Substrate  string    `json:"substrate,omitempty"` // e.g. "pty"
	Autonomous bool      `json:"autonomous,omitempty"`
	Created    time.Time `json:"created"`
	PID        int       `json:"pid,omitempty"`
	ExitCode   *int      `json:"exitCode,omitempty"` // nil while running / never started
	ExitedAt   time.Time `json:"exitedAt,omitzero"`
	RemoteKind string    `json:"remoteKind,omitempty"` // remote members: "a2a" or "run"
	URL        string    `json:"url,omitempty"`
	// InputKey names how input is submitted (e.g. the engine's submit key); a name, not a secret.
	InputKey string `json:"inputKey,omitempty"`
	// StripEnv lists environment variable NAMES removed from the member's environment.
	StripEnv []string `json:"stripEnv,omitempty"`
	// Extra holds further non-secret fields without a schema change. Never put secrets here.
	Extra map[string]string `json:"extra,omitempty"`
}

// PutMember inserts the member or replaces the row with the same name (all fields).
// The name must match ^[a-z][a-z0-9_-]{0,31}$ and Kind must be local or remote.
func (s *Store) PutMember(m Member) error { return s.putMember(m) }

// GetMember returns the named member, or a *NotFoundError.
func (s *Store) GetMember(name string) (Member, error) { return s.getMember(name) }

// Members returns every member, ordered by creation time then name.
func (s *Store) Members() ([]Member, error) { return s.members() }

// DeleteMember removes the member from the manifest (a *NotFoundError if there is none). Its tasks
// and log stay in the ledger (history outlives `kill` and `prune`) until retention removes them.
func (s *Store) DeleteMember(name string) error { return s.deleteMember(name) }

// UpdatePID records the member's process id and clears any recorded exit (a (re)started process).
func (s *Store) UpdatePID(name string, pid int) error { return s.updatePID(name, pid) }

// UpdateExit records that the member's process exited with code at the given time.
func (s *Store) UpdateExit(name string, code int, at time.Time) error {
	return s.updateExit(name, code, at)
}

// ---- Tasks and transitions ----

// States and authorities as the herd names them (herd/vocab's; the ledger stores any non-empty
// string).
const (
	StateWorking = string(vocab.Working)
	StateBlocked = string(vocab.Blocked)
	StateDone    = string(vocab.Done)
	StateIdle    = string(vocab.Idle)
	StateUnknown = string(vocab.Unknown)
	StateGone    = string(vocab.Gone)
	// StateSubmitted is a task's state from MintTask until its first transition.
	StateSubmitted = string(vocab.Submitted)
	// Task end states other than the member's own: the task failed (its member's process exited
	// during the turn, the remote's task failed or the remote stopped answering), it was canceled
	// (tasks/cancel, kill of a queued task, superseded by a prompt typed at once), or the user
	// interrupted the turn (Escape / Ctrl-C) before it ended on its own.
	StateFailed      = string(vocab.Failed)
	StateCanceled    = string(vocab.Canceled)
	StateInterrupted = string(vocab.Interrupted)
)

// Artifact sources.
const (
	SourceHook   = "hook"   // the engine's own final message (e.g. Stop.last_assistant_message)
	SourceScreen = "screen" // the text that appeared since the prompt
	SourceError  = "error"  // why there is no answer (e.g. the member stopped)
	SourceRemote = "remote" // a remote member's answer (A2A artifacts or status message, a /run body)
	// SourceHeadless is a headless call's answer (ai(): the engine's headless result, or the
	// model API's text).
	SourceHeadless = "headless"
)

// Transition is one observed state change of a member.
type Transition struct {
	At        time.Time `json:"at"`
	State     string    `json:"state"`
	Kind      string    `json:"kind,omitempty"`      // blocked sub-kind: permission|question|menu
	Authority string    `json:"authority,omitempty"` // runtime|hook|screen|remote
	Note      string    `json:"note,omitempty"`
	// TaskID is the task this transition was linked to ("" if none). Set by the store on reads.
	TaskID string `json:"task,omitempty"`
}

// Artifact is what a task ended with. On CloseTask pass the whole text: the store keeps the tail
// ArtifactMaxChars characters and fills Truncated and Chars (the original length in characters).
type Artifact struct {
	Text      string `json:"text"`
	Source    string `json:"source"` // SourceHook, SourceScreen, SourceRemote or SourceError
	Truncated bool   `json:"truncated"`
	Chars     int    `json:"chars"`
}

// Task is one prompt and what became of it. Transitions and Artifact are filled by Task(id) only.
type Task struct {
	ID            string    `json:"id"` // "t-N"
	Member        string    `json:"member"`
	Text          string    `json:"text"`
	Submitted     time.Time `json:"submitted"`
	StateAtSubmit string    `json:"stateAtSubmit,omitempty"`
	// State is the last recorded state: while open, the member's current state; once closed, the
	// terminal state.
	State   string    `json:"state"`
	Kind    string    `json:"kind,omitempty"`
	Open    bool      `json:"open"`
	EndedAt time.Time `json:"endedAt,omitzero"`
	// DurationMs runs from Submitted to EndedAt, or to now while the task is open.
	DurationMs      int64  `json:"durationMs"`
	Note            string `json:"note,omitempty"` // e.g. the reconcile observation
	RemoteTaskID    string `json:"remoteTaskId,omitempty"`
	RemoteContextID string `json:"remoteContextId,omitempty"`
	// Queued: the task waits in the daemon's queue for its member (minted with MintQueued, not
	// yet started with StartTask); it has no transitions and reads StateSubmitted.
	Queued bool `json:"queued,omitempty"`
	// Autonomous copies the member's autonomous flag (its manifest row) at mint; true when the
	// member had no manifest row.
	Autonomous  bool         `json:"autonomous,omitempty"`
	Transitions []Transition `json:"transitions,omitempty"`
	Artifact    *Artifact    `json:"artifact,omitempty"`
}

// MintTask creates a task for a prompt about to be typed into member, and returns it with its new
// herd-wide id. Call it before the first key is sent. Ids are monotonic and never collide, however
// many goroutines mint at once. If the member still has a running task it is closed first as
// canceled with the note "superseded by t-N" (a member works on one prompt at a time; queued
// tasks are left waiting).
func (s *Store) MintTask(member, text, stateAtSubmit string, at time.Time) (Task, error) {
	return s.mintTask(member, text, stateAtSubmit, at, false)
}

// MintQueued creates a task for a prompt that waits in the daemon's queue because its member is
// busy. Unlike MintTask it supersedes nothing and is not the member's running task: transitions
// are not linked to it until StartTask. It reads StateSubmitted while queued.
func (s *Store) MintQueued(member, text, stateAtSubmit string, at time.Time) (Task, error) {
	return s.mintTask(member, text, stateAtSubmit, at, true)
}

// StartTask makes a queued task the member's running task (its prompt is about to be typed). Any
// other running task of the member still open is closed first as canceled, noted "superseded by
// t-N". Starting a task that is closed returns an error wrapping ErrClosed.
func (s *Store) StartTask(id string, at time.Time) error { return s.startTask(id, at) }

// RecordTransition appends tr to the member's log (every transition, whether or not a task is
// open) and links it to the member's open task, whose State/Kind then read as tr's. It returns the
// id of that task ("" if none was open). It does not close the task: terminal states are the
// daemon's call, via CloseTask. Concurrent calls share commits (group commit); each returns once its
// own transition is durable.
func (s *Store) RecordTransition(member string, tr Transition) (taskID string, err error) {
	return s.recordTransition(member, tr)
}

// CloseTask ends the open task id with the terminal transition end (recorded in the member's log
// unless the task's last transition already has the same state and kind) and the artifact a
// (tail-truncated to ArtifactMaxChars characters). Closing an already closed task returns an error
// wrapping ErrClosed and changes nothing. Retention for the member runs in the same transaction.
func (s *Store) CloseTask(id string, end Transition, a Artifact) error {
	return s.closeTask(id, end, a)
}

// Reconcile closes the member's open task, if any, because the member has stopped: it records a
// "gone" transition with authority runtime and the note, and an error artifact carrying the note.
// It returns the closed task's id, or "" when nothing was open.
func (s *Store) Reconcile(member string, at time.Time, note string) (closedID string, err error) {
	return s.reconcile(member, at, note)
}

// LinkRemote records the remote agent's task (and context) id for task id (remote members, A2A).
func (s *Store) LinkRemote(id, remoteTaskID, remoteContextID string) error {
	return s.linkRemote(id, remoteTaskID, remoteContextID)
}

// TaskByRemote finds the task linked to a remote task id (newest first), or a *NotFoundError.
func (s *Store) TaskByRemote(remoteTaskID string) (Task, error) { return s.taskByRemote(remoteTaskID) }

// OpenTask returns the member's open task, or a *NotFoundError if it has none.
func (s *Store) OpenTask(member string) (Task, error) { return s.openTask(member) }

// ---- Reads ----

// TaskFilter selects tasks for Tasks. Zero fields do not filter.
type TaskFilter struct {
	Member string    // one member's tasks
	State  string    // last recorded state (e.g. "done"); "open" selects open tasks
	Since  time.Time // submitted at or after
	Limit  int       // newest N (0 = 100; <0 = no limit)
}

// Tasks returns matching tasks without transitions or artifact, oldest first (the newest Limit of
// them). Every filter combination is served by an index.
func (s *Store) Tasks(f TaskFilter) ([]Task, error) { return s.tasks(f) }

// Task returns one task ("t-N") with its transitions and artifact, or a *NotFoundError.
func (s *Store) Task(id string) (Task, error) { return s.task(id) }

// Log returns the member's timestamped state history since the given time (zero = everything kept),
// oldest first, each entry naming its task if one was open.
func (s *Store) Log(member string, since time.Time) ([]Transition, error) {
	return s.log(member, since)
}

// Stats summarises one member's history since the given time.
type Stats struct {
	Member string    `json:"member"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	// TotalsMs is the time spent in each state, in milliseconds: from each transition to the next,
	// the last one running until now.
	TotalsMs map[string]int64 `json:"totalsMs"`
	// HumanLatencyMs is the time spent blocked: waiting on a person, not on the model.
	HumanLatencyMs   int64 `json:"humanLatencyMs"`
	BlockedSpells    int   `json:"blockedSpells"`
	Tasks            int   `json:"tasks"`            // tasks submitted in the window
	ClosedTasks      int   `json:"closedTasks"`      // of which closed
	MedianDurationMs int64 `json:"medianDurationMs"` // over closed tasks
}

// Stats returns the member's Stats since the given time (zero = everything kept).
func (s *Store) Stats(member string, since time.Time) (Stats, error) { return s.stats(member, since) }

// ---- Health ----

// Check runs SQLite's quick_check and reports a corrupt or unreachable database as an error naming
// the file and the fix. Used by `herd doctor`.
func (s *Store) Check(ctx context.Context) error { return s.check(ctx) }

// CommitStats reports how many write transactions committed how many write calls since Open: the
// group-commit ratio (calls/commits) is 1 for a lone writer and grows with concurrent writers.
func (s *Store) CommitStats() (commits, calls int64) { return s.commits.Load(), s.committed.Load() }

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database connections.
func (s *Store) Close() error { return s.close() }

// ---- Errors ----

// ErrNotFound is matched (errors.Is) by every *NotFoundError.
var ErrNotFound = errors.New("not found")

// ErrClosed is wrapped by CloseTask on a task that is already closed.
var ErrClosed = errors.New("task already closed")

// NotFoundError names what was looked up. exitcode.Of(err) gives exitcode.Gone (3).
type NotFoundError struct {
	What string // "task", "member", "open task"
	Key  string
}

func (e *NotFoundError) Error() string {
	switch e.What {
	case "task":
		return fmt.Sprintf("no task %s in the ledger (mosh herd tasks lists them; old tasks are pruned)", e.Key)
	case "member":
		return fmt.Sprintf("no member %q in the manifest (mosh ps lists them)", e.Key)
	default:
		return fmt.Sprintf("no %s %q", e.What, e.Key)
	}
}

// Unwrap lets errors.Is(err, ErrNotFound) and exitcode.Of(err) == exitcode.Gone hold.
func (e *NotFoundError) Unwrap() []error {
	return []error{ErrNotFound, &exitcode.Error{Code: exitcode.Gone, Err: ErrNotFound}}
}

// FormatTaskID formats an internal task number as "t-N".
func FormatTaskID(n int64) string { return fmt.Sprintf("t-%d", n) }

// ParseTaskID parses "t-N" (also "t-0N" as moshcode printed them) into N. Anything else is a usage
// error naming the expected form (vocab.ParseTaskID, the one parser).
func ParseTaskID(id string) (int64, error) { return vocab.ParseTaskID(id) }

// KnownMember reports whether the ledger knows the name: in the manifest or with any history. Reads
// use it to tell a typo (not found) from a member with nothing in the window (empty).
func (s *Store) KnownMember(name string) (bool, error) {
	ok, err := s.known(s.rs.known, name)
	return ok, s.dbErr("find member", err)
}

// HerdStats returns the Stats of every member the ledger knows (in the manifest or with any
// history) since the given time, and a herd-wide total: times and counts summed, the median over
// every closed task in the window. The total's Member is "".
func (s *Store) HerdStats(since time.Time) (members []Stats, total Stats, err error) {
	return s.herdStats(since)
}

// ReplaceArtifact replaces the artifact of a closed task (a hook's final message that arrived
// after the screen had already closed the task). It returns a *NotFoundError for an unknown id
// and an error wrapping ErrOpen for a task that is still open (CloseTask sets its artifact).
func (s *Store) ReplaceArtifact(id string, a Artifact) error { return s.replaceArtifact(id, a) }

// ErrOpen is wrapped by ReplaceArtifact on a task that is still open.
var ErrOpen = errors.New("task still open")
