package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd/screen"
)

// MaxHookTTL caps how long a hook report stays authoritative.
const MaxHookTTL = 15 * time.Minute

// DefaultGrace is how long a hook's working or blocked state is protected
// from a screen that has not yet shown it (the engine may not have painted
// the spinner or dialog yet). See the package comment.
const DefaultGrace = 1500 * time.Millisecond

// ErrIgnored marks a report that was well-formed but deliberately not used
// (Claude's idle_prompt Notification claiming blocked). A hook's report
// command should still exit 0.
var ErrIgnored = errors.New("report ignored")

// HookReport is a state reported by an engine's hook (`herd report`).
type HookReport struct {
	// State may be empty when Payload carries hook_event_name: the engine's
	// HookSpec then maps the event to a state.
	State State
	Kind  Kind
	// TTL bounds the report's authority; 0 or more than 15 minutes means 15
	// minutes.
	TTL time.Duration
	// At is when the hook ran (zero = now).
	At time.Time
	// Payload is the hook's own JSON (Claude/Codex stdin), kept for explain
	// and so the ledger can take Stop.last_assistant_message.
	Payload json.RawMessage
}

// HookReading is the hook side of a Fused state.
type HookReading struct {
	State   State     `json:"state"`
	Kind    Kind      `json:"kind,omitempty"`
	Event   string    `json:"event,omitempty"`
	At      time.Time `json:"at"`
	Expires time.Time `json:"expires"`
	// Live: neither expired nor ended by the screen.
	Live bool `json:"live"`
	// EndedBy is the screen rule that ended this report ("" if none).
	EndedBy string          `json:"endedBy,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Fused is a member's state with everything that decided it.
type Fused struct {
	State     State     `json:"state"`
	Kind      Kind      `json:"kind,omitempty"`
	Authority Authority `json:"authority"`
	// Since is when (State, Kind, Authority) last changed.
	Since time.Time `json:"since"`
	// Screen is the last settled screen reading (nil before any).
	Screen *Reading `json:"screen,omitempty"`
	// Hook is the last hook report (nil if none arrived).
	Hook *HookReading `json:"hook,omitempty"`
	// ExitCode is set once the process exited.
	ExitCode *int `json:"exitCode,omitempty"`
	// Reason explains the decision in one sentence, for `herd explain`.
	Reason string `json:"reason"`
}

// Tracker fuses the screen and hook reports of one member. Its methods are
// safe for concurrent use. onChange is called, in order and never twice at
// once, whenever (State, Kind, Authority) changes; it runs after the
// tracker's lock is released, so it may call Current.
type Tracker struct {
	table    *Table
	engine   *Engine
	name     string
	onChange func(Fused)
	grace    time.Duration
	now      func() time.Time

	mu     sync.Mutex
	screen *Reading
	// obs numbers stored screen readings, so "read after the report" does
	// not depend on clock resolution.
	obs     uint64
	hook    *hookState
	exit    *int
	cur     Fused
	pending []Fused
	timer   *time.Timer
	closed  bool

	deliverMu sync.Mutex
}

type hookState struct {
	HookReading
	// agreed: a settled screen read after the report showed the same state.
	agreed bool
	// obsAt is the tracker's obs when the report arrived.
	obsAt uint64
}

// NewTracker starts tracking a member of the given engine (name, alias or
// binary; unknown engines use the shared rules). onChange may be nil.
func (t *Table) NewTracker(engine string, onChange func(Fused)) *Tracker {
	e, _ := t.Lookup(engine)
	tr := &Tracker{table: t, engine: e, name: engine, onChange: onChange, grace: DefaultGrace, now: time.Now}
	tr.cur = Fused{State: Unknown, Authority: ScreenAuth, Since: tr.now(), Reason: "nothing read from the screen yet"}
	return tr
}

// Current returns the fused state.
func (tr *Tracker) Current() Fused {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.snapshotLocked()
}

func (tr *Tracker) snapshotLocked() Fused {
	f := tr.cur
	if tr.screen != nil {
		r := *tr.screen
		f.Screen = &r
	}
	if tr.hook != nil {
		h := tr.hook.HookReading
		h.Live = tr.hookLiveLocked(tr.now())
		f.Hook = &h
	}
	if tr.exit != nil {
		c := *tr.exit
		f.ExitCode = &c
	}
	return f
}

// Observe classifies a snapshot (taken when the screen settled) and re-fuses.
// A snapshot taken inside a synchronized-output frame may be torn: it is
// ignored once the tracker has a clean reading.
func (tr *Tracker) Observe(snap screen.Snapshot) Fused {
	now := tr.now()
	rd := tr.table.classify(tr.engine, snap, now)
	tr.mu.Lock()
	if rd.InSync && tr.screen != nil {
		f := tr.snapshotLocked()
		tr.mu.Unlock()
		return f
	}
	tr.screen = &rd
	tr.obs++
	if h := tr.hook; h != nil && !rd.InSync && h.EndedBy == "" && tr.hookLiveLocked(now) {
		switch {
		case rd.State == h.State:
			h.agreed = true
		case rd.State == Unknown || rd.Rule == "":
			// The screen says nothing clear: the hook stands.
		case h.agreed:
			h.EndedBy = rd.Rule
		case endsStale(h.State, rd.State):
			if now.Sub(h.At) >= tr.grace {
				h.EndedBy = rd.Rule
			} else {
				tr.armLocked(h.At.Add(tr.grace))
			}
		}
	}
	tr.fuseLocked(now)
	f := tr.snapshotLocked()
	tr.mu.Unlock()
	tr.deliver()
	return f
}

// endsStale: a screen at rest (idle or done) can end a hook's working or
// blocked, because engines fire no hook after a denied permission or an Esc.
func endsStale(hook, scr State) bool {
	return (hook == Working || hook == Blocked) && (scr == Idle || scr == Done)
}

// Report records a hook report and re-fuses. A state that is not valid is an
// error naming the fix; a blocked claim from a Notification other than
// permission_prompt / elicitation_dialog (Claude's idle_prompt fires after
// 60 s at an idle prompt) is ignored with ErrIgnored.
func (tr *Tracker) Report(r HookReport) (Fused, error) {
	now := tr.now()
	ev := parsePayload(r.Payload)
	st, kind := r.State, r.Kind
	if st == "" && ev.Event != "" && tr.engine != nil && tr.engine.Hooks != nil {
		st, kind = tr.engine.Hooks.stateFor(ev)
	}
	if st == "" {
		return tr.Current(), fmt.Errorf("the report has no state: pass one of working, blocked[:permission|question|menu], done, idle")
	}
	if !st.Valid() || st == Unknown {
		return tr.Current(), fmt.Errorf("cannot report state %q: use working, blocked[:permission|question|menu], done or idle", st)
	}
	if !kind.Valid() || (kind != NoKind && st != Blocked) {
		return tr.Current(), fmt.Errorf("cannot report %s: only blocked takes a sub-kind (permission, question, menu)", Format(st, kind))
	}
	if st == Blocked && ev.Event == "Notification" && ev.NotificationType != "" &&
		ev.NotificationType != "permission_prompt" && ev.NotificationType != "elicitation_dialog" {
		return tr.Current(), fmt.Errorf("%w: Notification %q does not mean the engine waits on the user", ErrIgnored, ev.NotificationType)
	}
	if st == Blocked && kind == NoKind {
		kind = ev.kind()
	}
	ttl := r.TTL
	if ttl <= 0 || ttl > MaxHookTTL {
		ttl = MaxHookTTL
	}
	at := r.At
	if at.IsZero() {
		at = now
	}
	tr.mu.Lock()
	tr.hook = &hookState{HookReading: HookReading{State: st, Kind: kind, Event: ev.Event, At: at,
		Expires: at.Add(ttl), Payload: r.Payload}, obsAt: tr.obs}
	// A screen that already shows the reported state agrees with it: a
	// dialog painted (and settled) before its PermissionRequest hook arrived
	// stays still until the user answers, so no later reading would.
	if rd := tr.screen; rd != nil && !rd.InSync && rd.State == st {
		tr.hook.agreed = true
	}
	tr.armLocked(at.Add(ttl))
	tr.fuseLocked(now)
	f := tr.snapshotLocked()
	tr.mu.Unlock()
	tr.deliver()
	return f, nil
}

// Exited records that the member's process exited: done, authority runtime,
// final.
func (tr *Tracker) Exited(code int) Fused {
	tr.mu.Lock()
	c := code
	tr.exit = &c
	tr.fuseLocked(tr.now())
	f := tr.snapshotLocked()
	tr.mu.Unlock()
	tr.deliver()
	return f
}

// Close stops the tracker's timer; later calls still work but nothing
// re-fuses on its own.
func (tr *Tracker) Close() {
	tr.mu.Lock()
	tr.closed = true
	if tr.timer != nil {
		tr.timer.Stop()
	}
	tr.mu.Unlock()
}

// recheck re-fuses when a deadline passes (the grace period after a report,
// or its expiry): event-driven, one timer per tracker, nothing while idle.
func (tr *Tracker) recheck() {
	now := tr.now()
	tr.mu.Lock()
	if tr.closed {
		tr.mu.Unlock()
		return
	}
	if h, rd := tr.hook, tr.screen; h != nil && rd != nil && h.EndedBy == "" && !rd.InSync && tr.obs > h.obsAt &&
		tr.hookLiveLocked(now) && rd.Rule != "" && endsStale(h.State, rd.State) && now.Sub(h.At) >= tr.grace {
		h.EndedBy = rd.Rule
	}
	tr.fuseLocked(now)
	tr.mu.Unlock()
	tr.deliver()
}

func (tr *Tracker) armLocked(at time.Time) {
	if tr.closed {
		return
	}
	d := max(at.Sub(tr.now()), 0)
	if tr.timer == nil {
		tr.timer = time.AfterFunc(d, tr.recheck)
		return
	}
	tr.timer.Reset(d)
}

func (tr *Tracker) hookLiveLocked(now time.Time) bool {
	h := tr.hook
	return h != nil && h.EndedBy == "" && now.Before(h.Expires)
}

// fuseLocked applies the policy and queues onChange on a change.
func (tr *Tracker) fuseLocked(now time.Time) {
	var st State
	var kind Kind
	var auth Authority
	var reason string
	h, rd := tr.hook, tr.screen
	switch {
	case tr.exit != nil:
		st, auth = Done, Runtime
		reason = fmt.Sprintf("the process exited with code %d", *tr.exit)
	case tr.hookLiveLocked(now):
		st, kind, auth = h.State, h.Kind, Hook
		if st == Blocked && kind == NoKind && rd != nil && rd.State == Blocked {
			kind = rd.Kind
		}
		reason = fmt.Sprintf("hook %s reported %s %s ago (authoritative until %s)", orWord(h.Event, "report"),
			Format(h.State, h.Kind), roundDur(now.Sub(h.At)), h.Expires.Format(time.TimeOnly))
		if rd != nil && rd.State != h.State && rd.Rule != "" {
			reason += fmt.Sprintf("; the screen reads %s (%s) but has not shown %s since the report",
				Format(rd.State, rd.Kind), rd.Rule, h.State)
		}
	default:
		if rd == nil {
			st, auth = Unknown, ScreenAuth
			reason = "nothing read from the screen yet"
		} else {
			st, kind, auth = rd.State, rd.Kind, ScreenAuth
			if rd.Rule == "" {
				reason = "no screen rule matched"
			} else {
				reason = fmt.Sprintf("screen rule %s matched in %s: %q", rd.Rule, rd.Region, rd.Evidence)
			}
		}
		if h != nil {
			switch {
			case h.EndedBy != "":
				reason += fmt.Sprintf("; it ended the hook's %s (%s), as engines fire no hook after a deny or Esc",
					Format(h.State, h.Kind), orWord(h.Event, "report"))
			case !now.Before(h.Expires):
				reason += fmt.Sprintf("; the hook's %s expired at %s", Format(h.State, h.Kind), h.Expires.Format(time.TimeOnly))
			}
		}
	}
	tr.cur.Reason = reason
	if st == tr.cur.State && kind == tr.cur.Kind && auth == tr.cur.Authority {
		return
	}
	tr.cur.State, tr.cur.Kind, tr.cur.Authority, tr.cur.Since = st, kind, auth, now
	if tr.onChange != nil {
		tr.pending = append(tr.pending, tr.snapshotLocked())
	}
}

// deliver hands queued changes to onChange in order, outside mu. Whoever
// holds deliverMu drains; a caller that cannot take it leaves its change to
// the holder, which re-checks the queue after releasing.
func (tr *Tracker) deliver() {
	for {
		if !tr.deliverMu.TryLock() {
			return
		}
		for {
			tr.mu.Lock()
			if len(tr.pending) == 0 {
				tr.mu.Unlock()
				break
			}
			f := tr.pending[0]
			tr.pending = tr.pending[1:]
			tr.mu.Unlock()
			tr.onChange(f)
		}
		tr.deliverMu.Unlock()
		tr.mu.Lock()
		empty := len(tr.pending) == 0
		tr.mu.Unlock()
		if empty {
			return
		}
	}
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func roundDur(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// hookEvent is what the tracker reads from a hook's JSON payload.
type hookEvent struct {
	Event            string `json:"hook_event_name"`
	NotificationType string `json:"notification_type"`
	ToolName         string `json:"tool_name"`
}

func parsePayload(p json.RawMessage) hookEvent {
	var ev hookEvent
	if len(p) > 0 {
		_ = json.Unmarshal(p, &ev)
	}
	return ev
}

// kind derives a blocked sub-kind from the payload: Claude's AskUserQuestion
// and elicitation dialogs are questions, other tools ask permission.
func (ev hookEvent) kind() Kind {
	switch {
	case ev.ToolName == "AskUserQuestion", ev.NotificationType == "elicitation_dialog":
		return Question
	case ev.Event == "PermissionRequest", ev.NotificationType == "permission_prompt":
		return Permission
	}
	return NoKind
}

// stateFor maps an event through the spec (first matching entry wins).
func (s *HookSpec) stateFor(ev hookEvent) (State, Kind) {
	for _, he := range s.Events {
		if he.Event != ev.Event {
			continue
		}
		if he.Matcher != "" {
			subject := ev.ToolName
			if ev.Event == "Notification" {
				subject = ev.NotificationType
			}
			re, err := regexp.Compile("^(?:" + he.Matcher + ")$")
			if err != nil || !re.MatchString(subject) {
				continue
			}
		}
		return he.State, he.Kind
	}
	return "", NoKind
}
