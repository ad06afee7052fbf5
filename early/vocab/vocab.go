// Package vocab is the herd's one vocabulary: the names of member states, blocked sub-kinds,
// authorities and explain reason codes as they travel on every wire (the daemon's protocol,
// the ledger, A2A, remote members), and the one parser of "state[:kind]". The rest of the tree
// reads it through github.com/mosh-dev/mosh/herd/vocab; it lives in the early module because the
// hook fast path parses states with it (../README.md), so it imports only the early module's
// lite (not fmt, strconv or strings, whose inits run after the runtime's: see the README).
package vocab

import "0.mosh/early/lite"

// States. Gone is not a reading: it is the absence of a member (or its process).
const (
	Working = "working"
	Blocked = "blocked"
	Done    = "done"
	Idle    = "idle"
	Unknown = "unknown"
	Gone    = "gone"
)

// Task states besides the member states above: a task waiting in its member's queue (not typed
// yet), and the task end states other than the member's own (ledger.StateFailed…).
const (
	Submitted   = "submitted"
	Failed      = "failed"
	Canceled    = "canceled"
	Interrupted = "interrupted"
)

// Blocked sub-kinds (BlockedOn on the wire).
const (
	Permission = "permission"
	Question   = "question"
	Menu       = "menu"
)

// Authorities, strongest first: the process exit is final; a live hook report beats the screen;
// remote is a claim relayed from a remote agent.
const (
	AuthorityRuntime = "runtime"
	AuthorityHook    = "hook"
	AuthorityScreen  = "screen"
	AuthorityRemote  = "remote"
)

// Reason codes: what decided a member's state (`herd explain --json` reasonCode; herd/PROTOCOL.md).
const (
	ReasonScreenUnread = "screen.unread" // nothing read from the screen yet (unknown)
	ReasonScreenNone   = "screen.none"   // the screen was read and no rule matched (unknown)
	ReasonScreenRule   = "screen.rule"   // a screen rule matched (ruleSource says whose)
	ReasonTTYReading   = "tty.reading"   // no rule matched; the foreground process reads the terminal (idle)
	ReasonTTYRunning   = "tty.running"   // no rule matched; the foreground process runs (working)
	ReasonHookReport   = "hook.report"   // a live hook report decides
	ReasonPromptClaim  = "prompt.claim"  // the daemon typed a prompt and claims working
	ReasonRuntimeExit  = "runtime.exit"  // the process exited
	ReasonRemoteClaim  = "remote.claim"  // a remote member: what the remote agent last said
)

// States lists the reportable states in display order (not Gone).
func States() []string { return []string{Working, Blocked, Done, Idle, Unknown} }

// Kinds lists the blocked sub-kinds.
func Kinds() []string { return []string{Permission, Question, Menu} }

// ValidState reports whether s is a reportable state (not Gone).
func ValidState(s string) bool {
	switch s {
	case Working, Blocked, Done, Idle, Unknown:
		return true
	}
	return false
}

// ValidKind reports whether k is a blocked sub-kind ("" included).
func ValidKind(k string) bool {
	switch k {
	case "", Permission, Question, Menu:
		return true
	}
	return false
}

// Parse parses "state" or "blocked:kind" as users, scripts and rules.json write it, case-insensitive
// and returned lower-case (the wire names). Only blocked takes a kind; gone is not a state one can
// report or wait for. The error names the fix.
func Parse(s string) (state, kind string, err error) {
	name, k, hasKind := lite.Cut(lite.TrimSpace(s), ':')
	state, ascii := lite.ToLowerASCII(lite.TrimSpace(name))
	if !ascii || !ValidState(state) {
		return "", "", lite.NewError("unknown state " + lite.Quote(s) + ": use working, blocked[:permission|question|menu], done, idle or unknown")
	}
	if !hasKind {
		return state, "", nil
	}
	kind, ascii = lite.ToLowerASCII(lite.TrimSpace(k))
	if state != Blocked {
		return "", "", lite.NewError("state " + lite.Quote(s) + " takes no sub-kind: only blocked does (blocked:permission|question|menu)")
	}
	if !ascii || kind == "" || !ValidKind(kind) {
		return "", "", lite.NewError("unknown blocked kind " + lite.Quote(k) + ": use permission, question or menu")
	}
	return state, kind, nil
}

// Format renders a state with its kind ("blocked:permission", "idle").
func Format(state, kind string) string {
	if state == Blocked && kind != "" {
		return state + ":" + kind
	}
	return state
}
