package builtins

// The ledger vocabulary: herdTasks and herdTask, thin reads over herd.Client like the CLI's
// `mosh herd tasks` and `mosh herd task`. Read verbs: a failure (no daemon, unknown member or id,
// database trouble) resolves to [] or null; a missing or malformed argument throws with the usage.

import (
	"context"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/herd"
)

func init() {
	Register(&Verb{
		Name: "herdTasks", Group: "herd", Async: true, Read: true, Empty: EmptyList,
		Params: "name: string, opts?: { state?: string; since?: Date | number | string; limit?: number }", Result: []herd.Task{},
		Usage:   "herdTasks(name, {state, since, limit})",
		Summary: "a member's tasks, oldest first: [{id, text, state, open, submittedMs, durationMs, …}] ([] on error)",
		Detail: "Every prompt is a task (herdPrompt returns its id). state filters on the last recorded state\n" +
			"(open, working, blocked, done, idle, gone…); since is a Date, unix ms, or a duration back from\n" +
			"now (\"2h\"); limit keeps the newest N (default 100). herdTask(id) has the transitions and answer.",
		Bind: func(c *Call) (Action, error) {
			name, err := nameArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "state", "since", "limit"); err != nil {
				return Action{}, err
			}
			f := herd.TasksFilter{Member: name}
			if f.State, err = optString(c, o, "state"); err != nil {
				return Action{}, err
			}
			if o != nil {
				if v := o.Get("since"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					if f.Since, err = sinceValue(c, v); err != nil {
						return Action{}, err
					}
				}
				if v := o.Get("limit"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					n, ok := v.Export().(int64)
					if !ok || n <= 0 {
						return Action{}, c.Misuse("limit must be a whole number above 0")
					}
					f.Limit = int(n)
				}
			}
			s := herdSessionFor(c)
			return Action{Do: func(ctx context.Context) (any, error) {
				cl, err := s.get(ctx, true)
				if err != nil {
					return nil, err
				}
				return cl.Tasks(ctx, f)
			}}, nil
		},
	})

	Register(&Verb{
		Name: "herdTask", Group: "herd", Async: true, Read: true,
		Params: "id: string", Result: &herd.Task{},
		Usage:   "herdTask(id)",
		Summary: "one task with its transitions and answer: {id, member, text, state, transitions, artifact, …} (null on error)",
		Detail: "artifact is {text, source, truncated, chars}: the engine's own final message (source \"hook\") or\n" +
			"the text that appeared since the prompt (\"screen\"), the last 8000 characters.",
		Bind: func(c *Call) (Action, error) {
			id, err := taskIDArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			s := herdSessionFor(c)
			return Action{Do: func(ctx context.Context) (any, error) {
				cl, err := s.get(ctx, true)
				if err != nil {
					return nil, err
				}
				return cl.Task(ctx, id)
			}}, nil
		},
	})
}

// taskIDArg reads argument i as a task id (t-N).
func taskIDArg(c *Call, i int) (string, error) {
	id, err := c.String(i, "the task id (t-N)")
	if err != nil {
		return "", err
	}
	if err := herd.CheckTaskID(id); err != nil {
		return "", c.Misuse("%q is not a task id: ids look like t-12", id)
	}
	return id, nil
}

// sinceValue reads a since option: a Date, unix milliseconds, or a duration string back from now.
func sinceValue(c *Call, v goja.Value) (time.Time, error) {
	switch x := v.Export().(type) {
	case time.Time:
		return x, nil
	case int64:
		return time.UnixMilli(x), nil
	case float64:
		return time.UnixMilli(int64(x)), nil
	case string:
		d, err := time.ParseDuration(x)
		if err == nil && d > 0 {
			return time.Now().Add(-d), nil
		}
		if t, err := time.Parse(time.RFC3339, x); err == nil {
			return t, nil
		}
	}
	return time.Time{}, c.Misuse("since must be a Date, unix milliseconds, a duration like \"2h\" or an RFC3339 time")
}
