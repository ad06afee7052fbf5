// Package vocab is the herd's one vocabulary: the names of member states, blocked sub-kinds,
// authorities and explain reason codes as they travel on every wire (the daemon's protocol,
// the ledger, A2A, remote members), and the one parser of "state[:kind]". The ledger, a2a,
// herd/state and the adapters all define their names from it.
//
// The definitions live in 0.mosh/early/vocab (early/vocab in this repository), which the hook
// fast path imports: that module sorts first in Go's package initialisation order (early/README.md).
// This package is the name the rest of the tree uses; it adds nothing.
package vocab

import v "0.mosh/early/vocab"

// States. Gone is not a reading: it is the absence of a member (or its process).
const (
	Working = v.Working
	Blocked = v.Blocked
	Done    = v.Done
	Idle    = v.Idle
	Unknown = v.Unknown
	Gone    = v.Gone
)

// Task states besides the member states above (vocab in early/vocab).
const (
	Submitted   = v.Submitted
	Failed      = v.Failed
	Canceled    = v.Canceled
	Interrupted = v.Interrupted
)

// Blocked sub-kinds (BlockedOn on the wire).
const (
	Permission = v.Permission
	Question   = v.Question
	Menu       = v.Menu
)

// Authorities, strongest first (early/vocab).
const (
	AuthorityRuntime = v.AuthorityRuntime
	AuthorityHook    = v.AuthorityHook
	AuthorityScreen  = v.AuthorityScreen
	AuthorityRemote  = v.AuthorityRemote
)

// Reason codes: what decided a member's state (`herd explain --json` reasonCode; docs/protocol.md).
const (
	ReasonScreenUnread = v.ReasonScreenUnread
	ReasonScreenNone   = v.ReasonScreenNone
	ReasonScreenRule   = v.ReasonScreenRule
	ReasonTTYReading   = v.ReasonTTYReading
	ReasonTTYRunning   = v.ReasonTTYRunning
	ReasonHookReport   = v.ReasonHookReport
	ReasonPromptClaim  = v.ReasonPromptClaim
	ReasonRuntimeExit  = v.ReasonRuntimeExit
	ReasonRemoteClaim  = v.ReasonRemoteClaim
)

// States lists the reportable states in display order (not Gone).
func States() []string { return v.States() }

// Kinds lists the blocked sub-kinds.
func Kinds() []string { return v.Kinds() }

// ValidState reports whether s is a reportable state (not Gone).
func ValidState(s string) bool { return v.ValidState(s) }

// ValidKind reports whether k is a blocked sub-kind ("" included).
func ValidKind(k string) bool { return v.ValidKind(k) }

// Parse parses "state" or "blocked:kind" as users, scripts and rules.json write it, case-insensitive
// and returned lower-case (the wire names). Only blocked takes a kind; gone is not a state one can
// report or wait for. The error names the fix.
func Parse(s string) (state, kind string, err error) { return v.Parse(s) }

// Format renders a state with its kind ("blocked:permission", "idle").
func Format(state, kind string) string { return v.Format(state, kind) }
