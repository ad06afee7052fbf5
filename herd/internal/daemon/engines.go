package daemon

import (
	"path/filepath"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

// engineSpec is what the daemon needs to know to launch an engine. herd/state owns the real table
// (embedded JSON + engines.json overrides); stateBackend adapts it to this shape.
type engineSpec struct {
	Key            string
	Bin            string
	AgentArgs      []string // --agent: autonomous flags
	ResumeArgs     []string // restore --resume
	LaunchArgs     []string // always added (e.g. codex --no-daemon)
	BracketedPaste bool     // prompts are wrapped in ESC[200~ … ESC[201~
	StripEnv       []string // variable NAMES removed from the member's environment
	// ClearInput are the keys that empty the input line; InputLeftover says whether a screen
	// shows text on it (queue.go clears it before typing a queued prompt).
	ClearInput    []string
	InputLeftover func(screen.Snapshot) bool
	// Resubmit are the keys sent once more when a typed prompt still sits in the input box
	// (InputHolds) at rest, ResubmitSettle after the screen last changed (submit.go); none: the
	// herd does not check.
	Resubmit       []string
	ResubmitSettle time.Duration
	InputHolds     func(screen.Snapshot, string) bool
	// KeyGap, MenuSettle and MenuWait are the engines table's key timing (state.Engine's
	// KeyGap, MenuSettle, MenuWait); zero for a program the table does not know means the
	// table's defaults.
	KeyGap, MenuSettle, MenuWait time.Duration
	// HookGrace: how long a task the screen ended waits for the engine's done hook.
	HookGrace time.Duration
	// Hooks: the engine has a hook spec, so a hook may report a question before the screen
	// shows it (answers wait for it, answer.go).
	Hooks bool
}

func (s engineSpec) keyGap() time.Duration     { return durOr(s.KeyGap, state.DefaultKeyGapMs) }
func (s engineSpec) menuSettle() time.Duration { return durOr(s.MenuSettle, state.DefaultMenuSettleMs) }
func (s engineSpec) menuWait() time.Duration   { return durOr(s.MenuWait, state.DefaultMenuWaitMs) }
func (s engineSpec) hookGrace() time.Duration  { return durOr(s.HookGrace, state.DefaultHookGraceMs) }

func durOr(d time.Duration, defMs int) time.Duration {
	if d > 0 {
		return d
	}
	return time.Duration(defMs) * time.Millisecond
}

// engineTable resolves engine names and builds state trackers.
type engineTable interface {
	Lookup(name string) (engineSpec, bool)
	Keys() []string
	// NewTracker starts tracking a member; changed is called when the tracker changes its mind
	// on its own (a report's grace period or TTL ended).
	NewTracker(engine string, changed func()) tracker
	// Doctor reports rules.json / engines.json problems.
	Doctor() []herd.DoctorCheck
	// Table is the whole table, for what the daemon reads beyond launching and tracking (hook
	// final-message keys, the headless engines doctor lists).
	Table() *state.Table
}

// engineLabel picks the engine label of a `run` command: the engine whose binary or key is
// argv[0]'s basename, else the basename itself (state rules then fall back to the shell rules).
func engineLabel(t engineTable, argv0 string) string {
	base := filepath.Base(argv0)
	if spec, ok := t.Lookup(base); ok {
		return spec.Key
	}
	for _, k := range t.Keys() {
		if spec, _ := t.Lookup(k); filepath.Base(spec.Bin) == base {
			return k
		}
	}
	return base
}
