package top

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mosh-dev/mosh/herd"
)

// styles are the few looks top uses; with NoColor only bold, faint and reverse video remain.
type styles struct {
	header, selected, faint, bold, err lipgloss.Style
	state                              map[string]lipgloss.Style
}

func (m *Model) styles() styles {
	s := styles{
		header:   lipgloss.NewStyle().Bold(true),
		selected: lipgloss.NewStyle().Reverse(true),
		faint:    lipgloss.NewStyle().Faint(true),
		bold:     lipgloss.NewStyle().Bold(true),
		err:      lipgloss.NewStyle().Bold(true),
		state:    map[string]lipgloss.Style{},
	}
	if m.opts.NoColor {
		s.state[herd.StateBlocked] = lipgloss.NewStyle().Bold(true)
		s.state[herd.StateGone] = s.faint
		return s
	}
	s.err = s.err.Foreground(lipgloss.Red)
	s.state[herd.StateBlocked] = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Red)
	s.state[herd.StateWorking] = lipgloss.NewStyle().Foreground(lipgloss.Green)
	s.state[herd.StateDone] = lipgloss.NewStyle().Foreground(lipgloss.Blue)
	s.state[herd.StateUnknown] = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
	s.state[herd.StateGone] = s.faint
	return s
}

// columns: the fixed ones; the task takes what is left. Narrow terminals drop the authority,
// then the engine.
type layout struct {
	name, engine, state, auth, time, queue, task int
}

func (m *Model) layout() layout {
	l := layout{name: 4, engine: 6, state: 5, auth: 4, time: 8, queue: 2}
	for _, name := range m.order {
		r := m.rows[name]
		l.name = max(l.name, min(24, ansi.StringWidth(name)))
		l.engine = max(l.engine, min(12, ansi.StringWidth(r.m.Engine)))
		l.state = max(l.state, ansi.StringWidth(stateText(r.m)))
		l.auth = max(l.auth, ansi.StringWidth(r.m.Authority))
		if r.m.Queued > 9 {
			l.queue = max(l.queue, len(fmt.Sprint(r.m.Queued)))
		}
	}
	fixed := func() int { return 2 + l.name + 1 + l.engine + 1 + l.state + 1 + l.auth + 1 + l.time + 1 + l.queue + 1 }
	if m.width-fixed() < 16 {
		l.auth = 0
	}
	if m.width-fixed() < 16 {
		l.engine = 0
	}
	l.task = max(0, m.width-fixed())
	return l
}

// stateText is a member's state as shown: with its sub-kind, or the exit code of a gone one.
func stateText(mem herd.Member) string {
	s := mem.State
	if mem.BlockedOn != "" {
		s += "/" + mem.BlockedOn
	}
	if mem.State == herd.StateGone && mem.ExitCode != nil {
		s += fmt.Sprintf(" (%d)", *mem.ExitCode)
	}
	return s
}

// cell pads or cuts s to exactly w columns (nothing when w is 0).
func cell(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-ansi.StringWidth(s)) + " "
}

// fit cuts s to w columns.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// Dur is a short duration for a narrow column: 42s, 7m, 1h05m, 3d4h.
func Dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// View draws the model.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "mosh herd top"
	return v
}

// Render is the screen as text (View's content), height lines of at most width columns.
func (m *Model) Render() string {
	st := m.styles()
	lines := make([]string, 0, m.height)
	if m.mode == modeHelp {
		lines = append(lines, m.helpLines(st)...)
	} else {
		lines = append(lines, m.headerLine(st), m.columnsLine(st))
		body := m.bodyLines(st)
		h := m.bodyHeight()
		if m.offset > len(body) {
			m.offset = 0
		}
		end := min(len(body), m.offset+h)
		lines = append(lines, body[m.offset:end]...)
		for len(lines) < 2+h {
			lines = append(lines, "")
		}
		lines = append(lines, m.statusLine(st), m.footerLine(st))
	}
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	for i, l := range lines {
		lines[i] = fit(l, m.width)
	}
	return strings.Join(lines, "\n")
}

// bodyHeight is the rows left for members: the screen less the header, the column titles, the
// status line and the footer.
func (m *Model) bodyHeight() int { return max(1, m.height-4) }

func (m *Model) headerLine(st styles) string {
	waiting := 0
	for _, r := range m.rows {
		if r.m.State == herd.StateBlocked {
			waiting++
		}
	}
	s := fmt.Sprintf("mosh herd top — %d members", len(m.rows))
	if waiting > 0 {
		s += fmt.Sprintf(" · %d waiting on you", waiting)
	}
	if m.filter != "" {
		s += fmt.Sprintf(" · filter %q (%d shown)", m.filter, len(m.order))
	}
	return st.header.Render(s)
}

func (m *Model) columnsLine(st styles) string {
	l := m.layout()
	s := "  " + cell("NAME", l.name) + cell("ENGINE", l.engine) + cell("STATE", l.state) + cell("AUTH", l.auth) +
		cell("IN STATE", l.time) + cell("Q", l.queue) + fit("TASK", l.task)
	s = strings.TrimRight(s, " ")
	return st.faint.Render(s)
}

// rowLines are one member's lines: its row and, when it is blocked, the question it asks.
func (m *Model) rowLines(st styles, l layout, r *row, now time.Time) []string {
	mem := r.m
	state := stateText(mem)
	q := ""
	if mem.Queued > 0 {
		q = fmt.Sprint(mem.Queued)
	}
	task := ""
	if r.task != nil {
		task = r.task.ID + " " + oneLine(r.task.Text)
	}
	in := ""
	if !r.since.IsZero() {
		in = Dur(now.Sub(r.since))
	}
	marker := "  "
	if mem.Name == m.sel {
		marker = "› "
	}
	stStyle, ok := st.state[mem.State]
	stateCell := cell(state, l.state)
	if ok {
		stateCell = stStyle.Render(stateCell)
	}
	line := marker + cell(mem.Name, l.name) + cell(mem.Engine, l.engine) + stateCell + cell(mem.Authority, l.auth) +
		cell(in, l.time) + cell(q, l.queue) + fit(task, l.task)
	if mem.Name == m.sel {
		line = st.selected.Render(ansi.Strip(line) + strings.Repeat(" ", max(0, m.width-ansi.StringWidth(line))))
	} else {
		line = strings.TrimRight(line, " ")
	}
	out := []string{line}
	if mem.State == herd.StateBlocked && mem.Question != nil {
		out = append(out, "    ? "+questionText(mem.Question))
	}
	return out
}

// questionText is a question on one line: its text, then its options.
func questionText(q *herd.Question) string {
	parts := []string{}
	if t := oneLine(q.Text); t != "" {
		parts = append(parts, t)
	}
	if len(q.Options) > 0 {
		opts := make([]string, len(q.Options))
		for i, o := range q.Options {
			opts[i] = "[" + o.Key + "] " + oneLine(o.Label)
		}
		parts = append(parts, strings.Join(opts, "  "))
	}
	if len(parts) == 0 {
		return "(" + q.Kind + ": the question could not be read; Enter attaches)"
	}
	return strings.Join(parts, "  ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// bodyLines are every shown member's lines, in order.
func (m *Model) bodyLines(st styles) []string {
	if len(m.order) == 0 {
		switch {
		case !m.loaded:
			return []string{"  reading the herd…"}
		case m.filter != "":
			return []string{fmt.Sprintf("  no member matches %q (Esc clears the filter)", m.filter)}
		}
		return []string{"  no members — start one: mosh herd run --name api -- claude"}
	}
	l := m.layout()
	now := m.opts.Now()
	out := make([]string, 0, len(m.order)+4)
	end := m.offset + m.bodyHeight()
	for _, name := range m.order {
		r := m.rows[name]
		if len(out) >= end {
			break // below the screen: not drawn
		}
		if n := rowHeight(r); len(out)+n <= m.offset {
			out = append(out, make([]string, n)...) // above the screen: placeholders, not drawn
			continue
		}
		out = append(out, m.rowLines(st, l, r, now)...)
	}
	return out
}

// rowHeight is how many lines a member takes: its row, and its question when it is blocked.
func rowHeight(r *row) int {
	if r.m.State == herd.StateBlocked && r.m.Question != nil {
		return 2
	}
	return 1
}

// scroll keeps the selected member's lines on screen.
func (m *Model) scroll() {
	if m.sel == "" {
		m.offset = 0
		return
	}
	first, n := 0, 1
	for _, name := range m.order {
		n = rowHeight(m.rows[name])
		if name == m.sel {
			break
		}
		first += n
	}
	h := m.bodyHeight()
	if first < m.offset {
		m.offset = first
	}
	if first+n > m.offset+h {
		m.offset = first + n - h
	}
	m.offset = max(0, m.offset)
}

func (m *Model) statusLine(st styles) string {
	switch m.mode {
	case modeFilter:
		return "filter: " + m.input.View()
	case modePrompt:
		return fmt.Sprintf("prompt %s (Enter sends, Esc cancels): %s", m.target, m.input.View())
	case modeAnswerText:
		return fmt.Sprintf("answer %s (Enter sends, Esc cancels): %s", m.target, m.input.View())
	case modeConfirmKill:
		return st.bold.Render(fmt.Sprintf("kill %s? its open task ends canceled [y/N]", m.target))
	case modeAnswerPick:
		opts := m.pickOptions()
		parts := make([]string, len(opts))
		for i, o := range opts {
			p := "[" + o.Key + "] " + oneLine(o.Label)
			if i == m.pick {
				p = st.selected.Render(p)
			}
			parts[i] = p
		}
		return fmt.Sprintf("answer %s (key, or ↑↓ Enter; Esc cancels): %s", m.target, strings.Join(parts, "  "))
	}
	if m.endedSet {
		msg := "the herd daemon's event stream ended"
		if m.ended != nil {
			msg += ": " + m.ended.Error()
		}
		return st.err.Render(msg + " — q quits")
	}
	if m.statusErr {
		return st.err.Render(m.status)
	}
	return m.status
}

func (m *Model) footerLine(st styles) string {
	w := m.waiting()
	s := "waiting on you: nobody"
	if w.Members > 0 {
		s = fmt.Sprintf("waiting on you: %d now, %s in all, longest %s", w.Members, ms(w.TotalMs), ms(w.LongestMs))
	}
	if w.Last24hMs != nil {
		s += " · last 24h " + ms(*w.Last24hMs)
	}
	return st.faint.Render(s + " · ? help · q quit")
}

func ms(v int64) string { return Dur(time.Duration(v) * time.Millisecond) }

var helpText = []string{
	"mosh herd top — the herd, live",
	"",
	"  ↑ ↓ k j      select a member        PgUp PgDn Home End  move faster",
	"  Enter        attach to it (detach with Ctrl-] comes back here)",
	"  a            answer it: pick an option of its menu, or type the answer",
	"  p            prompt it (queued until it is at rest)",
	"  x            interrupt its turn (the member stays)",
	"  K            kill it (asks first)",
	"  /            filter by name, engine, state or task; Esc clears",
	"  ?            this help (any key closes it)",
	"  q, Ctrl-C    quit",
	"",
	"Members waiting on you (blocked) come first, the longest waiting at the top.",
	"The footer sums the time they have waited; the rows follow the daemon's events.",
}

func (m *Model) helpLines(st styles) []string {
	out := make([]string, len(helpText))
	copy(out, helpText)
	out[0] = st.header.Render(out[0])
	return out
}
