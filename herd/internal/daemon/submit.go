package daemon

import (
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// A prompt the herd types can be lost after it reached the engine's input box: a loaded engine
// sometimes drops the Enter, and the text then sits in the box while the member reads idle. For
// an engine whose table entry has resubmit, the herd watches each prompt it typed until the
// engine takes it — a hook reports, the screen reads working or blocked, or the text, once seen
// in the box, left it — and when instead the screen has come to rest reading idle or done with
// the text still in the box, it sends the entry's keys (Enter) once more. The member's terminal
// stays taken (m.typing) meanwhile, so a queued prompt is never typed after a half-sent one.

// confirmLimit bounds the watch: a prompt not taken or re-sent by then is left as it is.
const confirmLimit = 10 * time.Second

// pokeSettle wakes the watch of a typed prompt. It never blocks.
func (m *member) pokeSettle() {
	select {
	case m.settleWake <- struct{}{}:
	default:
	}
}

// noteReport records that the member's engine reported a hook (the engine's own word ends the
// watch: it took the prompt, or it is busy with something else).
func (d *daemon) noteReport(m *member, now time.Time) {
	d.withState(func() {
		if now.After(m.lastReport) {
			m.lastReport = now
		}
	})
	m.pokeSettle()
}

// confirmTaken watches text, typed at typed, until the engine takes it, and re-sends the
// engine's resubmit keys once if it was left in the input box. It returns at once for an engine
// without resubmit.
func (d *daemon) confirmTaken(m *member, text string, typed time.Time) {
	if len(m.spec.Resubmit) == 0 || m.spec.InputHolds == nil {
		return
	}
	keys, err := encodeKeys(m.spec.Resubmit)
	if err != nil {
		d.logger.Printf("prompt: %s: resubmit keys: %v", m.name, err)
		return
	}
	// A wake-up pending from before the watch started is kept: the screen that settled then may
	// be the engine's working one, and the first look below reads it.
	taken, holds := d.promptTaken(m, text, typed)
	if taken {
		return
	}
	seen := holds
	limit := time.NewTimer(confirmLimit)
	defer limit.Stop()
	settle := m.spec.ResubmitSettle
	quiet := time.NewTimer(settle)
	defer quiet.Stop()
	for {
		select {
		case <-m.settleWake:
			taken, holds := d.promptTaken(m, text, typed)
			if taken || (seen && !holds) {
				return
			}
			seen = seen || holds
			if !quiet.Stop() {
				select {
				case <-quiet.C:
				default:
				}
			}
			quiet.Reset(settle)
		case <-quiet.C:
			taken, holds := d.promptTaken(m, text, typed)
			if taken || (seen && !holds) {
				return
			}
			if !holds {
				// Not drawn yet: a loaded engine echoes a paste late. Keep watching (the engine
				// starting the turn, a hook, or the limit ends the watch).
				quiet.Reset(settle)
				continue
			}
			if !d.atRest(m) {
				// The engine holds the prompt itself (Codex under "Waiting for startup").
				quiet.Reset(settle)
				continue
			}
			if d.resubmit(m, text, keys) {
				d.logger.Printf("prompt: %s: the prompt sat in the input box %s after it was typed; sent %v again", m.name, time.Since(typed).Round(time.Millisecond), m.spec.Resubmit)
				m.trk.Prompted(time.Now())
				d.refresh(m, false)
			}
			return
		case <-limit.C:
			return
		case <-m.kind.stopped():
			return
		case <-d.stopCh:
			return
		}
	}
}

// promptTaken says whether the engine took the prompt typed at typed (a hook reported since, or
// the settled screen reads working or blocked; or other keys reached the terminal since) and
// whether its input box shows the text now.
func (d *daemon) promptTaken(m *member, text string, typed time.Time) (taken, holds bool) {
	d.state.lock()
	reported := !m.lastReport.Before(typed)
	d.state.unlock()
	if reported || m.lastInput.Load() > typed.UnixNano() {
		// The engine spoke, or someone else typed (an Escape, an answer): not ours to re-send.
		return true, false
	}
	_, scr, _ := m.trk.Readings(time.Now())
	if scr != nil && (scr.State == herd.StateWorking || scr.State == herd.StateBlocked) {
		// Unless the working is the engine holding the text in its box (checked at rest).
		if !m.spec.InputHolds(m.scr.Snapshot(), text) {
			return true, false
		}
		return false, true
	}
	return false, m.spec.InputHolds(m.scr.Snapshot(), text)
}

// atRest: the settled screen reads idle or done (the engine waits for input).
func (d *daemon) atRest(m *member) bool {
	_, scr, _ := m.trk.Readings(time.Now())
	return scr != nil && (scr.State == herd.StateIdle || scr.State == herd.StateDone)
}

// resubmit writes keys if the input box still holds text, under the write lock (nothing else is
// typed between the check and the keys).
func (d *daemon) resubmit(m *member, text string, keys []byte) bool {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if !m.spec.InputHolds(m.scr.Snapshot(), text) {
		return false
	}
	if err := m.writeLocked(keys); err != nil {
		d.logger.Printf("prompt: %s: re-sending %v: %v", m.name, m.spec.Resubmit, err)
		return false
	}
	return true
}
