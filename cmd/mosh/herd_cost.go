//go:build !windows

package main

// `mosh herd cost`: tokens and money per member and per task, read from the engines' own records
// by herd/cost (Claude Code's transcripts, Codex's rollouts, the usage ai() calls stated). The
// roster and the tasks come from herd.Client; the records are read under this command's
// environment (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME), the one the members inherited.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/cost"
)

func (h *herdCLI) costCmd() *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "cost [NAME…] [--since D] [--json]",
		Short: "tokens and money per member and per task, from the engines' own records",
		Long: `Reads what each member's model calls used from its engine's own records, never from the screen:
Claude Code's session transcripts (money as Claude Code counts it), Codex's rollout files (tokens;
money only at a price you give in $MOSH_HOME/herd/prices.json), and the usage an ai() call's
engine or API stated. A member whose engine records nothing says so. herd/cost/records.json says
where each engine keeps its records.`,
		Example: `  mosh herd cost
  mosh herd cost api web --since 24h
  mosh herd cost --json | jq '.total.costUSD'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNames(args); err != nil {
				return err
			}
			now := time.Now()
			t, err := parseSince(since, now)
			if err != nil {
				return err
			}
			home, err := h.home()
			if err != nil {
				return err
			}
			table, err := cost.Load(herd.HerdDir(home))
			if err != nil {
				return exitcode.New(exitcode.Usage, "%v", err)
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := h.costReport(ctx, c, table, args, t, now)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error { return h.writeCost(r) })
			})
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only what was used since: a duration back (2h) or a time (RFC3339, YYYY-MM-DD)")
	jsonFlag(cmd, "print {members: [{name, engine, tokens, totalTokens, costUSD, costSource, note, tasks}], total} as JSON")
	return cmd
}

func (h *herdCLI) costReport(ctx context.Context, c *herd.Client, table cost.Table, names []string, since, now time.Time) (*cost.Report, error) {
	members, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	tasks, err := c.Tasks(ctx, herd.TasksFilter{Limit: -1})
	if err != nil {
		return nil, err
	}
	byName := map[string]*cost.Member{}
	for _, m := range members {
		byName[m.Name] = &cost.Member{Name: m.Name, Engine: m.Engine, Cwd: m.Cwd, CreatedMs: m.CreatedMs}
	}
	for _, tk := range tasks {
		m := byName[tk.Member]
		if m == nil { // an ai() call's member (ai-claude), or one pruned since: its tasks remain
			m = &cost.Member{Name: tk.Member, Engine: tk.Member}
			byName[tk.Member] = m
		}
		m.Tasks = append(m.Tasks, cost.Task{ID: tk.ID, Text: tk.Text, SubmittedMs: tk.SubmittedMs, EndedMs: tk.EndedMs, Note: tk.Note})
	}
	want := names
	if len(want) == 0 {
		for n := range byName {
			want = append(want, n)
		}
		sort.Strings(want)
	}
	r := &cost.Report{Members: []cost.MemberCost{}}
	if !since.IsZero() {
		r.SinceMs = since.UnixMilli()
	}
	for _, n := range want {
		m := byName[n]
		if m == nil {
			return nil, exitcode.New(exitcode.Gone, "no member named %s and no task of one: `mosh ps` lists the members", n)
		}
		r.Members = append(r.Members, table.Member(*m, h.getenv, r.SinceMs, now.UnixMilli()))
	}
	r.Totals()
	return r, nil
}

// usd is money for a table: "-" when unknown.
func usd(v *float64) string {
	if v == nil {
		return "-"
	}
	if *v != 0 && *v < 0.01 {
		return fmt.Sprintf("$%.6f", *v)
	}
	return fmt.Sprintf("$%.2f", *v)
}

func (h *herdCLI) writeCost(r *cost.Report) error {
	st := h.style()
	if len(r.Members) == 0 {
		if st.tty {
			fmt.Fprintln(h.stderr, "no members and no tasks yet")
		}
		return nil
	}
	tb := newTable("name", "task", "tokens", "input", "output", "cache", "cost", "note")
	n := func(v int64) cell { return plain(strconv.FormatInt(v, 10)) }
	for _, m := range r.Members {
		note := m.Note
		if note == "" && m.CostSource != "" {
			note = "cost from " + m.CostSource
		}
		tb.add(cell{Text: m.Name, Color: ansiBold}, plain("-"), n(m.TotalTokens), n(m.Tokens.Input), n(m.Tokens.Output),
			n(m.Tokens.CacheRead+m.Tokens.CacheWrite), plain(usd(m.CostUSD)), plain(note))
		for _, tk := range m.Tasks {
			tb.add(plain(m.Name), plain(tk.ID), n(tk.TotalTokens), n(tk.Tokens.Input), n(tk.Tokens.Output),
				n(tk.Tokens.CacheRead+tk.Tokens.CacheWrite), plain(usd(tk.CostUSD)), plain(oneLine(tk.Text, 50)))
		}
	}
	t := r.Total
	tb.add(cell{Text: "total", Color: ansiBold}, plain("-"), n(t.TotalTokens), n(t.Tokens.Input), n(t.Tokens.Output),
		n(t.Tokens.CacheRead+t.Tokens.CacheWrite), plain(usd(t.CostUSD)), plain(""))
	return tb.write(h.stdout, st)
}
