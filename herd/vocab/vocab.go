// Package vocab is the herd's one vocabulary: the names of member states, blocked sub-kinds,
// authorities and explain reason codes as they travel on every wire (the daemon's protocol,
// the ledger, A2A, remote members), the one parser of "state[:kind]", and the member-name rule.
// It is a leaf (standard library only), so the ledger, a2a, herd/state and the adapters can all
// take their names from it without importing the herd.
package vocab

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// State is what a member (or a task) is doing, by its wire name.
type State string

// Member states. Gone is not a reading: it is the absence of a member (or its process).
const (
	Working State = "working"
	Blocked State = "blocked"
	Done    State = "done"
	Idle    State = "idle"
	Unknown State = "unknown"
	Gone    State = "gone"
)

// Task states besides the member states above: a task waiting in its member's queue (not typed
// yet), and the task end states other than the member's own.
const (
	Submitted   State = "submitted"
	Failed      State = "failed"
	Canceled    State = "canceled"
	Interrupted State = "interrupted"
)

// Kind is what a blocked member waits for (BlockedOn on the wire); empty unless the state is
// Blocked.
type Kind string

// Blocked sub-kinds.
const (
	NoKind     Kind = ""
	Permission Kind = "permission"
	Question   Kind = "question"
	Menu       Kind = "menu"
)

// Authority says which source decided a state.
type Authority string

// Authorities, strongest first: the process exit is final; a live hook report beats the screen;
// remote is a claim relayed from a remote agent.
const (
	NoAuthority      Authority = ""
	AuthorityRuntime Authority = "runtime"
	AuthorityHook    Authority = "hook"
	AuthorityScreen  Authority = "screen"
	AuthorityRemote  Authority = "remote"
)

// Reason codes: what decided a member's state (`herd explain --json` reasonCode; docs/protocol.md).
// They are plain strings: they share their fields with screen rule ids ("tty.reading" is both).
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
func States() []State { return []State{Working, Blocked, Done, Idle, Unknown} }

// Kinds lists the blocked sub-kinds.
func Kinds() []Kind { return []Kind{Permission, Question, Menu} }

// Valid reports whether s is a reportable state (not Gone).
func (s State) Valid() bool {
	switch s {
	case Working, Blocked, Done, Idle, Unknown:
		return true
	}
	return false
}

// IsTaskEnd reports whether s is a task end state that is not a member state (Failed, Canceled,
// Interrupted).
func (s State) IsTaskEnd() bool {
	switch s {
	case Failed, Canceled, Interrupted:
		return true
	}
	return false
}

// Valid reports whether k is a blocked sub-kind (NoKind included).
func (k Kind) Valid() bool {
	switch k {
	case NoKind, Permission, Question, Menu:
		return true
	}
	return false
}

// Parse parses "state" or "blocked:kind" as users, scripts and rules.json write it, case-insensitive
// and returned lower-case (the wire names). Only blocked takes a kind; gone is not a state one can
// report or wait for. The error names the fix.
func Parse(s string) (State, Kind, error) {
	name, k, hasKind := strings.Cut(strings.TrimSpace(s), ":")
	state := State(strings.ToLower(strings.TrimSpace(name)))
	if !state.Valid() {
		return "", "", errors.New("unknown state " + strconv.Quote(s) + ": use working, blocked[:permission|question|menu], done, idle or unknown")
	}
	if !hasKind {
		return state, NoKind, nil
	}
	if state != Blocked {
		return "", "", errors.New("state " + strconv.Quote(s) + " takes no sub-kind: only blocked does (blocked:permission|question|menu)")
	}
	kind := Kind(strings.ToLower(strings.TrimSpace(k)))
	if kind == NoKind || !kind.Valid() {
		return "", "", errors.New("unknown blocked kind " + strconv.Quote(k) + ": use permission, question or menu")
	}
	return state, kind, nil
}

// Format renders a state with its kind ("blocked:permission", "idle").
func Format(state State, kind Kind) string {
	if state == Blocked && kind != NoKind {
		return string(state) + ":" + string(kind)
	}
	return string(state)
}

// NamePattern is the member-name rule: 1-32 characters, a lowercase letter first, then a-z, 0-9,
// '-' or '_'. Local sessions, remote members and A2A member ids all follow it.
const NamePattern = `^[a-z][a-z0-9_-]{0,31}$`

var nameRE = regexp.MustCompile(NamePattern)

// ValidName reports whether s is a legal member name (NamePattern).
func ValidName(s string) bool { return nameRE.MatchString(s) }

// RemoteTokenVar is the environment variable that carries a remote member's bearer token:
// "api-2" → MOSH_REMOTE_API_2_TOKEN. Tokens come from the environment, never from a file.
func RemoteTokenVar(name string) string {
	return "MOSH_REMOTE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_TOKEN"
}
