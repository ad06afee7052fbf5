//go:build !windows

package main

// The ledger verbs: `mosh herd tasks|task|log|stats`, thin adapters over herd.Client's Tasks,
// Task, Log and Stats. Same output rules as the other herd verbs: --json prints the herd types'
// lowerCamel JSON (docs/protocol.md), a table on a terminal (relative times, human durations), and
// tab-separated rows off one (RFC3339 times, durations in milliseconds). An unknown task id or
// member exits 3; a malformed one exits 1.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// tasksFamily: the ledger reads `mosh herd tasks|task|log|stats`.
func tasksFamily(gs *globalState) []*cobra.Command {
	h := newHerdCLI(gs)
	gs.parentCommand("herd").AddCommand(h.tasksCmd(), h.taskCmd(), h.logCmd(), h.statsCmd())
	return nil
}

// parseSince reads --since: a duration back from now (10m, 2h, a bare number of seconds) or an
// instant (RFC3339, or a date YYYY-MM-DD in local time). Empty means no bound.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	d, err := parseCLIDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, usageErr("--since %q: give a duration back from now (30m, 2h, 7d is 168h) or a time (2026-05-01T09:00:00Z, 2026-05-01)", s)
	}
	return now.Add(-d), nil
}

// fmtDur is a duration for people: 850ms, 42s, 4m12s, 3h05m, 2d04h.
func fmtDur(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(ms, 10) + "ms"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// dur renders milliseconds in the style: human on a terminal, the number off one.
func (st outputStyle) dur(ms int64) string {
	if !st.tty {
		return strconv.FormatInt(ms, 10)
	}
	return fmtDur(ms)
}

// oneLine shortens text to one line of at most n characters for a table cell.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ---- tasks ------------------------------------------------------------------------------------

func (h *herdCLI) tasksCmd() *cobra.Command {
	var state, since string
	var limit int
	cmd := &cobra.Command{
		Use:   "tasks [NAME] [--state S] [--since D] [--limit N]",
		Short: "every prompt is a task: list them (id, time, state, duration, text), oldest first",
		Example: `  mosh herd tasks                     # the newest 100 tasks of the herd
  mosh herd tasks api --state open     # api's unfinished prompts
  mosh herd tasks api --since 2h --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := herd.TasksFilter{State: state, Limit: limit}
			if len(args) == 1 {
				if err := checkNames(args); err != nil {
					return err
				}
				f.Member = args[0]
			}
			if limit < 0 {
				return usageErr("--limit must be 0 (the default 100) or more")
			}
			var err error
			if f.Since, err = parseSince(since, time.Now()); err != nil {
				return err
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				// --json: the daemon's bytes, indented once.
				return output(cmd, h.stdout, rawResult(func() (json.RawMessage, error) { return c.TasksJSON(ctx, f) }), func() error {
					ts, err := c.Tasks(ctx, f)
					if err != nil {
						return err
					}
					return h.writeTasks(ts, f.Member == "")
				})
			})
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only tasks whose last state is this: open, working, blocked, done, idle, gone…")
	cmd.Flags().StringVar(&since, "since", "", "only tasks submitted since: a duration back (2h) or a time (RFC3339, YYYY-MM-DD)")
	cmd.Flags().IntVar(&limit, "limit", 0, "the newest N tasks (default 100)")
	jsonFlag(cmd, "print the tasks as a JSON array")
	return cmd
}

func (h *herdCLI) writeTasks(ts []herd.Task, withMember bool) error {
	st := h.style()
	if len(ts) == 0 {
		if st.tty {
			fmt.Fprintln(h.stderr, "no tasks — every prompt becomes one: mosh herd prompt NAME \"…\"")
		}
		return nil
	}
	// Off a terminal the columns never change with the arguments, so scripts can cut them.
	header := []string{"id", "submitted", "member", "state", "duration", "text"}
	if st.tty && !withMember {
		header = []string{"id", "submitted", "state", "duration", "text"}
	}
	tb := newTable(header...)
	open := 0
	for _, t := range ts {
		state := stateLabel(t.State, t.BlockedOn)
		if t.Open {
			open++
			if st.tty {
				state += " …"
			}
		}
		text := t.Text
		if st.tty {
			text = strconv.Quote(oneLine(t.Text, 60))
		}
		row := []cell{cell{Text: t.ID, Color: ansiBold}, plain(st.fmtTime(t.SubmittedMs))}
		if !st.tty || withMember {
			row = append(row, plain(t.Member))
		}
		row = append(row, cell{Text: state, Color: stateColor(t.State)}, plain(st.dur(t.DurationMs)), plain(text))
		tb.add(row...)
	}
	if err := tb.write(h.stdout, st); err != nil {
		return err
	}
	if st.tty && open > 0 {
		_, err := fmt.Fprintln(h.stdout, st.paint(ansiDim, fmt.Sprintf("%d still open (…) — mosh herd task ID shows where each stands", open)))
		return err
	}
	return nil
}

// ---- task -------------------------------------------------------------------------------------

func (h *herdCLI) taskCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task ID",
		Short: "one task: what was asked, every state it went through, and what came back",
		Example: `  mosh herd task t-12
  mosh herd task t-12 --json | jq -r .artifact.text`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := strings.TrimSpace(args[0])
			if err := herd.CheckTaskID(id); err != nil {
				return err
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				return output(cmd, h.stdout, rawResult(func() (json.RawMessage, error) { return c.TaskJSON(ctx, id) }), func() error {
					t, err := c.Task(ctx, id)
					if err != nil {
						return err
					}
					return h.writeTask(t)
				})
			})
		},
	}
	jsonFlag(cmd, "print the task, its transitions and its artifact as JSON")
	return cmd
}

func (h *herdCLI) writeTask(t *herd.Task) error {
	st := h.style()
	state := stateLabel(t.State, t.BlockedOn)
	if t.Open {
		state += " (open)"
	}
	kv := [][2]string{
		{"id", t.ID},
		{"member", t.Member},
		{"text", t.Text},
		{"submitted", st.fmtTime(t.SubmittedMs)},
		{"state at submit", orDash(t.StateAtSubmit)},
		{"state", state},
		{"duration", st.dur(t.DurationMs)},
	}
	if t.EndedMs > 0 {
		kv = append(kv, [2]string{"ended", st.fmtTime(t.EndedMs)})
	}
	if t.Note != "" {
		kv = append(kv, [2]string{"note", t.Note})
	}
	if t.RemoteTaskID != "" {
		kv = append(kv, [2]string{"remote task", t.RemoteTaskID})
	}
	if st.tty {
		kv[2][1] = strconv.Quote(t.Text)
	}
	if err := h.writeFields(kv); err != nil {
		return err
	}
	if len(t.Transitions) > 0 {
		if st.tty {
			fmt.Fprintln(h.stdout, "\ntransitions:")
		}
		tb := newTable("at", "after", "state", "held", "authority", "note")
		for i, tr := range t.Transitions {
			held := "-"
			if i+1 < len(t.Transitions) {
				held = st.dur(t.Transitions[i+1].AtMs - tr.AtMs)
			} else if !t.Open {
				held = "-"
			} else {
				held = st.dur(time.Since(time.UnixMilli(tr.AtMs)).Milliseconds())
			}
			at := st.fmtTime(tr.AtMs)
			if st.tty {
				at = time.UnixMilli(tr.AtMs).Local().Format("15:04:05")
			}
			label := stateLabel(tr.State, tr.BlockedOn)
			if st.tty && tr.State == herd.StateBlocked {
				label += " (you)"
			}
			tb.add(plain(at), plain("+"+st.dur(tr.AtMs-t.SubmittedMs)), cell{Text: label, Color: stateColor(tr.State)},
				plain(held), plain(orDash(tr.Authority)), plain(orDash(tr.Note)))
		}
		if err := tb.write(h.stdout, st); err != nil {
			return err
		}
	}
	return h.writeArtifact(t.Artifact, t.Open)
}

func (h *herdCLI) writeArtifact(a *herd.TaskArtifact, open bool) error {
	st := h.style()
	if a == nil {
		if st.tty && open {
			_, err := fmt.Fprintln(h.stdout, st.paint(ansiDim, "\nno answer yet: the task is still open"))
			return err
		}
		return nil
	}
	what := fmt.Sprintf("%d chars", a.Chars)
	if a.Truncated {
		what = fmt.Sprintf("last %d of %d chars", len([]rune(a.Text)), a.Chars)
	}
	var src string
	switch a.Source {
	case ledger.SourceHook:
		src = "the engine's final message"
	case ledger.SourceScreen:
		src = "the text that appeared since the prompt"
	default:
		src = a.Source
	}
	if st.tty {
		fmt.Fprintf(h.stdout, "\n%s (%s, %s):\n", st.paint(ansiBold, "answer"), src, what)
	} else {
		fmt.Fprintf(h.stdout, "\nartifact\t%s\t%d\t%t\n", a.Source, a.Chars, a.Truncated)
	}
	// The answer keeps its lines and tabs; any other control character is shown escaped.
	text := escapeControls(strings.TrimRight(a.Text, "\n"), "\n\t")
	_, err := io.WriteString(h.stdout, text+"\n")
	return err
}

// ---- log --------------------------------------------------------------------------------------

func (h *herdCLI) logCmd() *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "log NAME [--since D]",
		Short: "a member's timestamped state history, tasks or not",
		Example: `  mosh herd log api
  mosh herd log api --since 1h --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNames(args); err != nil {
				return err
			}
			t, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Log(ctx, args[0], t)
				if err != nil {
					return err
				}
				if r.Transitions == nil {
					r.Transitions = []herd.TaskTransition{}
				}
				return output(cmd, h.stdout, r, func() error { return h.writeLog(r) })
			})
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only changes since: a duration back (2h) or a time (RFC3339, YYYY-MM-DD)")
	jsonFlag(cmd, "print {name, transitions} as JSON")
	return cmd
}

func (h *herdCLI) writeLog(r *herd.LogResult) error {
	st := h.style()
	if len(r.Transitions) == 0 {
		if st.tty {
			fmt.Fprintf(h.stderr, "no state changes recorded for %s in that window\n", r.Name)
		}
		return nil
	}
	tb := newTable("at", "state", "held", "authority", "task", "note")
	for i, tr := range r.Transitions {
		held := "-"
		if i+1 < len(r.Transitions) {
			held = st.dur(r.Transitions[i+1].AtMs - tr.AtMs)
		}
		at := st.fmtTime(tr.AtMs)
		if st.tty {
			at = time.UnixMilli(tr.AtMs).Local().Format("Jan 02 15:04:05")
		}
		tb.add(plain(at), cell{Text: stateLabel(tr.State, tr.BlockedOn), Color: stateColor(tr.State)}, plain(held),
			plain(orDash(tr.Authority)), plain(orDash(tr.Task)), plain(orDash(tr.Note)))
	}
	return tb.write(h.stdout, st)
}

// ---- stats ------------------------------------------------------------------------------------

func (h *herdCLI) statsCmd() *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "stats [NAME] [--since D]",
		Short: "time in each state (blocked = waiting on you), task count and median task duration",
		Example: `  mosh herd stats                     # every member and the herd total
  mosh herd stats api --since 24h --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNames(args); err != nil {
				return err
			}
			t, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Stats(ctx, name, t)
				if err != nil {
					return err
				}
				if r.Members == nil {
					r.Members = []herd.MemberStats{}
				}
				return output(cmd, h.stdout, r, func() error { return h.writeStats(r) })
			})
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only the window since: a duration back (2h) or a time (RFC3339, YYYY-MM-DD)")
	jsonFlag(cmd, "print {members, total} as JSON")
	return cmd
}

// statsStates are the columns of the stats table, in the order a turn goes through them.
var statsStates = []string{herd.StateWorking, herd.StateBlocked, herd.StateIdle, herd.StateDone, herd.StateUnknown, herd.StateGone}

func (h *herdCLI) writeStats(r *herd.StatsResult) error {
	st := h.style()
	if len(r.Members) == 0 {
		if st.tty {
			fmt.Fprintln(h.stderr, "no history yet — members' states are recorded as they change")
		}
		return nil
	}
	tb := newTable("name", "tasks", "median", "working", "waiting on you", "idle", "done", "unknown", "gone", "other")
	row := func(s herd.MemberStats, name string) {
		cells := []cell{{Text: name, Color: ansiBold}, plain(strconv.Itoa(s.Tasks)), plain(st.dur(s.MedianDurationMs))}
		var other int64
		known := map[string]bool{}
		for _, k := range statsStates {
			known[k] = true
		}
		for k, v := range s.TotalsMs {
			if !known[k] {
				other += v
			}
		}
		for _, k := range statsStates {
			c := plain(st.dur(s.TotalsMs[k]))
			if k == herd.StateBlocked && s.TotalsMs[k] > 0 {
				c.Color = ansiYellow
			}
			cells = append(cells, c)
		}
		cells = append(cells, plain(st.dur(other)))
		tb.add(cells...)
	}
	ms := append([]herd.MemberStats(nil), r.Members...)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	for _, s := range ms {
		row(s, s.Name)
	}
	if r.Total != nil && len(ms) > 1 {
		row(*r.Total, "(herd)")
	}
	if err := tb.write(h.stdout, st); err != nil {
		return err
	}
	if st.tty {
		sum := ms[0]
		if r.Total != nil && len(ms) > 1 {
			sum = *r.Total
		}
		if sum.HumanLatencyMs > 0 {
			var who []string
			for _, s := range ms {
				if s.HumanLatencyMs > 0 && len(ms) > 1 {
					who = append(who, s.Name+" "+fmtDur(s.HumanLatencyMs))
				}
			}
			line := fmt.Sprintf("waiting on you: %s over %d blocked spell(s)", fmtDur(sum.HumanLatencyMs), sum.BlockedSpells)
			if len(who) > 0 {
				line += " (" + strings.Join(who, ", ") + ")"
			}
			_, err := fmt.Fprintln(h.stdout, st.paint(ansiYellow, line+" — time the herd waited on a person"))
			return err
		}
	}
	return nil
}
