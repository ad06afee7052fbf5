//go:build !windows

package main

// `mosh herd top`: the herd's live view in a terminal (the model is cmd/mosh/top). This file
// wires it to the daemon: the event feed, the actions over herd.Client, and attach, which hands
// the terminal to the member with the same code as `mosh attach` and comes back on detach.

import (
	"context"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/cmd/mosh/top"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

func (h *herdCLI) topCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "top [--json]",
		Short: "the herd live: who waits on you first; attach, answer, prompt, interrupt, kill",
		Long: `Full-screen view of the herd, following the daemon's events: one row per member (engine, state
and sub-kind, authority, time in state, queue length, open task) and the question a blocked
member asks; the members waiting on you first, and the time they have waited in the footer.
Keys: Enter attach (Ctrl-] comes back), a answer, p prompt, x interrupt, K kill, / filter,
? help, q quit. --json prints the view's rows once and exits (no terminal needed).`,
		Example: `  mosh herd top
  NO_COLOR=1 mosh herd top
  mosh herd top --json | jq '.members[] | select(.state=="blocked") | .name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonOn(cmd) {
				return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
					v, err := top.Once(ctx, c)
					if err != nil {
						return err
					}
					return output(cmd, h.stdout, v, nil)
				})
			}
			in, ok := h.stdin.(*os.File)
			if !ok || !h.stdinTTY || !h.stdoutTTY || !isTerminalFile(in) {
				return usageErr("mosh herd top needs a terminal: run it from an interactive shell (for the same rows once: mosh herd top --json; for events: mosh wait)")
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				return h.runTop(ctx, c, in, isDryRun(cmd))
			})
		},
	}
	jsonFlag(cmd, "print {members, waitingOnYou} once, in top's order, and exit")
	return cmd
}

func (h *herdCLI) runTop(ctx context.Context, c *herd.Client, in *os.File, dryRun bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	feed, err := top.StartFeed(ctx, c)
	if err != nil {
		return err
	}
	cols, rows := terminalSize(int(in.Fd()))
	m := top.New(top.Options{
		Actions: topActions{c: c, in: in},
		Feed:    feed,
		NoColor: !h.style().color,
		DryRun:  dryRun,
		Width:   cols, Height: rows,
	})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(h.stdout), tea.WithEnvironment(h.environ))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return exitcode.Wrap(err, exitcode.Infra)
	}
	return nil
}

// topActions are top's actions over the client.
type topActions struct {
	c  *herd.Client
	in *os.File
}

func (a topActions) Answer(ctx context.Context, name, text string) error {
	_, err := a.c.Prompt(ctx, name, text, herd.PromptOptions{Answer: true})
	return err
}

func (a topActions) Prompt(ctx context.Context, name, text string) error {
	_, err := a.c.Prompt(ctx, name, text, herd.PromptOptions{})
	return err
}

func (a topActions) Interrupt(ctx context.Context, name string) error {
	_, err := a.c.Interrupt(ctx, name)
	return err
}

func (a topActions) Kill(ctx context.Context, name string) error {
	_, err := a.c.Kill(ctx, []string{name}, false)
	return err
}

func (a topActions) Attach(name string) tea.ExecCommand {
	return &topAttach{c: a.c, name: name, in: a.in}
}

// topAttach is `mosh attach NAME` run from top while top has given up the terminal.
type topAttach struct {
	c    *herd.Client
	name string
	in   *os.File
	out  io.Writer
}

func (t *topAttach) SetStdin(r io.Reader) {
	if f, ok := r.(*os.File); ok {
		t.in = f
	}
}
func (t *topAttach) SetStdout(w io.Writer) { t.out = w }
func (t *topAttach) SetStderr(io.Writer)   {}

func (t *topAttach) Run() error {
	ctx := context.Background()
	cols, rows := terminalSize(int(t.in.Fd()))
	s, err := t.c.Attach(ctx, t.name, cols, rows)
	if err != nil {
		return err
	}
	defer s.Close()
	end, err := runAttachTerminal(ctx, t.in, t.out, true, s)
	if err != nil {
		return err
	}
	if end == endClosed && s.ExitCode != nil {
		return exitcode.New(exitcode.Gone, "%s exited (code %d)", t.name, *s.ExitCode)
	}
	return nil
}
