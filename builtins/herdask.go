package builtins

import (
	"context"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// herdAsk is `mosh herd prompt NAME TEXT --wait` for scripts: the prompt and the wait for ITS
// turn in one daemon call. Unlike herdPrompt followed by herdWait, a prompt that waited in the
// member's queue is followed until its own task has run (the daemon knows which task is whose),
// never answered with the end of the turn before it.

// askResult is what herdAsk resolves with; keys in a stable order, ok first.
type askResult struct {
	OK        bool    `json:"ok"`
	Task      *string `json:"task"`
	Outcome   string  `json:"outcome,omitempty"`
	State     string  `json:"state,omitempty"`
	Queued    bool    `json:"queued,omitempty"`
	ExitCode  *int    `json:"exitCode,omitempty"`
	TaskState string  `json:"taskState,omitempty"`
	Error     string  `json:"error,omitempty"`
	Code      int     `json:"code,omitempty"`
}

func init() {
	Register(&Verb{
		Name: "herdAsk", Group: "herd", SideEffect: true, Async: true,
		Params: "name: string, text: string, opts?: { states?: string[]; timeout?: number | string; answer?: boolean }", Result: askResult{},
		Usage:   "herdAsk(name, text, {states, timeout, answer})",
		Summary: "prompt a member and wait for that prompt's turn → a promise of {ok, task, outcome, state, exitCode?, taskState?}",
		Detail: "The CLI's `mosh herd prompt NAME TEXT --wait`. states default to blocked, done and idle; timeout is ms or a\n" +
			"duration (default 30m, 0 = never). A busy member queues the prompt and the wait follows its own task.\n" +
			"Never rejects for an outcome: outcome is matched, timeout, or ended (the member exited: exitCode; or the\n" +
			"task ended otherwise: taskState). A prompt that could not be sent resolves {ok:false, error, code} (a\n" +
			"member that exited: code 3); a name not on the roster (a typo; a member killed and forgotten) rejects\n" +
			"with code 3.",
		Bind: func(c *Call) (Action, error) {
			name, err := nameArg(c, 0)
			if err != nil {
				return Action{}, err
			}
			text, err := c.String(1, "the prompt text")
			if err != nil {
				return Action{}, err
			}
			if strings.TrimSpace(text) == "" {
				return Action{}, c.Misuse("missing the prompt text")
			}
			o, err := c.Options(2, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "states", "timeout", "answer"); err != nil {
				return Action{}, err
			}
			var states []string
			if o != nil {
				if v := o.Get("states"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					if states, _, err = stringList(c, v, "option states"); err != nil {
						return Action{}, err
					}
					for _, st := range states {
						if _, _, err := herd.ParseStateArg(st); err != nil {
							return Action{}, c.Misuse("option states: %v", err)
						}
					}
				}
			}
			timeout, err := optDuration(c, o, "timeout", "option timeout", herdWaitDefaultTimeout)
			if err != nil {
				return Action{}, err
			}
			if timeout > 0 && timeout < time.Millisecond {
				timeout = time.Millisecond
			}
			answer := optBool(o, "answer")
			s := herdSessionFor(c)
			ask := func(ctx context.Context) (askResult, error) {
				var out askResult
				cl, err := s.get(ctx, true)
				if err != nil {
					out.Error, out.Code = errCode(err)
					return out, nil
				}
				r, err := cl.Prompt(ctx, name, text, herd.PromptOptions{Answer: answer, Wait: true, States: states, Timeout: timeout})
				if r != nil && r.Task != "" {
					out.Task = &r.Task
				}
				if r == nil || r.Outcome == "" {
					if absent := goneOrAbsent(ctx, cl, []string{name}, err); absent != nil {
						return out, absent
					}
					if err == nil {
						err = exitcode.New(exitcode.Infra, "the daemon did not say how the turn ended")
					}
					if ctx.Err() != nil {
						return out, err // Ctrl-C, the script's end
					}
					out.Error, out.Code = errCode(err)
					return out, nil
				}
				out.OK = r.Sent
				out.Outcome, out.State, out.Queued, out.ExitCode, out.TaskState = r.Outcome, r.State, r.Queued, r.ExitCode, r.TaskState
				return out, nil
			}
			return Action{
				DryRun: askResult{OK: true, Outcome: herd.OutcomeMatched, State: herd.StateDone},
				Would:  "would type into " + name + " and wait for its turn",
				Do: func(ctx context.Context) (any, error) {
					out, err := ask(ctx)
					if err != nil {
						return nil, err // Ctrl-C, or a name not on the roster
					}
					return out, nil
				},
			}, nil
		},
	})
}
