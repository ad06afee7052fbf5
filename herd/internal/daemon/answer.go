package daemon

import (
	"context"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// awaitQuestion holds an answer (prompt --answer, send-keys) to a blocked member until the
// engine can take it. A hook's blocked arrives before the engine draws its menu (Claude's
// PermissionRequest ~0.5 s, Codex's ~1 s), and a key typed meanwhile is lost or lands in the
// input box; once drawn, Claude still ignores keys for ~100 ms. So: when the member reads
// blocked, wait until a settled screen shows the question, then until the engine's menu settle
// (engines table menuSettleMs) has passed since it appeared. The wait is event-driven (the
// member's screen settles wake it) and bounded by the engine's menuWaitMs: past it nothing is
// typed and the error says what happened. A member that does not read blocked, a remote one
// or one that exited is not held; nor is a program without hooks in the engines table (cat, a
// shell, a script) whose screen does not show the question: no hook runs ahead of its screen,
// and it has no menu to wait for, only the state someone reported.
func (d *daemon) awaitQuestion(ctx context.Context, m *member, verb string) error {
	if m.remote != nil {
		return nil
	}
	start := time.Now()
	deadline := start.Add(m.spec.menuWait())
	d.bus.mu.Lock()
	if m.exited || m.reading.State != herd.StateBlocked {
		d.bus.mu.Unlock()
		return nil
	}
	sub := d.bus.subscribeLocked([]string{m.name}, true)
	d.bus.mu.Unlock()
	defer d.bus.unsubscribe(sub)
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		d.bus.mu.Lock()
		exited, fused, scr, hook, since := m.exited, m.reading, m.screenR, m.hookR, m.menuSince
		d.bus.mu.Unlock()
		if exited || fused.State != herd.StateBlocked {
			return nil // the write reports an exit; a member no longer blocked takes keys as typed
		}
		if scr != nil && scr.State == herd.StateBlocked && !since.IsZero() {
			wait := time.Until(since.Add(m.spec.menuSettle()))
			if wait <= 0 {
				return nil
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				t.Stop()
				return exitcode.New(exitcode.Interrupted, "%s to %s was canceled before anything was typed", verb, m.name)
			}
		}
		if !m.spec.Hooks {
			return nil
		}
		select {
		case <-sub.wake:
			if _, ended := sub.take(); ended {
				return exitcode.New(exitcode.Infra, "%s to %s: the daemon stopped following the member's screen; nothing was typed", verb, m.name)
			}
		case <-timer.C:
			who := "the screen"
			if hook != nil && hook.State == herd.StateBlocked {
				who = "hook " + orDash(hook.Rule)
			}
			shows := "nothing classified"
			if scr != nil && scr.State != "" {
				shows = scr.State
				if scr.Rule != "" {
					shows += " (" + scr.Rule + ")"
				}
			}
			return exitcode.New(exitcode.Timeout,
				"%s reads blocked (%s) but its screen has not shown the question within %s (it reads %s): nothing was typed, "+
					"as a key sent before the engine draws its menu is lost. See the screen with `mosh herd read %s` and why with `mosh herd explain %s`; "+
					"to type anyway use `mosh herd send-keys --now %s KEY…`",
				m.name, who, time.Since(start).Round(100*time.Millisecond), shows, m.name, m.name, m.name)
		case <-ctx.Done():
			return exitcode.New(exitcode.Interrupted, "%s to %s was canceled while waiting for its question to appear; nothing was typed", verb, m.name)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "report"
	}
	return s
}
