package state

import "github.com/mosh-dev/mosh/herd/vocab"

// State is what a member is doing, as the herd reports it. The names are
// herd/vocab's, the one vocabulary every wire uses.
type State string

// The states. Gone is not a reading: it is the absence of a member.
const (
	Working State = vocab.Working
	Blocked State = vocab.Blocked
	Done    State = vocab.Done
	Idle    State = vocab.Idle
	Unknown State = vocab.Unknown
	Gone    State = vocab.Gone
)

// Kind says what a blocked member waits for. Empty unless State is Blocked.
type Kind string

// The blocked sub-kinds.
const (
	NoKind     Kind = ""
	Permission Kind = vocab.Permission
	Question   Kind = vocab.Question
	Menu       Kind = vocab.Menu
)

// Authority says which source decided a state.
type Authority string

// The authorities, strongest first: the process exit is final; a live hook
// report beats the screen; remote is a claim relayed from another herd.
const (
	Runtime     Authority = vocab.AuthorityRuntime
	Hook        Authority = vocab.AuthorityHook
	ScreenAuth  Authority = vocab.AuthorityScreen
	Remote      Authority = vocab.AuthorityRemote
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
// it (vocab.Parse: case-insensitive, the one parser). A kind is accepted only
// on blocked.
func ParseState(s string) (State, Kind, error) {
	st, k, err := vocab.Parse(s)
	return State(st), Kind(k), err
}

// Format renders a state with its kind ("blocked:permission", "idle").
func Format(s State, k Kind) string { return vocab.Format(string(s), string(k)) }
