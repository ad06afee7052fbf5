// Package builtins is moshscript's vocabulary: the global functions and values a script sees
// (sh, sleep, readJSON, herdTasks, …). Each verb is described once, in a Verb, and registered
// from the file that implements it:
//
//	func init() {
//		builtins.Register(&builtins.Verb{
//			Name: "herdTasks", Usage: "herdTasks(name)", Summary: "tasks of a member, oldest first",
//			Group: "herd", Async: true, Read: true, Empty: builtins.EmptyList,
//			Bind: func(c *builtins.Call) (builtins.Action, error) {
//				name, err := c.String(0, "name")  // misuse: throws TypeError "herdTasks(name): …"
//				if err != nil {
//					return builtins.Action{}, err
//				}
//				return builtins.Action{Do: func(ctx context.Context) (any, error) {
//					return client.Tasks(ctx, name) // runs off the loop; an error resolves to []
//				}}, nil
//			},
//		})
//	}
//
// The registry applies the contracts in one place, so verbs cannot drift apart:
//   - Bind runs on the loop goroutine and reads the arguments; an error it returns is misuse and
//     is thrown as a TypeError that names the verb's usage, even for read and async verbs.
//   - A Read verb never throws for a failure of the work itself: it returns Empty (null unless set).
//   - An Async verb returns a promise (runtime.Async); its Do runs on its own goroutine, must not
//     touch the VM and must honour ctx (cancelled on Ctrl-C, --timeout and the end of the run).
//     Every herd verb is Async (or a Promise verb): HerdRule, enforced by Register.
//   - A SideEffect verb under --dry-run prints "▶ name(args) → would run" on stderr and returns
//     Action.DryRun (default {ok:true, dryRun:true}) without calling Do; in a resolved promise
//     when the verb returns a promise (Async or Promise), so its type never changes.
//   - Results are converted to plain JS values (objects keep struct field order or sorted map
//     keys), and a panic in Go code becomes an error, never a crash.
package builtins

import (
	"context"
	"errors"
	"sort"
	"sync"
)

// Verb describes one global function of the vocabulary.
type Verb struct {
	Name    string // the JS name: "sh", "herdTasks"
	Usage   string // the call shape shown in errors and help: "herdTasks(name)"
	Summary string // one line for `mosh commands`
	Detail  string // shown by `mosh help NAME`
	Group   string // listing section: "base", "herd", …; default "base"

	Read       bool // failures of the work resolve to Empty instead of throwing
	Async      bool // returns a promise; Do runs on its own goroutine
	SideEffect bool // narrated and skipped under --dry-run
	// Promise: a sync verb whose Do builds and returns a promise itself (herdWait decorates its
	// rejection); under --dry-run its narrated result is resolved in a promise too, so a script
	// sees the same type either way.
	Promise bool

	// Empty is what a Read verb returns on failure: nil for null, EmptyList for [], or any value.
	Empty any

	// Params is the verb's parameter list in TypeScript, for `mosh types`
	// ("name: string, opts?: { lines?: number }"). Result is what it returns (resolves with, for
	// a promise): a Go value whose type is reflected into TypeScript (a result struct, "" for a
	// string), or a TSType. A Read verb's Empty is added to a reflected Result.
	Params string
	Result any

	// Bind reads the JS arguments (on the loop goroutine) and returns the work. Return
	// c.Misuse(...) or any other error to throw before anything runs.
	Bind func(c *Call) (Action, error)
}

// Action is a bound call, ready to run.
type Action struct {
	// Do performs the call. Sync verbs: runs on the loop goroutine (it may use Call.VM()).
	// Async verbs: runs on its own goroutine and must not touch the VM.
	Do func(ctx context.Context) (any, error)
	// DryRun is returned instead of running a SideEffect verb under --dry-run.
	// Default: {ok: true, dryRun: true}.
	DryRun any
	// Would ends the dry-run narration "▶ name(args) → Would". Default "would run".
	Would string
}

// DryRunNull as Action.DryRun makes a dry run resolve null (ask(): no reply).
var DryRunNull any = dryRunNull{}

type dryRunNull struct{}

// EmptyList is the Empty of read verbs that list things: they return [] on failure.
var EmptyList = []any{}

// Value is a global that is not a function (argv, env, flags, alive); listed for help only.
type Value struct {
	Name, Usage, Summary, Detail string
	Type                         TSType // its TypeScript type, for `mosh types`
}

// Info is one entry of List, for `mosh commands` and `mosh help`.
type Info struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"` // "function" or "value"
	Group      string `json:"group"`
	Usage      string `json:"usage"`
	Summary    string `json:"summary"`
	Detail     string `json:"detail,omitempty"`
	Async      bool   `json:"async"`
	Read       bool   `json:"read"`
	SideEffect bool   `json:"sideEffect"`
	// Signature is its TypeScript type, as `mosh types` declares it: "(name: string) =>
	// Promise<Task | null>" for a function, the type of a value.
	Signature string `json:"signature"`
}

var registry = struct {
	sync.Mutex
	verbs  []*Verb
	byName map[string]*Verb
	values []Value
}{byName: map[string]*Verb{}}

// HerdRule is the one rule of the herd vocabulary, said by `mosh commands` and `mosh help`, and
// enforced by Register: every herd* function returns a promise and never blocks the event loop
// (its socket and pty I/O runs on its own goroutine; the result is handed to JS on the loop), so
// timers, other promises and Ctrl-C keep running while the daemon answers.
const HerdRule = "every herd* function returns a promise (await it): the daemon's answer never blocks the event loop, so timers and other calls run meanwhile"

// GroupRule is the rule every function of group follows, "" when the group has none.
func GroupRule(group string) string {
	if group == "herd" {
		return HerdRule
	}
	return ""
}

// Register adds a verb. It panics on a programming mistake (no name, no Bind, a duplicate
// name, a herd verb that is not async), which surfaces at start-up in every test.
func Register(v *Verb) {
	if v.Name == "" || v.Bind == nil {
		panic("builtins.Register: a verb needs a Name and a Bind")
	}
	if v.Usage == "" {
		v.Usage = v.Name + "()"
	}
	if v.Group == "" {
		v.Group = "base"
	}
	if v.Group == "herd" && !v.Async && !v.Promise {
		panic("builtins.Register: " + v.Name + " is a herd verb: " + HerdRule)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[v.Name]; dup {
		panic("builtins.Register: duplicate verb " + v.Name)
	}
	for _, val := range registry.values {
		if val.Name == v.Name {
			panic("builtins.Register: " + v.Name + " is already a value")
		}
	}
	registry.byName[v.Name] = v
	registry.verbs = append(registry.verbs, v)
}

// registerValue lists a non-function global; Install defines it.
func registerValue(v Value) {
	registry.Lock()
	defer registry.Unlock()
	registry.values = append(registry.values, v)
}

// Lookup returns the registered verb called name, or nil.
func Lookup(name string) *Verb {
	registry.Lock()
	defer registry.Unlock()
	return registry.byName[name]
}

// List describes every global: values first, then functions, each group in registration order,
// groups sorted with "base" first.
func List() []Info {
	registry.Lock()
	defer registry.Unlock()
	out := make([]Info, 0, len(registry.values)+len(registry.verbs))
	g := newTSGen()
	for _, v := range registry.values {
		out = append(out, Info{Name: v.Name, Kind: "value", Group: "base", Usage: v.Usage, Summary: v.Summary, Detail: v.Detail, Signature: valueType(v)})
	}
	verbs := append([]*Verb(nil), registry.verbs...)
	sort.SliceStable(verbs, func(i, j int) bool { return groupRank(verbs[i].Group) < groupRank(verbs[j].Group) })
	for _, v := range verbs {
		params, result := verbSignature(g, v)
		out = append(out, Info{Name: v.Name, Kind: "function", Group: v.Group, Usage: v.Usage, Summary: v.Summary, Detail: v.Detail,
			Async: v.Async || v.Promise, Read: v.Read, SideEffect: v.SideEffect, Signature: "(" + params + ") => " + result})
	}
	return out
}

func groupRank(g string) string {
	if g == "base" {
		return ""
	}
	return g
}

// misuseError is an error returned by Bind for a call that does not fit the usage.
type misuseError struct{ msg string }

func (e *misuseError) Error() string { return e.msg }

// IsMisuse reports whether err came from Call.Misuse.
func IsMisuse(err error) bool {
	var m *misuseError
	return errors.As(err, &m)
}

// verbFailure is a verb's failure, named by the verb: "herdRead: the daemon is not running".
// It keeps the cause in the chain (exit codes, context causes).
type verbFailure struct {
	verb string
	err  error
}

func (e *verbFailure) Error() string { return e.verb + ": " + e.err.Error() }
func (e *verbFailure) Unwrap() error { return e.err }

// wrapVerbError names v in err unless err already names it: a misuse (its usage starts with the
// verb's name) or a failure this verb already wrapped. Decided by type, never by the message
// text, so a cause that happens to start with the verb's name ("sh: 1: x: not found") is still
// named.
func wrapVerbError(v *Verb, err error) error {
	var m *misuseError
	if errors.As(err, &m) {
		return err
	}
	var vf *verbFailure
	if errors.As(err, &vf) && vf.verb == v.Name {
		return err
	}
	return &verbFailure{verb: v.Name, err: err}
}
