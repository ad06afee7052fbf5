// Package herd is the daemon that owns agent sessions ("members") and the one Go API every adapter
// (CLI, script builtins, A2A, MCP) drives it through.
//
// The daemon listens on a unix socket under $MOSH_HOME/herd and speaks newline-delimited JSON-RPC 2.0;
// docs/protocol.md documents every method. Client (client.go) is the only implementation of the verbs
// on the caller's side: adapters format its results and map its errors to exit codes with
// exitcode.Of(err).
//
// This file holds the wire types. JSON keys are lowerCamelCase and part of the interface.
package herd

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/screen/snapshot"
	"github.com/mosh-dev/mosh/herd/vocab"
)

// Protocol method names (docs/protocol.md documents params and results).
// Version is the herd protocol and daemon version, reported by daemon.status and ping.
const Version = "0.1.0"

const (
	MethodPing         = "ping"
	MethodRun          = "run"
	MethodStart        = "start"
	MethodList         = "list"
	MethodPrompt       = "prompt"
	MethodRead         = "read"
	MethodSendKeys     = "sendKeys"
	MethodWait         = "wait"
	MethodKill         = "kill"
	MethodPrune        = "prune"
	MethodRestore      = "restore"
	MethodReport       = "report"
	MethodStatus       = "status"
	MethodDoctor       = "doctor"
	MethodExplain      = "explain"
	MethodDaemonStatus = "daemon.status"
	MethodDaemonStop   = "daemon.stop"
	MethodAttach       = "attach"
	MethodSubscribe    = "subscribe"
	MethodUnsubscribe  = "unsubscribe"
	MethodResize       = "resize"
	// MethodCancel is a notification (no id): {"id": <id of an in-flight request>} ends that
	// request (a wait or prompt --wait) as if its client had gone away.
	MethodCancel = "cancel"

	// Ledger reads (tasks.go): every prompt is a task; these read it back.
	MethodTasks = "tasks"
	MethodTask  = "task"
	// MethodCancelTask cancels one task: a queued one is removed untyped; a running one is closed
	// canceled in the ledger and its member's turn interrupted by the daemon (as MethodInterrupt).
	MethodCancelTask = "task.cancel"
	// MethodInterrupt stops a member's turn without killing it: the engines table's interrupt
	// keys (Escape), a grace, then its second keys (Ctrl-C) only while the member still reads
	// busy; a remote member's open task is canceled instead. The task the turn belonged to is
	// closed interrupted in the ledger.
	MethodInterrupt = "interrupt"
	MethodLog       = "log"
	MethodStats     = "stats"
	// MethodAnswer answers a blocked member, checked against its question (herd.Question): a
	// menu takes an option's number or label, a permission yes/no/always, a question text.
	MethodAnswer = "answer"

	// NotifyEvent is the server→client notification carrying one Event to a subscriber.
	NotifyEvent = "event"
	// NotifySubscriptionEnded tells a subscriber that fell too far behind that its subscription
	// ended: {"subscription": id, "reason": "…"}.
	NotifySubscriptionEnded = "subscription.ended"
)

// States and authorities (herd/vocab's names). A member that no longer exists reads StateGone.
const (
	StateWorking = string(vocab.Working)
	StateBlocked = string(vocab.Blocked)
	StateDone    = string(vocab.Done)
	StateIdle    = string(vocab.Idle)
	StateUnknown = string(vocab.Unknown)
	StateGone    = string(vocab.Gone)

	AuthorityRuntime = string(vocab.AuthorityRuntime)
	AuthorityHook    = string(vocab.AuthorityHook)
	AuthorityScreen  = string(vocab.AuthorityScreen)
	AuthorityRemote  = string(vocab.AuthorityRemote)

	// Reason codes of ExplainResult.ReasonCode (herd/vocab; docs/protocol.md "explain").
	ReasonRuntimeExit = vocab.ReasonRuntimeExit
	ReasonRemoteClaim = vocab.ReasonRemoteClaim

	KindLocal  = "local"
	KindRemote = "remote"

	SubstratePty = "pty"
)

// Defaults the daemon applies when a request leaves them out.
const (
	DefaultCols      = 120
	DefaultRows      = 40
	DefaultReadLines = 60
	MaxReportTTL     = 15 * time.Minute
	HistoryLines     = 10000
)

// DefaultWaitStates is what a wait given no states matches for a name with no member (a wait on
// a member given no states waits for the end of the task open when it began, whatever state that
// end leaves, or for blocked; with no task open, for the member at rest: idle, done or blocked).
var DefaultWaitStates = []string{StateBlocked, StateDone}

// ValidName reports whether s is a legal member name (vocab.NamePattern).
func ValidName(s string) bool { return vocab.ValidName(s) }

// CheckName returns a usage error naming the fix when s is not a legal member name.
func CheckName(s string) error {
	if ValidName(s) {
		return nil
	}
	return exitcode.New(exitcode.Usage, "invalid member name %q: use 1-32 characters, a lowercase letter first, then a-z, 0-9, '-' or '_' (e.g. --name api)", s)
}

// ParseStateArg splits "blocked:permission" into state and kind and validates both (vocab.Parse,
// the one parser: case-insensitive, lower-case out). Only blocked takes a kind. It accepts the
// five reportable states (not gone). The error is a usage error naming the fix.
func ParseStateArg(s string) (state, kind string, err error) {
	st, k, err := vocab.Parse(s)
	if err != nil {
		return "", "", exitcode.Wrap(err, exitcode.Usage)
	}
	return string(st), string(k), nil
}

// RunParams launches any command as a member (`herd run`).
type RunParams struct {
	Name   string   `json:"name,omitempty"`   // default <engine>-<basename(cwd)>, -2, -3… on collision
	Cwd    string   `json:"cwd,omitempty"`    // absolute; the client fills in its working directory
	Engine string   `json:"engine,omitempty"` // engine label for state rules; default basename(argv[0]) when it names an engine, else "shell"/basename
	Argv   []string `json:"argv"`             // the command; argv[0] resolved on the caller's PATH
	Env    []string `json:"env"`              // the caller's environment (os.Environ()); the member gets exactly this + MOSH_HERD_NAME/MOSH_HERD_DIR
	Cols   int      `json:"cols,omitempty"`
	Rows   int      `json:"rows,omitempty"`
}

// StartParams launches an engine from the engines table (`herd start ENGINE`).
type StartParams struct {
	Engine string   `json:"engine"` // engine key or alias (claude, cc, codex…)
	Name   string   `json:"name,omitempty"`
	Cwd    string   `json:"cwd,omitempty"`
	Agent  bool     `json:"agent,omitempty"` // add the engine's autonomous flags; marks the member autonomous
	Args   []string `json:"args,omitempty"`  // extra args after the engine's own
	Env    []string `json:"env"`
	Cols   int      `json:"cols,omitempty"`
	Rows   int      `json:"rows,omitempty"`
}

// Reading is one authority's view of a member's state.
type Reading struct {
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"`
	Authority string `json:"authority"`
	Rule      string `json:"rule,omitempty"`      // screen: the rule id/pattern that matched
	AtMs      int64  `json:"atMs,omitempty"`      // when this reading was taken (unix ms)
	ExpiresMs int64  `json:"expiresMs,omitempty"` // hook: when the report's TTL ends (unix ms)
}

// Member is one ps row, and the result of run/start.
type Member struct {
	Name      string `json:"name"`
	Engine    string `json:"engine"`
	Kind      string `json:"kind"` // local | remote
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"`
	Authority string `json:"authority"`
	Cwd       string `json:"cwd"`
	Pid       int    `json:"pid,omitempty"`
	AgeMs     int64  `json:"ageMs"`
	CreatedMs int64  `json:"createdMs"`
	Alive     bool   `json:"alive"`
	Attached  int    `json:"attached"` // number of attached clients
	Substrate string `json:"substrate"`
	ExitCode  *int   `json:"exitCode,omitempty"` // set once the process exited
	// ExitReason is what the process left on its screen when it exited (its last non-blank
	// lines): why an engine that stopped during start-up stopped.
	ExitReason string   `json:"exitReason,omitempty"`
	Autonomous bool     `json:"autonomous"`
	Bin        string   `json:"bin,omitempty"`
	Args       []string `json:"args,omitempty"`
	Cols       int      `json:"cols,omitempty"`
	Rows       int      `json:"rows,omitempty"`
	Screen     *Reading `json:"screen,omitempty"` // the screen classifier's reading (both readings shown for explain)
	Hook       *Reading `json:"hook,omitempty"`   // the live hook report, if any
	// StateSinceMs is when the member entered its current state (unix ms): time in state for
	// `herd top` and the dashboard.
	StateSinceMs int64 `json:"stateSinceMs,omitempty"`
	// Queued is how many prompts wait in the member's queue (typed when it next reads idle/done).
	Queued int `json:"queued,omitempty"`
	// Question is what a blocked member asks (text and options), when it could be read.
	Question *Question `json:"question,omitempty"`
	// Remote members only (kind remote): how the member is reached, where it lives, and when the
	// remote last answered (its state is its own claim, as fresh as ObservedMs).
	Remote *RemoteInfo `json:"remote,omitempty"`
}

// ListResult is the result of list.
type ListResult struct {
	Members []Member `json:"members"`
}

// PromptOptions tune Prompt.
type PromptOptions struct {
	// Answer says the caller is answering a blocked member on purpose; without it a blocked member
	// is refused (a prompt typed into a permission dialog picks an option by accident).
	Answer bool `json:"answer,omitempty"`
	// Wait waits, after the prompt is sent, for the member to reach one of States (default
	// blocked,done,idle after a change was seen); the result then carries Outcome and State.
	Wait    bool          `json:"wait,omitempty"`
	States  []string      `json:"states,omitempty"`
	Timeout time.Duration `json:"-"`
	// Token for a remote member; empty: the caller's MOSH_REMOTE_<NAME>_TOKEN, if set.
	Token string `json:"-"`
	// Now types at once even into a working member (whose running task then ends canceled,
	// superseded), instead of queueing behind it. A blocked member is still refused without
	// Answer.
	Now bool `json:"now,omitempty"`
	// Continue queues the text into that open task, running or still queued (an A2A follow-up
	// message carrying the task's id), as its next turn instead of minting a new task: typed when
	// the member is next at rest after the task's turn, recorded on the task as a "continued: …"
	// transition.
	Continue string `json:"continue,omitempty"`
	// By says who answers, with Answer: recorded on the open task ("" = the client's AnswerBy).
	By string `json:"by,omitempty"`
}

// AnswerParams answers a blocked member (MethodAnswer).
type AnswerParams struct {
	Name   string `json:"name"`
	Answer string `json:"answer"`
	// By says who answers ("alice (cli)"), recorded on the member's open task; "" = "unknown".
	By string `json:"by,omitempty"`
}

// AnswerResult says what the answer became: the keys pressed (a menu option's number, a
// permission's key) or the text typed, the option chosen, and the task it joined.
type AnswerResult struct {
	Name  string    `json:"name"`
	Task  string    `json:"task,omitempty"`
	Kind  string    `json:"kind,omitempty"` // the question's kind
	Keys  []string  `json:"keys,omitempty"`
	Text  string    `json:"text,omitempty"`
	Label string    `json:"label,omitempty"` // the option chosen, or the text
	Asked *Question `json:"question,omitempty"`
}

// PromptParams is the wire form of Prompt.
type PromptParams struct {
	Name      string   `json:"name"`
	Text      string   `json:"text"`
	Answer    bool     `json:"answer,omitempty"`
	Wait      bool     `json:"wait,omitempty"`
	States    []string `json:"states,omitempty"`
	TimeoutMs int64    `json:"timeoutMs,omitempty"` // 0 = no deadline
	Now       bool     `json:"now,omitempty"`
	Continue  string   `json:"continue,omitempty"`
	// By says who answers, with Answer (AnswerParams.By).
	By string `json:"by,omitempty"`
	// Token is the caller's MOSH_REMOTE_<NAME>_TOKEN for a remote member (kept in the daemon's
	// memory only, never written anywhere); ignored for local members.
	Token string `json:"token,omitempty"`
}

// PromptResult is the result of prompt.
type PromptResult struct {
	Name    string `json:"name"`
	Sent    bool   `json:"sent"`
	Task    string `json:"task,omitempty"`    // ledger task id (t-N) once the ledger is wired
	Outcome string `json:"outcome,omitempty"` // with wait: matched | ended | gone | timeout
	State   string `json:"state,omitempty"`   // with wait: the state that ended the wait
	// Queued: the member was busy, the prompt waits in its queue (the task reads submitted) and
	// is typed when the member next reads idle or done. Position is 1 for the next to be typed;
	// Behind is the task it waits for (the one ahead in the queue, or the running one).
	Queued   bool   `json:"queued,omitempty"`
	Position int    `json:"position,omitempty"`
	Behind   string `json:"behind,omitempty"`
	// ExitCode: with wait, the member's process exited (outcome ended) with this code.
	ExitCode *int `json:"exitCode,omitempty"`
	// ExitReason: with wait, the last lines the exited process left on its screen.
	ExitReason string `json:"exitReason,omitempty"`
	// TaskState: with wait, how the prompt's task ended when it ended other than done or idle
	// (failed, canceled, interrupted, gone).
	TaskState string `json:"taskState,omitempty"`
}

// ReadParams / ReadResult: the last Lines lines of text history + visible screen.
type ReadParams struct {
	Name  string `json:"name"`
	Lines int    `json:"lines,omitempty"` // default 60
	// Grid asks for the visible screen with its looks too (ReadResult.Grid): the dashboard draws it.
	Grid bool `json:"grid,omitempty"`
}

type ReadResult struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"`
	Authority string `json:"authority,omitempty"`
	Screen    string `json:"screen"` // text, lines joined by "\n", trailing blanks trimmed
	AltScreen bool   `json:"altScreen,omitempty"`
	Title     string `json:"title,omitempty"`
	// Grid is the visible screen as styled runs and the cursor, with ReadParams.Grid, for a
	// member with a terminal (a remote member has none: nil).
	Grid *snapshot.Grid `json:"grid,omitempty"`
}

// SendKeysParams: keys are tmux-style names (Enter, Escape, C-c, Up, Tab, BSpace, Space…) or literal text.
type SendKeysParams struct {
	Name string   `json:"name"`
	Keys []string `json:"keys"`
	// Now types at once: no wait for a blocked member's question to appear on screen.
	Now bool `json:"now,omitempty"`
}

type SendKeysResult struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"` // bytes written to the terminal
}

// WaitOptions tune Wait. Several names without Any mean All.
type WaitOptions struct {
	States  []string      `json:"states,omitempty"` // none: the open task's end, or blocked (DefaultWaitStates)
	Any     bool          `json:"any,omitempty"`
	All     bool          `json:"all,omitempty"`
	Timeout time.Duration `json:"-"` // 0 = no deadline
}

type WaitParams struct {
	Names     []string `json:"names"`
	States    []string `json:"states,omitempty"`
	Any       bool     `json:"any,omitempty"`
	All       bool     `json:"all,omitempty"`
	TimeoutMs int64    `json:"timeoutMs,omitempty"`
}

// Wait outcomes.
const (
	OutcomeMatched = "matched"
	OutcomeEnded   = "ended"   // the member ended (process exited / done) without reaching a wanted state
	OutcomeGone    = "gone"    // no such member, or it vanished (killed, daemon restarted)
	OutcomeTimeout = "timeout" // the deadline passed
	OutcomePending = "pending" // --any: another member won first; this one keeps running
)

// WaitOutcome is one name's result.
type WaitOutcome struct {
	Name      string `json:"name"`
	Outcome   string `json:"outcome"`
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"`
	Authority string `json:"authority,omitempty"`
	Seq       uint64 `json:"seq,omitempty"` // the event that decided it (0: decided from the current state)
	// TasksEnded lists the ledger tasks of this member the wait saw end (closed by an event it
	// received; when decided from the current state, the member's last closed task if none is open).
	TasksEnded []string `json:"tasksEnded,omitempty"`
	// ExitCode is set when the member's process exited (outcome ended, state gone).
	ExitCode *int `json:"exitCode,omitempty"`
	// ExitReason: the last lines the exited process left on its screen (see Member.ExitReason).
	ExitReason string `json:"exitReason,omitempty"`
}

// WaitResult is returned with or without an error: Wait returns the result AND an exit-coded error
// when the outcome is not matched (timeout → 2, ended/gone → 3).
type WaitResult struct {
	Mode    string        `json:"mode"`    // one | any | all
	Outcome string        `json:"outcome"` // matched | ended | gone | timeout
	Winner  string        `json:"winner,omitempty"`
	Results []WaitOutcome `json:"results"`
	// TasksEnded is every task the wait saw end, over all names, in the order they ended.
	TasksEnded []string `json:"tasksEnded"`
}

type KillParams struct {
	Names []string `json:"names,omitempty"`
	All   bool     `json:"all,omitempty"`
}

type KillResult struct {
	Killed  []string `json:"killed"`
	Missing []string `json:"missing,omitempty"`
	// Canceled lists remote members whose open task was canceled: kill never deregisters a remote
	// member (`mosh herd remote remove` does).
	Canceled []string `json:"canceled,omitempty"`
}

type PruneResult struct {
	Pruned []string `json:"pruned"`
}

// RestoreOptions tune Restore. The environment is the restoring command's (the manifest never
// stores environment values).
type RestoreOptions struct {
	Resume bool `json:"resume,omitempty"`
	DryRun bool `json:"dryRun,omitempty"`
}

type RestoreParams struct {
	Resume bool     `json:"resume,omitempty"`
	DryRun bool     `json:"dryRun,omitempty"`
	Env    []string `json:"env"`
}

// RestoreAction is what restore did (or would do, with DryRun) for one manifest member.
type RestoreAction struct {
	Name   string   `json:"name"`
	Action string   `json:"action"` // restart | skip
	Reason string   `json:"reason,omitempty"`
	Bin    string   `json:"bin,omitempty"`
	Args   []string `json:"args,omitempty"`
	Cwd    string   `json:"cwd,omitempty"`
	Pid    int      `json:"pid,omitempty"`
}

type RestoreResult struct {
	DryRun  bool            `json:"dryRun"`
	Actions []RestoreAction `json:"actions"`
}

// ReportParams is a hook report: the engine (through `mosh herd report`) says what state it is in.
type ReportParams struct {
	Name    string          `json:"name"`
	State   string          `json:"state"`
	Kind    string          `json:"kind,omitempty"`
	TTLMs   int64           `json:"ttlMs,omitempty"` // default and cap 15 min (MaxReportTTL)
	Payload json.RawMessage `json:"payload,omitempty"`
	// Nonce is the MOSH_HERD_NONCE of the reporting process's environment (Client.Report adds it
	// when the report is for the member the process runs in): a report from another launch of
	// the same name is ignored.
	Nonce string `json:"nonce,omitempty"`
}

// EnvNonce is the per-launch nonce in a local member's environment (beside MOSH_HERD_NAME).
const EnvNonce = "MOSH_HERD_NONCE"

// EnvBin is the absolute path of the mosh binary the daemon runs as, in every local member's
// environment: the hook commands run "${MOSH_HERD_BIN:-mosh}", so they report with no mosh on
// PATH.
const EnvBin = "MOSH_HERD_BIN"

type ReportResult struct {
	Name      string `json:"name"`
	Accepted  bool   `json:"accepted"`
	State     string `json:"state"` // the fused state after the report
	ExpiresMs int64  `json:"expiresMs,omitempty"`
	// Ignored says why a report was not applied (a nested engine's, another launch's).
	Ignored string `json:"ignored,omitempty"`
}

// IgnoredReport is a hook report the daemon did not apply to a member, kept for explain.
type IgnoredReport struct {
	AtMs  int64  `json:"atMs"`
	Event string `json:"event,omitempty"` // the payload's hook_event_name
	State string `json:"state,omitempty"`
	Pid   int    `json:"pid,omitempty"` // the reporting process
	Why   string `json:"why"`
}

// StatusResult is `herd status`.
type StatusResult struct {
	Substrate string `json:"substrate"`
	Socket    string `json:"socket"`
	Dir       string `json:"dir"`
	Members   int    `json:"members"`
	Live      int    `json:"live"`
	Blocked   int    `json:"blocked"`
	DaemonPid int    `json:"daemonPid"`
	UptimeMs  int64  `json:"uptimeMs"`
}

// DaemonStatusResult is `herd daemon status`. Running is false (and the rest empty) when no daemon
// answers; that is not an error.
type DaemonStatusResult struct {
	Running  bool   `json:"running"`
	Pid      int    `json:"pid,omitempty"`
	Socket   string `json:"socket"`
	Dir      string `json:"dir"`
	UptimeMs int64  `json:"uptimeMs,omitempty"`
	Members  int    `json:"members"`
	Live     int    `json:"live"`
	Clients  int    `json:"clients"`
	Version  string `json:"version,omitempty"`
	Seq      uint64 `json:"seq"` // last event sequence number
}

type DaemonStopParams struct {
	Yes bool `json:"yes,omitempty"`
}

type DaemonStopResult struct {
	Stopped  bool     `json:"stopped"`
	Killed   []string `json:"killed,omitempty"`
	Pid      int      `json:"pid,omitempty"`      // the daemon's process: the client waits until it is gone
	Signaled bool     `json:"signaled,omitempty"` // it did not answer on its socket and was sent SIGTERM
}

// DoctorCheck is one doctor line.
type DoctorCheck struct {
	Name   string `json:"name"`
	Level  string `json:"level"` // ok | warn | fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

type DoctorResult struct {
	OK     bool          `json:"ok"`    // no check failed
	Level  string        `json:"level"` // worst level
	Dir    string        `json:"herdDir"`
	Checks []DoctorCheck `json:"checks"`
}

// ExplainResult says which rule or report decided a member's state and what the screen says.
type ExplainResult struct {
	Name      string `json:"name"`
	Engine    string `json:"engine"`
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"`
	Authority string `json:"authority"`
	Decided   string `json:"decided"` // one human sentence: why this state
	// ReasonCode is Decided as a stable enum (screen.rule, hook.report, prompt.claim, tty.reading,
	// runtime.exit, remote.claim…; docs/protocol.md "explain"); RuleSource is where the deciding screen
	// rule came from (embedded, engines.json, rules.json), "" when no screen rule decided.
	ReasonCode string   `json:"reasonCode"`
	RuleSource string   `json:"ruleSource,omitempty"`
	Runtime    *Reading `json:"runtime,omitempty"`
	Remote     *Reading `json:"remote,omitempty"` // a remote member: the remote's last claim (or unknown)
	Hook       *Reading `json:"hook,omitempty"`
	Screen     *Reading `json:"screen,omitempty"`
	Evidence   []string `json:"evidence,omitempty"` // screen lines the deciding rule matched
	Bottom     []string `json:"bottom,omitempty"`   // the bottom non-empty screen lines classified
	Title      string   `json:"title,omitempty"`
	// Detail is herd/state's own explain record, passed through as is.
	Detail json.RawMessage `json:"detail,omitempty"`
	// IgnoredReports are the last hook reports not applied (nested engines, other launches).
	IgnoredReports []IgnoredReport `json:"ignoredReports,omitempty"`
}

// Event is one state change pushed to subscribers. Seq increases by one per event per daemon.
type Event struct {
	Seq       uint64 `json:"seq"`
	Type      string `json:"type"` // state | added | removed
	Name      string `json:"name"`
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"`
	Authority string `json:"authority,omitempty"`
	Prev      string `json:"prev,omitempty"`
	ExitCode  *int   `json:"exitCode,omitempty"`
	// ExitReason: with a gone event, the last lines the process left on its screen.
	ExitReason string `json:"exitReason,omitempty"`
	AtMs       int64  `json:"atMs"`
	// Task is the ledger task this state change was recorded against (the member's open task);
	// TaskEnded says the change closed it (done, idle after working, the process exiting).
	Task string `json:"task,omitempty"`
	// TaskState is how the task ended, on remote members' ends: done, failed or canceled. A wait
	// on a member whose task failed ends (outcome ended) instead of waiting on.
	TaskState string `json:"taskState,omitempty"`
	TaskEnded bool   `json:"taskEnded,omitempty"`
	// TaskPending: the member reads done or idle, but its task waits for the engine's done hook
	// (at most the engine's hook grace); its end comes as an event of its own. A wait for done
	// or idle is not answered by this event.
	TaskPending bool `json:"taskPending,omitempty"`
	// Question is what the member asks, on a state event into blocked and on a question event
	// (nil when nothing could be read).
	Question *Question `json:"question,omitempty"`
}

// Event types.
const (
	EventState   = "state"
	EventAdded   = "added"
	EventRemoved = "removed"
	// EventQuestion: a blocked member's question changed without a state change (the hook's
	// blocked came first and the screen has now drawn the menu's options). Question carries it.
	EventQuestion = "question"
	// EventScreen: a member's screen settled (a frame ended: output went quiet, or a synchronized
	// frame closed), whether or not its state changed. Only subscriptions that ask for it
	// (SubscribeParams.Screens) get it, and it carries no sequence number: the dashboard re-reads
	// a member's grid on it instead of polling.
	EventScreen = "screen"
)

type SubscribeParams struct {
	// ID is chosen by the client and echoed in every notification, so the client can route events
	// that arrive before the subscribe response has been read.
	ID    string   `json:"id"`
	Names []string `json:"names,omitempty"` // empty = every member
	// Screens also delivers EventScreen events (without a sequence number).
	Screens bool `json:"screens,omitempty"`
}

// EventNotification is the params object of an "event" notification.
type EventNotification struct {
	Subscription string `json:"subscription"`
	Event        Event  `json:"event"`
}

type SubscribeResult struct {
	Subscription string `json:"subscription"`
	Seq          uint64 `json:"seq"` // last event number before the subscription started
}

// AttachParams: after a successful attach result the connection carries frames (docs/protocol.md).
type AttachParams struct {
	Name string `json:"name"`
	Cols int    `json:"cols,omitempty"`
	Rows int    `json:"rows,omitempty"`
}

type AttachResult struct {
	Name string `json:"name"`
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
}

type NameParams struct {
	Name string `json:"name"`
}

// RPCError is the error object on the wire. Code is -32000-exitCode for herd errors (e.g. -32003
// for gone) and the JSON-RPC codes for protocol errors; Data.exitCode is always set.
type RPCError struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Data    *RPCErrorData `json:"data,omitempty"`
}

type RPCErrorData struct {
	ExitCode int `json:"exitCode"`
}

// JSON-RPC protocol error codes.
const (
	CodeParse          = -32700
	codeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	codeInvalidParams  = -32602
	CodeHerdBase       = -32000 // herd errors: CodeHerdBase - exit code
)

func (e *RPCError) toError() error {
	code := exitcode.Infra
	if e.Data != nil {
		code = exitcode.Code(e.Data.ExitCode)
	}
	return &exitcode.Error{Code: code, Err: fmt.Errorf("%s", e.Message)}
}

// ---- ledger reads (tasks, task, log, stats) ----

// TasksFilter selects tasks for Tasks. Zero fields do not filter.
type TasksFilter struct {
	Member string    // one member's tasks
	State  string    // last recorded state: working, blocked, done, idle, unknown, gone, submitted, or "open"
	Since  time.Time // submitted at or after
	Limit  int       // the newest N (0 = 100, <0 = every task kept)
}

// TasksParams is the wire form of TasksFilter.
type TasksParams struct {
	Member  string `json:"member,omitempty"`
	State   string `json:"state,omitempty"`
	SinceMs int64  `json:"sinceMs,omitempty"` // unix ms; 0 = no lower bound
	Limit   int    `json:"limit,omitempty"`
}

// TaskTransition is one observed state change of a member, as recorded in the ledger.
type TaskTransition struct {
	AtMs      int64  `json:"atMs"`
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn,omitempty"` // blocked sub-kind
	Authority string `json:"authority,omitempty"` // runtime | hook | screen | remote
	Note      string `json:"note,omitempty"`
	Task      string `json:"task,omitempty"` // the task open at the time (log only)
}

// TaskArtifact is what a task came back with: the tail 8000 characters (ledger.ArtifactMaxChars).
type TaskArtifact struct {
	Text      string `json:"text"`
	Source    string `json:"source"`    // hook (the engine's own final message) | screen (text since the prompt) | error (why there is none)
	Truncated bool   `json:"truncated"` // the text is the tail of a longer answer
	Chars     int    `json:"chars"`     // the original length in characters
}

// Task is one prompt and what became of it. Transitions and Artifact are set by Task only.
type Task struct {
	ID            string `json:"id"` // t-N, herd-wide
	Member        string `json:"member"`
	Text          string `json:"text"`
	SubmittedMs   int64  `json:"submittedMs"`
	StateAtSubmit string `json:"stateAtSubmit,omitempty"` // the member's state when the prompt was typed
	// State is the last recorded state: the member's current one while open, the terminal one once
	// closed. "submitted" until the first transition.
	State           string `json:"state"`
	BlockedOn       string `json:"blockedOn,omitempty"`
	Open            bool   `json:"open"`
	EndedMs         int64  `json:"endedMs,omitempty"`
	DurationMs      int64  `json:"durationMs"` // to EndedMs, or to now while open
	Note            string `json:"note,omitempty"`
	RemoteTaskID    string `json:"remoteTaskId,omitempty"`
	RemoteContextID string `json:"remoteContextId,omitempty"`
	// Queued: the task waits in its member's queue (state submitted), not typed yet.
	Queued bool `json:"queued,omitempty"`
	// Autonomous: the member was autonomous when the task was minted (or had no manifest row);
	// kept with the task, so it outlives the member (kill, prune) and restarts.
	Autonomous  bool             `json:"autonomous,omitempty"`
	Transitions []TaskTransition `json:"transitions,omitempty"`
	Artifact    *TaskArtifact    `json:"artifact,omitempty"`
}

// CancelTaskParams names a task to cancel (MethodCancelTask).
type CancelTaskParams struct {
	ID      string `json:"id"`
	GraceMs int64  `json:"graceMs,omitempty"` // as InterruptParams.GraceMs
}

// CancelTaskResult: a queued task was removed untyped (Queued), or the running task of Member
// was closed canceled (Running) and the daemon interrupted its turn (Interrupt says how).
type CancelTaskResult struct {
	ID        string           `json:"id"`
	Member    string           `json:"member"`
	Queued    bool             `json:"queued,omitempty"`
	Running   bool             `json:"running,omitempty"`
	Interrupt *InterruptResult `json:"interrupt,omitempty"`
}

// InterruptParams names the member whose turn to interrupt (MethodInterrupt). GraceMs, when
// positive, replaces the engines table's grace between the first keys and the second.
type InterruptParams struct {
	Name    string `json:"name"`
	GraceMs int64  `json:"graceMs,omitempty"`
}

// InterruptResult says what the daemon did to stop a member's turn.
type InterruptResult struct {
	Name string `json:"name"`
	// Task is the task whose turn was interrupted ("" when the member had none open), closed
	// with TaskState (interrupted; canceled for task.cancel).
	Task      string `json:"task,omitempty"`
	TaskState string `json:"taskState,omitempty"`
	// Keys were sent first; Then were sent after the grace because the member still read busy.
	Keys []string `json:"keys,omitempty"`
	Then []string `json:"then,omitempty"`
	// Remote: a remote member has no keys; its open task was canceled at the remote instead.
	Remote bool `json:"remote,omitempty"`
	// State is the member's state when the daemon answered.
	State string `json:"state"`
}

// TasksResult is the result of tasks: oldest first, the newest Limit of the selection.
type TasksResult struct {
	Tasks []Task `json:"tasks"`
}

// Notes the daemon writes on task transitions, which adapters read (the A2A server turns them
// into its history): wire text, defined once here.
const (
	// NoteAnswered prefixes the transition recorded when a prompt answers a blocked member's open
	// task (the answer's text follows, clipped to 200 runes): the answer joins the task that asked.
	NoteAnswered = "answered: "
	// NoteContinued prefixes the transition recorded when a follow-up is queued into a running
	// task (prompt continue; the text follows, clipped to 200 runes).
	NoteContinued = "continued: "
	// NoteExited prefixes the transition recorded when a member's process exits (the exit code
	// follows): a task that ends that way did not finish, its member stopped.
	NoteExited = "the process exited"
)

// CheckTaskID says whether id has the form of a task id (t-N, as the ledger mints them): nil, or
// an exit-1 error that shows the form. Adapters check ids with it before asking the daemon.
func CheckTaskID(id string) error {
	_, err := vocab.ParseTaskID(id)
	return err
}

// TaskParams names one task.
type TaskParams struct {
	ID string `json:"id"`
}

// LogParams / LogResult: a member's timestamped state history, tasks or not.
type LogParams struct {
	Name    string `json:"name"`
	SinceMs int64  `json:"sinceMs,omitempty"`
}

type LogResult struct {
	Name        string           `json:"name"`
	Transitions []TaskTransition `json:"transitions"`
}

// StatsParams: Name empty = every member the ledger knows.
type StatsParams struct {
	Name    string `json:"name,omitempty"`
	SinceMs int64  `json:"sinceMs,omitempty"`
}

// MemberStats summarises one member's (or the whole herd's) history in a window.
type MemberStats struct {
	Name   string `json:"name,omitempty"` // empty in StatsResult.Total
	FromMs int64  `json:"fromMs"`
	ToMs   int64  `json:"toMs"`
	// TotalsMs is the time spent in each state (from each transition to the next, the last
	// running until now).
	TotalsMs map[string]int64 `json:"totalsMs"`
	// HumanLatencyMs is the time spent blocked: waiting on a person, not on the model (`herd stats`
	// shows it as "waiting on you").
	HumanLatencyMs   int64 `json:"humanLatencyMs"`
	BlockedSpells    int   `json:"blockedSpells"`
	Tasks            int   `json:"tasks"`            // submitted in the window
	ClosedTasks      int   `json:"closedTasks"`      // of which closed
	MedianDurationMs int64 `json:"medianDurationMs"` // over the closed ones
}

// StatsResult is the result of stats: one entry per member (one for a named member), and with no
// name the herd-wide Total (times summed, median over every closed task).
type StatsResult struct {
	SinceMs int64         `json:"sinceMs,omitempty"`
	Members []MemberStats `json:"members"`
	Total   *MemberStats  `json:"total,omitempty"`
}
