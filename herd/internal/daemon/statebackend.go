package daemon

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

// errReportIgnored: a well-formed report the tracker chose not to use (e.g. Claude's idle_prompt
// Notification claiming blocked). The reporter still succeeds.
var errReportIgnored = errors.New("report ignored")

// stateEngines adapts herd/state's engines table (embedded + engines.json + rules.json).
type stateEngines struct{ t *state.Table }

func defaultEngineTable(herdDir string) engineTable {
	return stateEngines{state.Load(herdDir)}
}

func (s stateEngines) Lookup(name string) (engineSpec, bool) {
	e, ok := s.t.Lookup(name)
	if !ok || e == nil {
		return engineSpec{}, false
	}
	bin := e.Name
	if len(e.Binaries) > 0 {
		bin = e.Binaries[0]
	}
	spec := engineSpec{Key: e.Name, Bin: bin, AgentArgs: e.AgentArgs, ResumeArgs: e.ResumeArgs, LaunchArgs: e.LaunchArgs,
		BracketedPaste: e.BracketedPaste, StripEnv: e.StripEnv, ClearInput: e.ClearInput, InputLeftover: e.InputLeftover,
		KeyGap: e.KeyGap(), MenuSettle: e.MenuSettle(), MenuWait: e.MenuWait(), HookGrace: e.HookGrace(), Hooks: e.Hooks != nil}
	if e.Resubmit != nil && len(e.Resubmit.Keys) > 0 {
		spec.Resubmit, spec.ResubmitSettle, spec.InputHolds = e.Resubmit.Keys, e.Resubmit.ResubmitSettle(), e.InputHolds
	}
	return spec, true
}

func (s stateEngines) Keys() []string { return s.t.Names() }

func (s stateEngines) Table() *state.Table { return s.t }

func (s stateEngines) NewTracker(engine string, changed func()) tracker {
	st := &stateTracker{}
	st.tr = s.t.NewTracker(engine, func(state.Fused) {
		if changed != nil {
			changed()
		}
	})
	return st
}

func (s stateEngines) Doctor() []herd.DoctorCheck { return herd.EngineTableChecks(s.t) }

// stateTracker adapts state.Tracker. The tracker runs its own timers (report grace and expiry)
// and calls back on every change, so it reports no expiry of its own.
type stateTracker struct{ tr *state.Tracker }

func (s *stateTracker) Screen(snap screen.Snapshot, _ time.Time) { s.tr.Observe(snap) }

func (s *stateTracker) Report(st, kind string, ttl time.Duration, payload json.RawMessage, now time.Time) error {
	_, err := s.tr.Report(state.HookReport{State: state.State(st), Kind: state.Kind(kind), TTL: ttl, At: now, Payload: payload})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, state.ErrIgnored):
		return errReportIgnored
	default:
		return exitcode.Wrap(err, exitcode.Usage)
	}
}

func (s *stateTracker) Exit(code int, _ time.Time) { s.tr.Exited(code) }

func (s *stateTracker) Prompted(now time.Time) { s.tr.Prompted(now) }

func (s *stateTracker) Close() { s.tr.Close() }

func (s *stateTracker) SetProbe(probe func() *state.Foreground) { s.tr.SetProbe(probe) }

func (s *stateTracker) Readings(time.Time) (herd.Reading, *herd.Reading, *herd.Reading) {
	f := s.tr.Current()
	fused := herd.Reading{State: string(f.State), BlockedOn: string(f.Kind), Authority: string(f.Authority), AtMs: f.Since.UnixMilli()}
	scr := screenReading(f.Screen)
	if scr != nil && f.Authority == state.ScreenAuth {
		fused.Rule = scr.Rule
	}
	var hook *herd.Reading
	if h := f.Hook; h != nil && h.Live {
		hook = &herd.Reading{State: string(h.State), BlockedOn: string(h.Kind), Authority: herd.AuthorityHook, Rule: h.Event, AtMs: h.At.UnixMilli(), ExpiresMs: h.Expires.UnixMilli()}
		if f.Authority == state.Hook {
			fused.ExpiresMs = hook.ExpiresMs
		}
	}
	return fused, scr, hook
}

func (s *stateTracker) HookPayload() json.RawMessage {
	if h := s.tr.Current().Hook; h != nil && h.Live {
		return h.Payload
	}
	return nil
}

func screenReading(r *state.Reading) *herd.Reading {
	if r == nil {
		return nil
	}
	return &herd.Reading{State: string(r.State), BlockedOn: string(r.Kind), Authority: herd.AuthorityScreen, Rule: r.Rule, AtMs: r.At.UnixMilli()}
}

func (s *stateTracker) Explain(_ time.Time, into *herd.ExplainResult) {
	f := s.tr.Current()
	into.Decided, into.ReasonCode, into.RuleSource = f.Reason, f.ReasonCode, f.RuleSource
	into.Screen = screenReading(f.Screen)
	if f.Screen != nil && f.Screen.Evidence != "" {
		into.Evidence = []string{f.Screen.Evidence}
	}
	if h := f.Hook; h != nil {
		into.Hook = &herd.Reading{State: string(h.State), BlockedOn: string(h.Kind), Authority: herd.AuthorityHook, Rule: h.Event, AtMs: h.At.UnixMilli(), ExpiresMs: h.Expires.UnixMilli()}
	}
	if b, err := json.Marshal(f); err == nil {
		into.Detail = b
	}
}
