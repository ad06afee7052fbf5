package top

import (
	"context"
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mosh-dev/mosh/herd"
)

// actionTimeout bounds one action (an answer waits for the engine's menu at most its menuWaitMs).
const actionTimeout = 30 * time.Second

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// run performs an action off the UI goroutine and reports its outcome as an actionMsg; under
// --dry-run it only says what it would have done.
func (m *Model) run(verb, name string, f func(ctx context.Context) error) tea.Cmd {
	if m.opts.DryRun {
		return func() tea.Msg {
			return actionMsg{verb: verb, name: name, note: "dry run: would " + verb + " " + name + " (nothing done)"}
		}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		return actionMsg{verb: verb, name: name, err: f(ctx)}
	}
}

func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	s := k.String()
	if s == "ctrl+c" {
		return m, tea.Quit
	}
	switch m.mode {
	case modeHelp:
		if s == "q" {
			return m, tea.Quit
		}
		m.mode = modeNormal
		return m, nil
	case modeConfirmKill:
		m.mode = modeNormal
		if s == "y" || s == "Y" {
			name := m.target
			m.setStatus(false, "killing %s…", name)
			return m, m.run("kill", name, func(ctx context.Context) error { return m.opts.Actions.Kill(ctx, name) })
		}
		m.setStatus(false, "kill %s: not killed", m.target)
		return m, nil
	case modeAnswerPick:
		return m.pickKey(s)
	case modeFilter, modePrompt, modeAnswerText:
		return m.inputKey(k, s)
	}
	switch s {
	case "q":
		return m, tea.Quit
	case "?":
		m.mode = modeHelp
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup":
		m.move(-max(1, m.bodyHeight()-1))
	case "pgdown":
		m.move(max(1, m.bodyHeight()-1))
	case "home", "g":
		m.move(-len(m.order))
	case "end", "G":
		m.move(len(m.order))
	case "esc":
		if m.filter != "" {
			m.filter = ""
			m.resort()
		}
		m.status = ""
	case "/":
		m.openInput(modeFilter, "", m.filter)
	case "enter":
		return m.attach()
	case "a":
		return m.answer()
	case "p":
		if r := m.current(); r != nil {
			if !r.m.Alive {
				m.setStatus(true, "%s has exited: nothing to prompt (mosh restore %s restarts it)", r.m.Name, r.m.Name)
				return m, nil
			}
			m.openInput(modePrompt, r.m.Name, "")
		}
	case "x":
		if r := m.current(); r != nil {
			name := r.m.Name
			m.setStatus(false, "interrupting %s…", name)
			return m, m.run("interrupt", name, func(ctx context.Context) error { return m.opts.Actions.Interrupt(ctx, name) })
		}
	case "K":
		if r := m.current(); r != nil {
			m.mode, m.target = modeConfirmKill, r.m.Name
		}
	}
	return m, nil
}

func (m *Model) current() *row {
	if m.sel == "" {
		return nil
	}
	return m.rows[m.sel]
}

func (m *Model) openInput(md mode, target, value string) {
	m.mode, m.target = md, target
	m.input.SetValue(value)
	m.input.CursorEnd()
	m.input.SetWidth(max(10, m.width-30))
	m.input.Focus()
}

func (m *Model) closeInput() {
	m.mode = modeNormal
	m.input.Blur()
	m.input.SetValue("")
}

func (m *Model) inputKey(k tea.KeyPressMsg, s string) (tea.Model, tea.Cmd) {
	switch s {
	case "esc":
		if m.mode == modeFilter {
			m.filter = ""
			m.resort()
		}
		m.closeInput()
		return m, nil
	case "enter":
		text, md, name := m.input.Value(), m.mode, m.target
		m.closeInput()
		switch md {
		case modeFilter:
			m.filter = text
			m.resort()
		case modePrompt:
			if text == "" {
				return m, nil
			}
			m.setStatus(false, "prompting %s…", name)
			return m, m.run("prompt", name, func(ctx context.Context) error { return m.opts.Actions.Prompt(ctx, name, text) })
		case modeAnswerText:
			if text == "" {
				return m, nil
			}
			return m.sendAnswer(name, text)
		}
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	if m.mode == modeFilter {
		m.filter = m.input.Value() // the filter narrows as it is typed
		m.resort()
	}
	return m, cmd
}

// answer opens the answer for the selected member: its options when it asks a menu or a
// permission, a line of text otherwise.
func (m *Model) answer() (tea.Model, tea.Cmd) {
	r := m.current()
	if r == nil {
		return m, nil
	}
	if r.m.State != herd.StateBlocked {
		m.setStatus(true, "%s is %s, not blocked: nothing to answer (p prompts it)", r.m.Name, r.m.State)
		return m, nil
	}
	if q := r.m.Question; q != nil && len(q.Options) > 0 {
		m.mode, m.target, m.pick = modeAnswerPick, r.m.Name, 0
		return m, nil
	}
	m.openInput(modeAnswerText, r.m.Name, "")
	return m, nil
}

func (m *Model) pickOptions() []herd.QuestionOption {
	r := m.rows[m.target]
	if r == nil || r.m.Question == nil {
		return nil
	}
	return r.m.Question.Options
}

func (m *Model) pickKey(s string) (tea.Model, tea.Cmd) {
	opts := m.pickOptions()
	if len(opts) == 0 {
		m.mode = modeNormal
		m.setStatus(true, "%s no longer asks a question: nothing to answer", m.target)
		return m, nil
	}
	switch s {
	case "esc", "q":
		m.mode = modeNormal
		return m, nil
	case "up", "k":
		m.pick = max(0, m.pick-1)
		return m, nil
	case "down", "j", "tab":
		m.pick = min(len(opts)-1, m.pick+1)
		return m, nil
	case "enter":
		m.mode = modeNormal
		return m.sendAnswer(m.target, opts[m.pick].Key)
	}
	for _, o := range opts {
		if s == o.Key {
			m.mode = modeNormal
			return m.sendAnswer(m.target, o.Key)
		}
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(opts) {
		m.mode = modeNormal
		return m.sendAnswer(m.target, opts[n-1].Key)
	}
	return m, nil
}

func (m *Model) sendAnswer(name, text string) (tea.Model, tea.Cmd) {
	if r := m.rows[name]; r == nil || r.m.State != herd.StateBlocked {
		m.setStatus(true, "%s is no longer blocked: the answer was not sent", name)
		return m, nil
	}
	m.setStatus(false, "answering %s with %q…", name, text)
	return m, m.run("answer", name, func(ctx context.Context) error { return m.opts.Actions.Answer(ctx, name, text) })
}

func (m *Model) attach() (tea.Model, tea.Cmd) {
	r := m.current()
	if r == nil {
		return m, nil
	}
	if !r.m.Alive || r.m.State == herd.StateGone {
		m.setStatus(true, "%s has exited: nothing to attach to (mosh herd read %s shows its last screen)", r.m.Name, r.m.Name)
		return m, nil
	}
	if r.m.Kind == herd.KindRemote {
		m.setStatus(true, "%s is remote: it has no terminal here (p prompts it)", r.m.Name)
		return m, nil
	}
	if m.opts.DryRun {
		m.setStatus(false, "dry run: would attach to %s (nothing done)", r.m.Name)
		return m, nil
	}
	var c tea.ExecCommand
	if m.opts.Actions != nil {
		c = m.opts.Actions.Attach(r.m.Name)
	}
	if c == nil {
		m.setStatus(true, "this terminal cannot attach: run mosh attach %s from a shell", r.m.Name)
		return m, nil
	}
	name := r.m.Name
	return m, tea.Exec(c, func(err error) tea.Msg {
		if err != nil {
			return actionMsg{verb: "attach", name: name, err: err}
		}
		return actionMsg{verb: "attach", name: name, note: "detached from " + name}
	})
}
