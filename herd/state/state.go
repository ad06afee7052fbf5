package state

import "github.com/mosh-dev/mosh/herd/vocab"

// State, Kind and Authority are herd/vocab's: one type per concept, whichever package names it.
type (
	State     = vocab.State
	Kind      = vocab.Kind
	Authority = vocab.Authority
)

// The states, sub-kinds and authorities under the names this package has always used (vocab's
// constants, not a second spelling). Gone is not a reading: it is the absence of a member.
const (
	Working = vocab.Working
	Blocked = vocab.Blocked
	Done    = vocab.Done
	Idle    = vocab.Idle
	Unknown = vocab.Unknown
	Gone    = vocab.Gone

	NoKind     = vocab.NoKind
	Permission = vocab.Permission
	Question   = vocab.Question
	Menu       = vocab.Menu

	Runtime     = vocab.AuthorityRuntime
	Hook        = vocab.AuthorityHook
	ScreenAuth  = vocab.AuthorityScreen
	Remote      = vocab.AuthorityRemote
	NoAuthority = vocab.NoAuthority
)

// States lists the reportable states in display order.
var States = vocab.States()

// Kinds lists the blocked sub-kinds.
var Kinds = vocab.Kinds()

// ParseState parses "state" or "blocked:kind" as the CLI and rules.json write it (vocab.Parse,
// the one parser: case-insensitive; a kind only on blocked).
func ParseState(s string) (State, Kind, error) { return vocab.Parse(s) }

// Format renders a state with its kind ("blocked:permission", "idle").
func Format(s State, k Kind) string { return vocab.Format(s, k) }
