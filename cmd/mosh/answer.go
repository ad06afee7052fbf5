//go:build !windows

package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/herd"
)

// answerBy is who answers from this command line, recorded on the member's open task.
func answerBy() string {
	for _, k := range []string{"USER", "LOGNAME"} {
		if u := os.Getenv(k); u != "" {
			return u + " (cli)"
		}
	}
	return "cli"
}

func (h *herdCLI) answerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "answer NAME ANSWER…",
		Short: "answer a blocked member, checked against its question (a menu's number or label, yes/no/always, or text)",
		Long: "Answer what a blocked member asks (`mosh ps NAME --json` shows the question). A menu takes an\n" +
			"option's number or label; anything else is refused (exit 1) with the options listed. A\n" +
			"permission takes yes, no or always, mapped to that engine's keys by the engines table. A\n" +
			"question takes text. The member's open task records the answer, who gave it and when.",
		Example: `  mosh herd answer api yes
  mosh herd answer api 2
  mosh herd answer api Blue
  mosh herd answer api "use the staging database"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("herd answer needs a member and an answer: mosh herd answer NAME ANSWER…")
			}
			name := args[0]
			if err := herd.CheckName(name); err != nil {
				return err
			}
			answer := strings.Join(args[1:], " ")
			if strings.TrimSpace(answer) == "" {
				return usageErr("herd answer: the answer is empty: an option's number or label, yes / no / always, or text")
			}
			if isDryRun(cmd) {
				m, err := h.dryMember(cmd, name)
				if err != nil {
					return err
				}
				what := fmt.Sprintf("answer %s with %q", name, answer)
				if q := m.Question; q != nil {
					what += fmt.Sprintf(" (it asks %s: %q)", q.Kind, q.Text)
				} else if m.State != herd.StateBlocked {
					what += fmt.Sprintf(" (it reads %s: the answer would be refused)", m.State)
				}
				return h.narrate(cmd, what, herd.AnswerParams{Name: name, Answer: answer, By: answerBy()})
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Answer(ctx, name, answer, answerBy())
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error {
					what := r.Label
					if len(r.Keys) > 0 {
						what = fmt.Sprintf("%s (keys %s)", r.Label, strings.Join(r.Keys, " "))
					}
					line := fmt.Sprintf("answered %s: %s", r.Name, what)
					if r.Task != "" {
						line += " — task " + r.Task
					}
					_, err := fmt.Fprintln(h.stdout, line)
					return err
				})
			})
		},
	}
	jsonFlag(cmd, "print {name, task, kind, keys|text, label, question} as JSON")
	return cmd
}
