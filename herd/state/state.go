package state

import (
	"fmt"
	"strings"
)

// State is what a member is doing, as the herd reports it.
type State string

// The states. Gone is not a reading: it is the absence of a member.
const (
	Working State = "working"
	Blocked State = "blocked"
	Done    State = "done"
	Idle    State = "idle"
	Unknown State = "unknown"
	Gone    State = "gone"
)

// Kind says what a blocked member waits for. Empty unless State is Blocked.
type Kind string

// The blocked sub-kinds.
const (
	NoKind     Kind = ""
	Permission Kind = "permission"
	Question   Kind = "question"
	Menu       Kind = "menu"
)

// Authority says which source decided a state.
type Authority string

// The authorities, strongest first: the process exit is final; a live hook
// report beats the screen; remote is a claim relayed from another herd.
const (
	Runtime     Authority = "runtime"
	Hook        Authority = "hook"
	ScreenAuth  Authority = "screen"
	Remote      Authority = "remote"
	NoAuthority Authority = ""
)

// States lists the reportable states in display order.
var States = []State{Working, Blocked, Done, Idle, Unknown}

// Kinds lists the blocked sub-kinds.
var Kinds = []Kind{Permission, Question, Menu}

// Valid reports whether s is one of States.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// Valid reports whether k is a known sub-kind (the empty kind included).
func (k Kind) Valid() bool {
	if k == NoKind {
		return true
	}
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// ParseState parses "state" or "blocked:kind" as the CLI and rules.json write
// it. A kind is accepted only on blocked.
func ParseState(s string) (State, Kind, error) {
	name, kind, hasKind := strings.Cut(strings.TrimSpace(s), ":")
	st := State(strings.ToLower(name))
	if !st.Valid() {
		return "", "", fmt.Errorf("unknown state %q: use one of working, blocked[:permission|question|menu], done, idle, unknown", s)
	}
	if !hasKind {
		return st, NoKind, nil
	}
	k := Kind(strings.ToLower(kind))
	if st != Blocked {
		return "", "", fmt.Errorf("state %q cannot carry a sub-kind: only blocked takes one (blocked:permission, blocked:question, blocked:menu)", s)
	}
	if k == NoKind || !k.Valid() {
		return "", "", fmt.Errorf("unknown blocked sub-kind %q: use permission, question or menu", kind)
	}
	return st, k, nil
}

// Format renders a state with its kind ("blocked:permission", "idle").
func Format(s State, k Kind) string {
	if s == Blocked && k != NoKind {
		return string(s) + ":" + string(k)
	}
	return string(s)
}
