package builtins

// herdTaskCost: one task's tokens and money, read by herd/cost from its engine's own records, as
// `mosh herd cost` reads them (the eval's per-row cost). The task comes from herd.Client; the
// records are read under the script's environment (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME).

import (
	"context"
	"fmt"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/cost"
)

// taskCost is herdTaskCost's result. Tokens and TotalTokens are null when no record of the
// engine falls within the task, CostUSD when there is no money for it; Note says why.
type taskCost struct {
	Task        string       `json:"task"`
	Member      string       `json:"member"`
	Engine      string       `json:"engine"`
	Tokens      *cost.Tokens `json:"tokens"`
	TotalTokens *int64       `json:"totalTokens"`
	Models      []string     `json:"models"`
	CostUSD     *float64     `json:"costUSD"`
	CostSource  string       `json:"costSource,omitempty"`
	Note        string       `json:"note,omitempty"`
}

func init() {
	Register(&Verb{
		Name: "herdTaskCost", Group: "herd", Async: true, Read: true,
		Params: "id: string, opts?: { engine?: string; cwd?: string }", Result: &taskCost{},
		Usage:   "herdTaskCost(id, {engine, cwd})",
		Summary: "one task's tokens and money from its engine's own records: {task, tokens, totalTokens, costUSD, costSource, note} (null on error)",
		Detail: "Read as `mosh herd cost` reads them (Claude Code's transcripts, Codex's rollouts, the usage an ai()\n" +
			"call stated), never estimated. engine and cwd are the member's (from the roster when left out: give\n" +
			"them for a member killed since). tokens and totalTokens are null when no record of the engine falls\n" +
			"within the task, costUSD when the engine records no money and there is no price for its model;\n" +
			"note says why.",
		Bind: func(c *Call) (Action, error) {
			id, err := taskIDArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "engine", "cwd"); err != nil {
				return Action{}, err
			}
			engine, err := optString(c, o, "engine")
			if err != nil {
				return Action{}, err
			}
			cwd, err := optString(c, o, "cwd")
			if err != nil {
				return Action{}, err
			}
			s := herdSessionFor(c)
			return Action{Do: func(ctx context.Context) (any, error) {
				cl, err := s.get(ctx, true)
				if err != nil {
					return nil, err
				}
				return readTaskCost(ctx, cl, s.getenv, id, engine, cwd, time.Now())
			}}, nil
		},
	})
}

// readTaskCost reads task id's use. A member that is not on the roster and not named by engine
// is taken for an ai() call's (its tasks' notes state their usage), as `mosh herd cost` does.
func readTaskCost(ctx context.Context, cl *herd.Client, getenv func(string) string, id, engine, cwd string, now time.Time) (*taskCost, error) {
	t, err := cl.Task(ctx, id)
	if err != nil {
		return nil, err
	}
	if engine == "" || cwd == "" {
		members, err := cl.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range members {
			if m.Name == t.Member {
				engine = orDefault(engine, m.Engine)
				cwd = orDefault(cwd, m.Cwd)
			}
		}
		engine = orDefault(engine, t.Member)
	}
	table, err := cost.Load(herd.HerdDir(cl.Home()))
	if err != nil {
		return nil, err
	}
	m := cost.Member{Name: t.Member, Engine: engine, Cwd: cwd, CreatedMs: t.SubmittedMs,
		Tasks: []cost.Task{{ID: t.ID, Text: t.Text, SubmittedMs: t.SubmittedMs, EndedMs: t.EndedMs, Note: t.Note}}}
	mc := table.Member(m, getenv, 0, now.UnixMilli())
	out := &taskCost{Task: t.ID, Member: t.Member, Engine: engine, Models: []string{}, Note: mc.Note}
	if len(mc.Tasks) != 1 {
		return nil, fmt.Errorf("%s: no use read for the task", id)
	}
	s := mc.Tasks[0].Sum
	if s.Responses == 0 && s.CostUSD == nil {
		if out.Note == "" {
			out.Note = fmt.Sprintf("no record of %s's model calls falls within %s", engine, id)
		}
		return out, nil
	}
	out.Tokens, out.TotalTokens = &s.Tokens, &s.TotalTokens
	if s.Models != nil {
		out.Models = s.Models
	}
	out.CostUSD, out.CostSource = s.CostUSD, s.CostSource
	if s.CostUSD != nil {
		out.Note = ""
	} else if out.Note == "" {
		out.Note = fmt.Sprintf("%s records tokens, not money, for %s", engine, id)
	}
	return out, nil
}
