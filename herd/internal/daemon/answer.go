package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/ledger"
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
	return m.kind.awaitQuestion(ctx, verb)
}

func (p ptyMember) awaitQuestion(ctx context.Context, verb string) error {
	d, m := p.d, p.member
	start := time.Now()
	deadline := start.Add(m.spec.menuWait())
	d.state.lock()
	if m.exited || m.reading.State != herd.StateBlocked {
		d.state.unlock()
		return nil
	}
	sub := d.bus.subscribeLocked([]string{m.name}, true)
	d.state.unlock()
	defer d.bus.unsubscribe(sub)
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		d.state.lock()
		exited, fused, scr, hook, since := m.exited, m.reading, m.screenR, m.hookR, m.menuSince
		d.state.unlock()
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
		case <-sub.wake():
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

// answeredBy is who answered, as recorded in the authority of the task's "answered:" transition:
// the caller's word ("alice (cli)"), or "unknown".
func answeredBy(by string) string {
	by = strings.TrimSpace(by)
	if by == "" {
		return "unknown"
	}
	return clip(by, 80)
}

// resolveAnswer checks an answer against what m asks now (its Question, read by the engines
// table): the keys to press for a menu option or a permission, or the text to type. An answer
// that does not fit is refused (exit 1) with the options.
func (d *daemon) resolveAnswer(m *member, text string) (state.Answer, error) {
	var q *herd.Question
	d.withState(func() { q = m.question })
	a, err := d.engines.Table().ResolveAnswer(m.engine, askedOf(q), text)
	var ae *state.AnswerError
	if errors.As(err, &ae) {
		what := "asks"
		if q != nil && q.Text != "" {
			what = fmt.Sprintf("asks %q", clip(q.Text, 120))
		}
		return a, exitcode.New(exitcode.Usage, "%s %s (%s); nothing was typed: %s", m.name, what, orKind(q), ae.Msg)
	}
	return a, err
}

func orKind(q *herd.Question) string {
	if q == nil || q.Kind == "" {
		return "blocked"
	}
	return q.Kind
}

// pressAnswer records a keys answer on m's open task (the transition "answered: " and the
// answer as given, its authority who answered) and presses the keys. It returns the task the answer joined ("" when
// the member had none: a start-up menu). The caller holds the terminal (m.typing).
func (d *daemon) pressAnswer(ctx context.Context, m *member, given string, a state.Answer, by string) (string, error) {
	presses, err := encodePresses(a.Keys)
	if err != nil {
		return "", err
	}
	term, err := m.kind.terminal("answer")
	if err != nil {
		return "", err
	}
	task := ""
	d.state.lock()
	m.answerPending = true // this question has its answer: another is refused until a new one shows (hAnswer)
	if m.task != nil && m.task.id != "" && m.task.typed && d.tasks != nil {
		task = m.task.id
		tr := ledger.Transition{At: time.Now(), State: m.reading.State, Kind: m.reading.BlockedOn, Authority: answeredBy(by),
			Note: herd.NoteAnswered + clip(given, 200)}
		d.state.unlock()
		var rerr error
		d.lw.do(m.name, func() { _, rerr = d.tasks.RecordTransition(m.name, tr) })
		if rerr != nil {
			return "", exitcode.New(exitcode.Infra, "cannot record the answer in the ledger: %v (nothing was typed; see `mosh herd doctor`)", rerr)
		}
	} else {
		d.state.unlock()
	}
	d.noteKeys(m, a.Keys)
	if _, err := term.writePresses(ctx, presses); err != nil {
		return task, err
	}
	// As for a typed answer (typeNow): until the engine repaints, the member reads working, so a
	// wait right after the answer is not answered with the question it just answered.
	if task != "" {
		d.promptTyped(m, task)
	}
	m.trk.Prompted(time.Now())
	d.refresh(m, false)
	return task, nil
}

// stillAsking refuses an answer to a member that no longer asks: it left blocked, or another
// answer went to its question (or is being typed) and the engine has not drawn a new one.
func (d *daemon) stillAsking(m *member) (err error) {
	d.withState(func() { err = d.stillAskingLocked(m) })
	return err
}

func (d *daemon) stillAskingLocked(m *member) error {
	if m.typing != "" || m.reading.State != herd.StateBlocked || m.answerPending {
		return exitcode.New(exitcode.Usage, "%s was answered meanwhile (it reads %s): nothing was typed; see `mosh ps %s --json`", m.name, m.reading.State, m.name)
	}
	return nil
}

func hAnswer(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.AnswerParams
	if err := decode(herd.MethodAnswer, params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Answer) == "" {
		return nil, exitcode.New(exitcode.Usage, "answer needs an answer: an option's number or label, yes / no / always, or text (see `mosh ps %s --json` for the question)", p.Name)
	}
	d := sc.d
	m, err := d.liveMember(p.Name)
	if err != nil {
		return nil, err
	}
	if cur := d.readingOf(m); cur.State != herd.StateBlocked {
		return nil, exitcode.New(exitcode.Usage, "%s is not blocked (it reads %s): there is nothing to answer; `mosh herd prompt %s TEXT` sends a prompt", m.name, cur.State, m.name)
	}
	if err := d.awaitQuestion(ctx, m, "answer"); err != nil {
		return nil, err
	}
	if err := d.stillAsking(m); err != nil {
		return nil, err
	}
	a, err := d.resolveAnswer(m, p.Answer)
	if err != nil {
		return nil, err
	}
	var q *herd.Question
	d.withState(func() { q = m.question })
	res := herd.AnswerResult{Name: m.name, Kind: orKind(q), Label: a.Label, Asked: q}
	if len(a.Keys) == 0 {
		// Text: typed as an answer through prompt, which joins the open task.
		raw, _ := json.Marshal(herd.PromptParams{Name: m.name, Text: a.Text, Answer: true, By: p.By})
		out, err := hPrompt(ctx, sc, raw)
		if err != nil {
			return nil, err
		}
		res.Task, res.Text = out.(herd.PromptResult).Task, a.Text
		return res, nil
	}
	// One answer at a time: a second one, checked against the same question, would land in what
	// the engine shows after the first (an input box, the next dialog).
	d.state.lock()
	if err := d.stillAskingLocked(m); err != nil {
		d.state.unlock()
		return nil, err
	}
	m.typing = "-"
	d.state.unlock()
	task, err := d.pressAnswer(ctx, m, p.Answer, a, p.By)
	d.doneTyping(m)
	if err != nil {
		return nil, err
	}
	res.Task, res.Keys = task, a.Keys
	return res, nil
}
