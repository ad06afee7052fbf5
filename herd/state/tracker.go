package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/herd/screen/snapshot"
	"github.com/mosh-dev/mosh/herd/vocab"
)

// MaxHookTTL caps how long a hook report stays authoritative.
const MaxHookTTL = 15 * time.Minute

// DefaultGrace is how long a hook's working or blocked state is protected
// from a screen that has not yet shown it (the engine may not have painted
// the spinner or dialog yet), and how long a prompt claim ignores the idle
// or done frame painted before the engine reacted (an engine's
// promptGraceMs can lengthen the latter). See the package comment.
const DefaultGrace = 1500 * time.Millisecond

// PromptClaimCap bounds a prompt claim that outlives its grace because the
// screen reads nothing clear while the engine's hook has yet to speak
// (OpenCode's first turn: a blank screen for seconds before its first
// session.status busy). Past it the screen decides, whatever it reads.
const PromptClaimCap = 30 * time.Second

// ErrIgnored marks a report that was well-formed but deliberately not used
// (a Notification the engine's hook spec does not map, like Claude's
// idle_prompt). A hook's report command should still exit 0.
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
	// EndedBy is the screen rule that ended this report, or "prompt" when a
	// prompt typed later superseded it ("" if none).
	EndedBy string          `json:"endedBy,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// PromptReading is the prompt side of a Fused state: the daemon typed a
// prompt at At and claims working until the screen shows the engine took
// the turn (see Tracker.Prompted).
type PromptReading struct {
	At time.Time `json:"at"`
	// Live: the claim still decides (no settled screen, hook report or
	// grace expiry has ended it).
	Live bool `json:"live"`
	// EndedBy says what ended the claim: a screen rule id, "hook <event>",
	// "grace" (the screen never showed working), "cap" (the screen read
	// nothing clear and no hook spoke for PromptClaimCap) or "exit".
	EndedBy string `json:"endedBy,omitempty"`
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
	// Prompt is the last prompt typed by the daemon (nil if none).
	Prompt *PromptReading `json:"prompt,omitempty"`
	// ExitCode is set once the process exited.
	ExitCode *int `json:"exitCode,omitempty"`
	// Reason explains the decision in one sentence, for `herd explain`.
	Reason string `json:"reason"`
	// ReasonCode is Reason as a stable enum (the Reason* constants), for
	// scripts; Reason's wording may change, the codes do not.
	ReasonCode string `json:"reasonCode"`
	// RuleSource is where the deciding screen rule came from ("embedded",
	// "engines.json", "rules.json"); "" when no screen rule decided.
	RuleSource string `json:"ruleSource,omitempty"`
}

// Reason codes: what decided a member's state (Fused.ReasonCode, `herd
// explain --json` reasonCode), herd/vocab's; documented in docs/protocol.md.
const (
	ReasonScreenUnread = vocab.ReasonScreenUnread
	ReasonScreenNone   = vocab.ReasonScreenNone
	ReasonScreenRule   = vocab.ReasonScreenRule
	ReasonTTYReading   = vocab.ReasonTTYReading
	ReasonTTYRunning   = vocab.ReasonTTYRunning
	ReasonHookReport   = vocab.ReasonHookReport
	ReasonPromptClaim  = vocab.ReasonPromptClaim
	ReasonRuntimeExit  = vocab.ReasonRuntimeExit
	ReasonRemoteClaim  = vocab.ReasonRemoteClaim
)

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
	// promptGrace replaces grace for prompt claims (the engine's
	// promptGraceMs; 0 = grace). promptCap is PromptClaimCap.
	promptGrace time.Duration
	promptCap   time.Duration
	now         func() time.Time

	mu     sync.Mutex
	screen *Reading
	// obs numbers stored screen readings, so "read after the report" does
	// not depend on clock resolution.
	obs     uint64
	hook    *hookState
	prompt  *promptClaim
	exit    *int
	cur     Fused
	pending []Fused
	timer   *time.Timer
	// due is when timer fires (zero = not armed).
	due    time.Time
	closed bool

	deliverMu sync.Mutex

	// probe reads the terminal's foreground process (SetProbe); reprobeAt
	// and reprobeGap schedule re-probes while it reads working.
	probe      func() *Foreground
	reprobeAt  time.Time
	reprobeGap time.Duration

	// startSettle is the engine's start-up debounce (startupSettleMs; 0 = none); settled says
	// the start-up is over; restSince is when the screen last came to rest (idle or done), zero
	// while it reads anything else.
	startSettle time.Duration
	settled     bool
	restSince   time.Time
}

type hookState struct {
	HookReading
	// agreed: a settled screen read after the report showed the same state.
	agreed bool
	// obsAt is the tracker's obs when the report arrived.
	obsAt uint64
}

// promptClaim is a prompt the daemon typed: working, authority runtime,
// until the engine shows it took the turn or the grace passes.
type promptClaim struct {
	PromptReading
	// wasBlocked: the screen showed blocked when the prompt was typed (the
	// prompt answers a dialog), so a blocked frame is not news.
	wasBlocked bool
}

// NewTracker starts tracking a member of the given engine (name, alias or
// binary; unknown engines use the shared rules). onChange may be nil.
func (t *Table) NewTracker(engine string, onChange func(Fused)) *Tracker {
	e, _ := t.Lookup(engine)
	tr := &Tracker{table: t, engine: e, name: engine, onChange: onChange, grace: DefaultGrace,
		promptCap: PromptClaimCap, now: time.Now}
	if e != nil && e.PromptGraceMs > 0 {
		tr.promptGrace = min(time.Duration(e.PromptGraceMs)*time.Millisecond, PromptClaimCap)
	}
	tr.startSettle = e.StartupSettle()
	tr.settled = tr.startSettle == 0
	tr.cur = Fused{State: Unknown, Authority: ScreenAuth, Since: tr.now(), Reason: "nothing read from the screen yet",
		ReasonCode: ReasonScreenUnread}
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
	if tr.prompt != nil {
		p := tr.prompt.PromptReading
		f.Prompt = &p
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
func (tr *Tracker) Observe(snap snapshot.Snapshot) Fused {
	now := tr.now()
	rd := tr.table.classify(tr.engine, snap, now)
	tr.mu.Lock()
	probe := tr.probeAppliesLocked() && rd.Rule == "" && !rd.InSync
	tr.mu.Unlock()
	if probe {
		fromForeground(&rd, tr.probe())
	}
	tr.mu.Lock()
	tr.scheduleReprobeLocked(&rd, now, true)
	if rd.InSync && tr.screen != nil {
		f := tr.snapshotLocked()
		tr.mu.Unlock()
		return f
	}
	tr.screen = &rd
	tr.obs++
	tr.noteRestLocked(&rd, now)
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
			}
			// else the grace timer (rearmLocked) re-checks at its end.
		}
	}
	if p := tr.prompt; p != nil && p.Live && !rd.InSync {
		switch {
		case now.Sub(p.At) >= tr.promptGraceLocked():
			// Past the grace the screen decides, whatever it reads, unless
			// it reads nothing clear and the engine's hook has yet to speak.
			if !tr.promptHoldsLocked(p, now) {
				p.Live, p.EndedBy = false, orWord(rd.Rule, tr.promptEndWordLocked(p, now))
			}
		case rd.Rule == "" || rd.State == Unknown:
			// Nothing clear yet.
		case rd.State == Working:
			// The engine took the turn: the screen carries it from here.
			p.Live, p.EndedBy = false, rd.Rule
		case rd.State == Blocked && !p.wasBlocked:
			// A dialog that appeared since the prompt: the turn is under
			// way and asks the user.
			p.Live, p.EndedBy = false, rd.Rule
		}
		// An idle or done screen inside the grace, or the dialog the
		// prompt answers, is the frame from before the engine reacted.
	}
	tr.fuseLocked(now)
	tr.rearmLocked(now)
	f := tr.snapshotLocked()
	tr.mu.Unlock()
	tr.deliver()
	return f
}

// noteRestLocked keeps restSince: when the screen came to rest, for the start-up debounce.
func (tr *Tracker) noteRestLocked(rd *Reading, now time.Time) {
	if rd.InSync {
		return
	}
	switch {
	case rd.State != Idle && rd.State != Done:
		tr.restSince = time.Time{}
	case tr.restSince.IsZero():
		tr.restSince = now
	}
}

// startingLocked says whether the start-up debounce holds the screen's reading back: the engine
// has one, no prompt or hook has ended the start-up, and the screen has rested less than it.
// Once the screen rested that long, the start-up is over for good.
func (tr *Tracker) startingLocked(now time.Time) bool {
	if tr.settled {
		return false
	}
	if tr.prompt != nil || tr.hook != nil || tr.exit != nil {
		tr.settled = true
		return false
	}
	if tr.screen == nil || tr.restSince.IsZero() {
		return false
	}
	if now.Sub(tr.restSince) >= tr.startSettle {
		tr.settled = true
		return false
	}
	return true
}

// endsStale: a screen at rest (idle or done) can end a hook's working or
// blocked, because engines fire no hook after a denied permission or an Esc.
func endsStale(hook, scr State) bool {
	return (hook == Working || hook == Blocked) && (scr == Idle || scr == Done)
}

// Report records a hook report and re-fuses. A state that is not valid is an
// error naming the fix. A Notification payload whose notification_type the
// engine's hook spec does not map (Claude's idle_prompt fires after 60 s at
// an idle prompt) is ignored with ErrIgnored, whatever state it claims; a
// mapped one (Claude's permission_prompt, Gemini's ToolPermission) counts.
func (tr *Tracker) Report(r HookReport) (Fused, error) {
	now := tr.now()
	ev := parsePayload(r.Payload)
	mapped, mappedKind := tr.mapEvent(ev)
	if ev.Event == "Notification" && ev.NotificationType != "" && mapped == "" {
		return tr.Current(), fmt.Errorf("%w: Notification %q is not mapped by %s, so it does not mean the engine waits on the user",
			ErrIgnored, ev.NotificationType, tr.specName())
	}
	st, kind := r.State, r.Kind
	if st == "" {
		st, kind = mapped, mappedKind
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
	if st == Blocked && kind == NoKind {
		kind = tr.table.payloadKind(tr.engine, ev)
		if kind == NoKind && mapped == Blocked {
			kind = mappedKind
		}
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
	// The engine's own word is newer than the daemon's claim.
	if p := tr.prompt; p != nil && p.Live {
		p.Live, p.EndedBy = false, "hook "+orWord(ev.Event, "report")
	}
	tr.fuseLocked(now)
	tr.rearmLocked(now)
	f := tr.snapshotLocked()
	tr.mu.Unlock()
	tr.deliver()
	return f, nil
}

// Prompted records that the daemon typed a prompt at at (zero = now) and
// claims working, authority runtime, so a wait right after the prompt does
// not return the state from before it. The claim ends when
//   - a settled screen shows working (the engine took the turn; the screen
//     decides from here) or a dialog that was not there when the prompt was
//     typed;
//   - a hook report arrives (the engine's own word);
//   - the grace (1.5 s, or the engine's promptGraceMs) has passed: the
//     latest settled reading decides, whatever it says, so a member that
//     never shows working (cat, a shell) reads its screen state again
//     without further output — except that for an engine with hooks a
//     screen that reads nothing clear (unknown, or nothing settled yet) does
//     not: the engine's hook, a clear reading or PromptClaimCap (30 s) ends
//     the claim then;
//   - the process exits.
//
// Inside the grace an idle, done or already-open-dialog screen is the frame
// painted before the engine reacted and does not end the claim. A prompt
// supersedes any live hook report: the hook's state (a Stop's done, a
// PermissionRequest's blocked) describes the time before the prompt.
func (tr *Tracker) Prompted(at time.Time) Fused {
	now := tr.now()
	if at.IsZero() {
		at = now
	}
	tr.mu.Lock()
	if tr.exit == nil {
		if h := tr.hook; h != nil && tr.hookLiveLocked(now) {
			h.EndedBy = endedByPrompt
		}
		rd := tr.screen
		tr.prompt = &promptClaim{PromptReading: PromptReading{At: at, Live: true},
			wasBlocked: rd != nil && rd.State == Blocked}
		tr.fuseLocked(now)
		tr.rearmLocked(now)
	}
	f := tr.snapshotLocked()
	tr.mu.Unlock()
	tr.deliver()
	return f
}

// endedByPrompt is HookReading.EndedBy for a report a later prompt
// superseded.
const endedByPrompt = "prompt"

// Exited records that the member's process exited: done, authority runtime,
// final.
func (tr *Tracker) Exited(code int) Fused {
	tr.mu.Lock()
	c := code
	tr.exit = &c
	if p := tr.prompt; p != nil && p.Live {
		p.Live, p.EndedBy = false, "exit"
	}
	tr.fuseLocked(tr.now())
	tr.rearmLocked(tr.now())
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
	tr.due = time.Time{}
	tr.mu.Unlock()
}

// recheck re-fuses when a deadline passes (the grace period after a report
// or a prompt, or a report's expiry): event-driven, one timer per tracker,
// nothing while idle.
func (tr *Tracker) recheck() {
	now := tr.now()
	tr.mu.Lock()
	if tr.closed {
		tr.mu.Unlock()
		return
	}
	// A reading taken from the foreground process is re-taken when its
	// re-probe is due or a prompt's grace ends (the claim must not hand
	// over to a reading older than the prompt).
	if rd := tr.screen; (rd == nil || isProbeReading(rd)) && tr.probeAppliesLocked() && tr.exit == nil &&
		((!tr.reprobeAt.IsZero() && !now.Before(tr.reprobeAt)) || (tr.prompt != nil && tr.prompt.Live && now.Sub(tr.prompt.At) >= tr.promptGraceLocked())) {
		obs := tr.obs
		tr.mu.Unlock()
		fg := tr.probe()
		tr.mu.Lock()
		if tr.closed {
			tr.mu.Unlock()
			return
		}
		switch {
		case fg != nil && tr.obs == obs:
			// Nothing settled meanwhile: the process's word replaces the
			// previous probe's (or stands in for a screen that never
			// settled: a program that prints nothing).
			var r Reading
			if tr.screen != nil {
				r = *tr.screen
			}
			fromForeground(&r, fg)
			r.At = now
			tr.screen = &r
			tr.noteRestLocked(&r, now)
			tr.scheduleReprobeLocked(&r, now, false)
		case tr.obs == obs && tr.screen == nil:
			tr.reprobeAt, tr.reprobeGap = time.Time{}, 0 // nothing to read: stop
		}
	}
	tr.due = time.Time{}
	if h, rd := tr.hook, tr.screen; h != nil && rd != nil && h.EndedBy == "" && !rd.InSync && tr.obs > h.obsAt &&
		tr.hookLiveLocked(now) && rd.Rule != "" && endsStale(h.State, rd.State) && now.Sub(h.At) >= tr.grace {
		h.EndedBy = rd.Rule
	}
	if p := tr.prompt; p != nil && p.Live && now.Sub(p.At) >= tr.promptGraceLocked() && !tr.promptHoldsLocked(p, now) {
		// The screen never showed the turn: it decides again.
		p.Live, p.EndedBy = false, tr.promptEndWordLocked(p, now)
	}
	tr.fuseLocked(now)
	tr.rearmLocked(now)
	tr.mu.Unlock()
	tr.deliver()
}

// rearmLocked points the timer at the next deadline that could change the
// state: the end of a live report's or prompt's grace, or the report's
// expiry. A single timer serves them all, so it always waits for the
// earliest.
func (tr *Tracker) rearmLocked(now time.Time) {
	if tr.closed {
		return
	}
	var next time.Time
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if tr.exit == nil && !tr.reprobeAt.IsZero() {
		consider(tr.reprobeAt)
	}
	if h := tr.hook; tr.exit == nil && tr.hookLiveLocked(now) {
		consider(h.At.Add(tr.grace))
		consider(h.Expires)
	}
	if !tr.settled && !tr.restSince.IsZero() {
		consider(tr.restSince.Add(tr.startSettle))
	}
	if p := tr.prompt; tr.exit == nil && p != nil && p.Live {
		end := p.At.Add(tr.promptGraceLocked())
		if !end.After(now) && tr.promptHoldsLocked(p, now) {
			// Held past the grace: the cap is the next deadline (a clear
			// screen or a hook ends the claim sooner, on their own).
			end = p.At.Add(tr.promptCap)
		}
		// At the very end of the grace (or the cap) the claim ends: now
		// itself counts.
		if !end.After(now) {
			next = now
		} else {
			consider(end)
		}
	}
	if next.Equal(tr.due) {
		return
	}
	tr.due = next
	if next.IsZero() {
		if tr.timer != nil {
			tr.timer.Stop()
		}
		return
	}
	d := max(next.Sub(now), 0)
	if tr.timer == nil {
		tr.timer = time.AfterFunc(d, tr.recheck)
		return
	}
	tr.timer.Reset(d)
}

// scheduleReprobeLocked arms a re-probe while a foreground reading says
// working: the first one reprobeFirst after a settled screen (fresh), each
// later one twice as far as the previous, at most reprobeMax. A reading
// that is not the foreground's working stops them.
func (tr *Tracker) scheduleReprobeLocked(rd *Reading, now time.Time, fresh bool) {
	if rd.InSync {
		return
	}
	if rd.Rule != RuleTTYRunning {
		tr.reprobeAt, tr.reprobeGap = time.Time{}, 0
		return
	}
	if fresh || tr.reprobeGap == 0 {
		tr.reprobeGap = reprobeFirst
	} else {
		tr.reprobeGap = min(2*tr.reprobeGap, reprobeMax)
	}
	tr.reprobeAt = now.Add(tr.reprobeGap)
}

// promptGraceLocked is how long a prompt claim ignores an idle or done
// screen and the dialog the prompt answers.
func (tr *Tracker) promptGraceLocked() time.Duration {
	if tr.promptGrace > 0 {
		return tr.promptGrace
	}
	return tr.grace
}

// promptHoldsLocked says whether a live claim past its grace still stands:
// the screen reads nothing clear (nothing settled yet, or no rule matched)
// and the engine has hooks, whose report when it takes the turn ends the
// claim (a live claim means none has spoken since the prompt) — until the
// cap. A program without hooks (cat, a shell) has nothing else to wait for:
// its screen decides at the end of the grace, clear or not.
func (tr *Tracker) promptHoldsLocked(p *promptClaim, now time.Time) bool {
	if tr.engine == nil || tr.engine.Hooks == nil || now.Sub(p.At) >= tr.promptCap {
		return false
	}
	rd := tr.screen
	return rd == nil || rd.Rule == "" || rd.State == Unknown
}

// promptEndWordLocked is PromptReading.EndedBy for a claim that ran out of
// time: "cap" when it was held past the grace, else "grace".
func (tr *Tracker) promptEndWordLocked(p *promptClaim, now time.Time) string {
	if now.Sub(p.At) >= tr.promptCap && tr.engine != nil && tr.engine.Hooks != nil && tr.promptCap > tr.promptGraceLocked() {
		return "cap"
	}
	return "grace"
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
	var reason, code, source string
	h, rd := tr.hook, tr.screen
	switch {
	case tr.exit != nil:
		st, auth, code = Done, Runtime, ReasonRuntimeExit
		reason = fmt.Sprintf("the process exited with code %d", *tr.exit)
	case tr.prompt != nil && tr.prompt.Live:
		p := tr.prompt
		st, auth, code = Working, Runtime, ReasonPromptClaim
		if grace := tr.promptGraceLocked(); now.Sub(p.At) < grace {
			reason = fmt.Sprintf("a prompt was typed %s ago: working until the screen shows the engine took the turn, a hook reports, or %s pass",
				roundDur(now.Sub(p.At)), grace)
		} else {
			reason = fmt.Sprintf("a prompt was typed %s ago and the screen has read nothing clear since: working until the engine's hook reports or the screen reads a state, at most %s",
				roundDur(now.Sub(p.At)), tr.promptCap)
		}
		if rd != nil && rd.Rule != "" {
			reason += fmt.Sprintf("; the screen reads %s (%s)", Format(rd.State, rd.Kind), rd.Rule)
		}
	case tr.hookLiveLocked(now):
		st, kind, auth, code = h.State, h.Kind, Hook, ReasonHookReport
		if st == Blocked && kind == NoKind && rd != nil && rd.State == Blocked {
			kind = rd.Kind
		}
		reason = fmt.Sprintf("hook %s reported %s %s ago (authoritative until %s)", orWord(h.Event, "report"),
			Format(h.State, h.Kind), roundDur(now.Sub(h.At)), h.Expires.Format(time.TimeOnly))
		if rd != nil && rd.State != h.State && rd.Rule != "" {
			reason += fmt.Sprintf("; the screen reads %s (%s) but has not shown %s since the report",
				Format(rd.State, rd.Kind), rd.Rule, h.State)
		}
	case tr.startingLocked(now):
		// Start-up, the screen at rest for less than the debounce: what was read before stands.
		st, kind, auth, code = tr.cur.State, tr.cur.Kind, tr.cur.Authority, tr.cur.ReasonCode
		reason = fmt.Sprintf("starting: the screen reads %s (%s) since %s ago; the member reads it once it rests %s (the engine's startupSettleMs)",
			Format(rd.State, rd.Kind), rd.Rule, roundDur(now.Sub(tr.restSince)), tr.startSettle)
	default:
		if rd == nil {
			st, auth, code = Unknown, ScreenAuth, ReasonScreenUnread
			reason = "nothing read from the screen yet"
		} else {
			st, kind, auth = rd.State, rd.Kind, ScreenAuth
			switch {
			case rd.Rule == "":
				code = ReasonScreenNone
				reason = "no screen rule matched"
			case rd.Rule == RuleTTYReading:
				code = ReasonTTYReading
				reason = fmt.Sprintf("no screen rule matched; the terminal's foreground process %s with the screen at rest (%s): idle",
					rd.Evidence, rd.Rule)
			case rd.Rule == RuleTTYRunning:
				code = ReasonTTYRunning
				reason = fmt.Sprintf("no screen rule matched; the terminal's foreground process %s (%s): working",
					rd.Evidence, rd.Rule)
			default:
				code, source = ReasonScreenRule, rd.Source
				reason = fmt.Sprintf("screen rule %s matched in %s: %q", rd.Rule, rd.Region, rd.Evidence)
			}
		}
		if h != nil {
			switch {
			case h.EndedBy == endedByPrompt:
				reason += fmt.Sprintf("; the hook's %s (%s) was superseded by a prompt typed after it",
					Format(h.State, h.Kind), orWord(h.Event, "report"))
			case h.EndedBy != "":
				reason += fmt.Sprintf("; it ended the hook's %s (%s), as engines fire no hook after a deny or Esc",
					Format(h.State, h.Kind), orWord(h.Event, "report"))
			case !now.Before(h.Expires):
				reason += fmt.Sprintf("; the hook's %s expired at %s", Format(h.State, h.Kind), h.Expires.Format(time.TimeOnly))
			}
		}
	}
	tr.cur.Reason, tr.cur.ReasonCode, tr.cur.RuleSource = reason, code, source
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

// mapEvent maps a payload's event through the member's engine hook spec.
// A member whose engine has none (a wrapper script, an unknown binary) may
// still run an engine whose hooks are installed: any engine's spec that maps
// the event counts, first by name.
func (tr *Tracker) mapEvent(ev hookEvent) (State, Kind) {
	if ev.Event == "" {
		return "", NoKind
	}
	if tr.engine != nil && tr.engine.Hooks != nil {
		return tr.engine.Hooks.stateFor(ev)
	}
	for _, name := range tr.table.Names() {
		if e := tr.table.engines[name]; e.Hooks != nil {
			if st, kind := e.Hooks.stateFor(ev); st != "" {
				return st, kind
			}
		}
	}
	return "", NoKind
}

func (tr *Tracker) specName() string {
	if tr.engine != nil && tr.engine.Hooks != nil {
		return "the " + tr.engine.Name + " hook spec"
	}
	return "any engine's hook spec"
}

// matchers caches compiled hook matchers (source → *regexp.Regexp, or nil
// when the source does not compile): reports arrive at every hook.
var matchers sync.Map

func matcherFor(src string) *regexp.Regexp {
	if v, ok := matchers.Load(src); ok {
		return v.(*regexp.Regexp)
	}
	re, err := regexp.Compile("^(?:" + src + ")$")
	if err != nil {
		re = nil
	}
	matchers.Store(src, re)
	return re
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
			re := matcherFor(he.Matcher)
			if re == nil || !re.MatchString(subject) {
				continue
			}
		}
		return he.State, he.Kind
	}
	return "", NoKind
}
