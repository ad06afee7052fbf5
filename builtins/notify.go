package builtins

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/mosh-dev/mosh/herd"
)

// notify() and ask(): a script tells or asks the person through the herd's notification sinks
// (`mosh herd notify add …`), the daemon delivering them; ask() on a terminal asks inline.

type notifyResult struct {
	OK    bool     `json:"ok"`
	ID    string   `json:"id,omitempty"`
	Sinks []string `json:"sinks"`
	Error string   `json:"error,omitempty"`
}

func init() {
	Register(&Verb{
		Name: "notify", Group: "herd", SideEffect: true, Async: true,
		Params: `text: string, opts?: { on?: "blocked" | "done" | "failed" | "gone"; members?: string[] }`, Result: notifyResult{},
		Usage:   "notify(text, {on, members})",
		Summary: "send a message through the herd's notification sinks → a promise of {ok, id, sinks}",
		Detail: "Goes to every sink (`mosh herd notify list`); with on, only to sinks following that class; with\n" +
			"members, only to sinks following one of them (a sink without members follows all). Never rejects for\n" +
			"a delivery problem: the daemon queues it per sink and retries; {ok:false, error} when it could not be queued.",
		Bind: func(c *Call) (Action, error) {
			text, err := c.String(0, "the text")
			if err != nil {
				return Action{}, err
			}
			if strings.TrimSpace(text) == "" {
				return Action{}, c.Misuse("missing the text")
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "on", "members"); err != nil {
				return Action{}, err
			}
			on := ""
			var members []string
			if o != nil {
				if v := o.Get("on"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					on = v.String()
					if !slices.Contains(herd.NotifyOnAll, on) {
						return Action{}, c.Misuse("option on must be one of %s, not %q", strings.Join(herd.NotifyOnAll, ", "), on)
					}
				}
				if v := o.Get("members"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					if members, _, err = stringList(c, v, "option members"); err != nil {
						return Action{}, err
					}
				}
			}
			s := herdSessionFor(c)
			return Action{
				DryRun: notifyResult{OK: true, Sinks: []string{}},
				Would:  "would notify " + strconv.Quote(clipLine(text, 60)),
				Do: func(ctx context.Context) (any, error) {
					out := notifyResult{Sinks: []string{}}
					cl, err := s.get(ctx, true)
					if err == nil {
						var r *herd.NotifySendResult
						if r, err = cl.Notify(ctx, text, on, members); err == nil {
							out.OK, out.ID, out.Sinks = true, r.ID, r.Sinks
							return out, nil
						}
					}
					if ctx.Err() != nil {
						return nil, err
					}
					out.Error, _ = errCode(err)
					return out, nil
				},
			}, nil
		},
	})
	Register(&Verb{
		Name: "ask", Group: "herd", SideEffect: true, Async: true,
		Params: "question: string, opts?: { options?: string[]; timeout?: number | string }", Result: TSType("string | null"),
		Usage:   "ask(question, {options, timeout})",
		Summary: "ask the person → a promise of the reply (an option's label when options are given), or null at the timeout",
		Detail: "On a terminal (stdin and stderr) the question is asked inline. Otherwise it goes out through the herd's\n" +
			"notification sinks with an id, and `mosh herd reply ID TEXT` answers it. With options the reply must be\n" +
			"one of them (its number or its label). timeout is ms or a duration (default 0 = wait until the script ends).\n" +
			"Under --dry-run it narrates and resolves null.",
		Bind: func(c *Call) (Action, error) {
			q, err := c.String(0, "the question")
			if err != nil {
				return Action{}, err
			}
			if strings.TrimSpace(q) == "" {
				return Action{}, c.Misuse("missing the question")
			}
			o, err := c.Options(1, "the options")
			if err != nil {
				return Action{}, err
			}
			if err := c.Known(o, "options", "timeout"); err != nil {
				return Action{}, err
			}
			var options []string
			if o != nil {
				if v := o.Get("options"); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
					if options, _, err = stringList(c, v, "option options"); err != nil {
						return Action{}, err
					}
				}
			}
			timeout, err := optDuration(c, o, "timeout", "option timeout", 0)
			if err != nil {
				return Action{}, err
			}
			if timeout > 0 && timeout < time.Millisecond {
				timeout = time.Millisecond
			}
			s := herdSessionFor(c)
			inline := c.in.cfg.StdinTTY && c.in.cfg.StderrTTY
			stdin, stderr := c.VU().Stdin(), c.in.cfg.Stderr
			if stderr == nil {
				stderr = c.VU().Stderr()
			}
			return Action{
				DryRun: DryRunNull,
				Would:  "would ask " + strconv.Quote(clipLine(q, 60)) + " and resolve null",
				Do: func(ctx context.Context) (any, error) {
					if inline {
						return askInline(ctx, stdin, stderr, q, options, timeout)
					}
					cl, err := s.get(ctx, true)
					if err != nil {
						return nil, err
					}
					r, err := cl.Ask(ctx, q, options, timeout)
					if err != nil {
						return nil, err
					}
					if !r.Answered {
						return nil, nil
					}
					return r.Reply, nil
				},
			}, nil
		},
	})
}

// askInline asks on the terminal until the reply fits the options (any text without options);
// null at the timeout or at the end of input.
func askInline(ctx context.Context, in io.Reader, out io.Writer, q string, options []string, timeout time.Duration) (any, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	prompt := q
	for i, o := range options {
		prompt += fmt.Sprintf("\n  %d. %s", i+1, o)
	}
	fmt.Fprintf(out, "%s\n> ", prompt)
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out)
			if ctx.Err() == context.DeadlineExceeded {
				return nil, nil
			}
			return nil, ctx.Err()
		case l, ok := <-lines:
			if !ok {
				return nil, nil
			}
			l = strings.TrimSpace(l)
			if len(options) == 0 {
				return l, nil
			}
			if o, ok := herd.ReplyOption(options, l); ok {
				return o, nil
			}
			fmt.Fprintf(out, "answer with a number from 1 to %d or an option's text\n> ", len(options))
		}
	}
}

func clipLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
