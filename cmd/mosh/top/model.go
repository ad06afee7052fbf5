// Package top is the model of `mosh herd top`, the herd's live view in a terminal: a Bubble Tea
// model (Elm-style: Update folds messages into the model, View draws it) fed by the daemon's
// event stream (feed.go) and acting through an Actions value, so it is tested without a terminal
// or a daemon: golden screens from View at fixed sizes, keys as messages.
//
// One row per member: name, engine, state and sub-kind, authority, time in state, the open task
// and the queue's length, and under a blocked member the question it asks. The members waiting
// on the person come first (the longest waiting at the top); the footer sums that waiting time.
package top

import (
	"context"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mosh-dev/mosh/herd"
)

// Actions are what top does to a member; cmd/mosh implements them over herd.Client. Each
// returns an error that says what to do; top shows it on its status line.
type Actions interface {
	// Answer types a blocked member's answer (an option's key, or text) on purpose.
	Answer(ctx context.Context, name, text string) error
	// Prompt queues a prompt for the member (typed when it is next at rest).
	Prompt(ctx context.Context, name, text string) error
	// Interrupt stops the member's turn, not the member.
	Interrupt(ctx context.Context, name string) error
	// Kill ends the member.
	Kill(ctx context.Context, name string) error
	// Attach is the command that hands the terminal to the member until it detaches; nil when
	// this terminal cannot attach.
	Attach(name string) tea.ExecCommand
}

// Options configure a Model.
type Options struct {
	Actions Actions
	// Feed is where snapshots and events come from (nil: none, as in a golden test).
	Feed *Feed
	// NoColor draws without colours (NO_COLOR, a dumb terminal): bold and reverse video only.
	NoColor bool
	// Now is the clock for time in state (default time.Now).
	Now func() time.Time
	// DryRun: actions (answer, prompt, interrupt, kill, attach) say on the status line what they
	// would do, and do nothing.
	DryRun bool
	// Width and Height are the initial size (a WindowSizeMsg replaces them).
	Width, Height int
}

// SnapshotMsg is the herd as List read it, with the open tasks and the herd's waiting-on-you
// time over the last day (-1: unknown).
type SnapshotMsg struct {
	Members   []herd.Member
	Open      []herd.Task
	WaitingMs int64
	// Err: the roster could not be read; the rows stay as they were.
	Err error
}

// EventsMsg are state events in the daemon's order.
type EventsMsg []herd.Event

// FeedEndedMsg says the event stream ended (the daemon stopped, the connection broke).
type FeedEndedMsg struct{ Err error }

// actionMsg is an action's outcome.
type actionMsg struct {
	verb, name string
	err        error
	note       string // what to say on success (default "VERB NAME: done")
}

// tickMsg redraws times in state once a second (a repaint, not a poll: no request is made).
type tickMsg time.Time

type mode int

const (
	modeNormal mode = iota
	modeFilter
	modePrompt
	modeAnswerText
	modeAnswerPick
	modeConfirmKill
	modeHelp
)

// row is one member as top knows it.
type row struct {
	m     herd.Member
	since time.Time // when its state began
	task  *herd.Task
}

// Model is top's state.
type Model struct {
	opts   Options
	rows   map[string]*row
	order  []string // the shown members, sorted and filtered
	sel    string   // the selected member's name
	offset int      // the first body line shown
	width  int
	height int

	mode   mode
	target string // the member an open prompt, answer or confirmation is for
	input  textinput.Model
	filter string
	pick   int // the highlighted option in modeAnswerPick

	status    string
	statusErr bool
	ended     error // the feed's end, shown until quit
	endedSet  bool
	waitingMs int64 // the herd's waiting-on-you time over the last day, -1 unknown
	loaded    bool
}

// New returns a model; Init starts the feed.
func New(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	in := textinput.New()
	in.Prompt = ""
	st := in.Styles()
	st.Cursor.Blink = false // a steady cursor: no timer runs while a line is typed
	in.SetStyles(st)
	m := &Model{opts: opts, rows: map[string]*row{}, input: in, width: opts.Width, height: opts.Height, waitingMs: -1}
	if m.width <= 0 {
		m.width = 80
	}
	if m.height <= 0 {
		m.height = 24
	}
	return m
}

// Init starts listening to the feed and the clock.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.listen(), tick())
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) listen() tea.Cmd {
	if m.opts.Feed == nil {
		return nil
	}
	return m.opts.Feed.Next
}

// Update folds one message into the model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.SetWidth(max(10, m.width-30))
		m.scroll()
		return m, nil
	case SnapshotMsg:
		if msg.Err != nil {
			m.setStatus(true, "cannot read the herd: %v", msg.Err)
			return m, m.listen()
		}
		m.applySnapshot(msg)
		return m, m.listen()
	case EventsMsg:
		m.applyEvents(msg)
		return m, m.listen()
	case FeedEndedMsg:
		m.ended, m.endedSet = msg.Err, true
		return m, m.listen() // returns nil once the feed has closed
	case tickMsg:
		return m, tick()
	case actionMsg:
		switch {
		case msg.err != nil:
			m.setStatus(true, "%s %s: %v", msg.verb, msg.name, msg.err)
		case msg.note != "":
			m.setStatus(false, "%s", msg.note)
		default:
			m.setStatus(false, "%s %s: done", msg.verb, msg.name)
		}
		if m.opts.Feed != nil {
			m.opts.Feed.Refresh() // a prompt's queue length moves without a state event
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if m.inputMode() {
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(msg)
			return m, cmd
		}
	}
	return m, nil
}

func (m *Model) inputMode() bool {
	return m.mode == modeFilter || m.mode == modePrompt || m.mode == modeAnswerText
}

func (m *Model) setStatus(isErr bool, format string, args ...any) {
	m.status, m.statusErr = sprintf(format, args...), isErr
}

func (m *Model) applySnapshot(s SnapshotMsg) {
	m.loaded = true
	if s.WaitingMs >= 0 {
		m.waitingMs = s.WaitingMs
	}
	seen := make(map[string]bool, len(s.Members))
	open := map[string]*herd.Task{}
	for i := range s.Open {
		t := &s.Open[i]
		if cur := open[t.Member]; cur == nil || (cur.Queued && !t.Queued) || (cur.Queued == t.Queued && t.SubmittedMs > cur.SubmittedMs) {
			open[t.Member] = t // the running task before a queued one; the newest otherwise
		}
	}
	for _, mem := range s.Members {
		seen[mem.Name] = true
		r := m.rows[mem.Name]
		if r == nil {
			r = &row{}
			m.rows[mem.Name] = r
		}
		r.m = mem
		if mem.StateSinceMs > 0 {
			r.since = time.UnixMilli(mem.StateSinceMs)
		} else if r.since.IsZero() {
			r.since = time.UnixMilli(mem.CreatedMs)
		}
		r.task = open[mem.Name]
	}
	for name := range m.rows {
		if !seen[name] {
			delete(m.rows, name)
		}
	}
	m.resort()
}

func (m *Model) applyEvents(evs EventsMsg) {
	for _, e := range evs {
		switch e.Type {
		case herd.EventRemoved:
			delete(m.rows, e.Name)
		case herd.EventQuestion:
			if r := m.rows[e.Name]; r != nil && r.m.State == herd.StateBlocked {
				r.m.Question = e.Question
			}
		case herd.EventAdded, herd.EventState:
			r := m.rows[e.Name]
			if r == nil {
				r = &row{m: herd.Member{Name: e.Name, Alive: true}}
				m.rows[e.Name] = r
			}
			if e.State == "" {
				continue
			}
			if e.State != r.m.State || r.since.IsZero() {
				r.since = time.UnixMilli(e.AtMs)
			}
			r.m.State, r.m.BlockedOn = e.State, e.BlockedOn
			if e.Authority != "" {
				r.m.Authority = e.Authority
			}
			switch {
			case e.State != herd.StateBlocked:
				r.m.Question = nil
			case e.Question != nil:
				r.m.Question = e.Question
			}
			if e.ExitCode != nil {
				r.m.ExitCode, r.m.Alive = e.ExitCode, false
			}
			if e.TaskEnded {
				r.task = nil
			}
		}
	}
	m.resort()
}

// stateRank orders the rows: the members waiting on the person first, then those at work, at
// rest, unknown, and gone.
func stateRank(s string) int {
	switch s {
	case herd.StateBlocked:
		return 0
	case herd.StateWorking:
		return 1
	case herd.StateDone:
		return 2
	case herd.StateIdle:
		return 3
	case herd.StateGone:
		return 5
	}
	return 4
}

func (m *Model) resort() {
	m.order = m.order[:0]
	f := strings.ToLower(m.filter)
	for name, r := range m.rows {
		if f != "" && !matches(r, f) {
			continue
		}
		m.order = append(m.order, name)
	}
	sort.Slice(m.order, func(i, j int) bool {
		a, b := m.rows[m.order[i]], m.rows[m.order[j]]
		ra, rb := stateRank(a.m.State), stateRank(b.m.State)
		if ra != rb {
			return ra < rb
		}
		if ra == 0 && !a.since.Equal(b.since) {
			return a.since.Before(b.since) // the longest waiting first
		}
		return a.m.Name < b.m.Name
	})
	if m.sel == "" || m.rows[m.sel] == nil || !contains(m.order, m.sel) {
		m.sel = ""
		if len(m.order) > 0 {
			m.sel = m.order[0]
		}
	}
	m.scroll()
}

func matches(r *row, f string) bool {
	hay := strings.ToLower(r.m.Name + " " + r.m.Engine + " " + r.m.State + " " + r.m.BlockedOn)
	if r.task != nil {
		hay += " " + strings.ToLower(r.task.Text)
	}
	return strings.Contains(hay, f)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (m *Model) index(name string) int {
	for i, n := range m.order {
		if n == name {
			return i
		}
	}
	return -1
}

func (m *Model) move(delta int) {
	if len(m.order) == 0 {
		return
	}
	i := m.index(m.sel) + delta
	i = max(0, min(i, len(m.order)-1))
	m.sel = m.order[i]
	m.scroll()
}

// Selected is the selected member's name ("" when none).
func (m *Model) Selected() string { return m.sel }

// Waiting is the herd's waiting-on-you time: the members blocked now, the time they have waited
// so far (summed, and the longest), and the blocked time over the last day as the ledger has it.
type Waiting struct {
	Members   int    `json:"members"`
	TotalMs   int64  `json:"totalMs"`
	LongestMs int64  `json:"longestMs"`
	Last24hMs *int64 `json:"last24hMs,omitempty"`
}

func (m *Model) waiting() Waiting {
	now := m.opts.Now()
	var w Waiting
	for _, r := range m.rows {
		if r.m.State != herd.StateBlocked || r.since.IsZero() {
			continue
		}
		d := now.Sub(r.since).Milliseconds()
		w.Members++
		w.TotalMs += d
		w.LongestMs = max(w.LongestMs, d)
	}
	if m.waitingMs >= 0 {
		v := m.waitingMs
		w.Last24hMs = &v
	}
	return w
}

// OnceRow is one member as top shows it.
type OnceRow struct {
	herd.Member
	InStateMs int64      `json:"inStateMs"`
	Task      *herd.Task `json:"task,omitempty"`
}

// OnceResult is `top --json`: the rows in top's order and the waiting-on-you times.
type OnceResult struct {
	Members      []OnceRow `json:"members"`
	WaitingOnYou Waiting   `json:"waitingOnYou"`
}

func (m *Model) result() *OnceResult {
	now := m.opts.Now()
	out := &OnceResult{Members: []OnceRow{}, WaitingOnYou: m.waiting()}
	for _, name := range m.order {
		r := m.rows[name]
		out.Members = append(out.Members, OnceRow{Member: r.m, InStateMs: now.Sub(r.since).Milliseconds(), Task: r.task})
	}
	return out
}
