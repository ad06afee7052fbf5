//go:build !windows

package main

// `mosh herd notify add|list|remove|test` and `mosh herd reply`: thin adapters over herd.Client's
// Notify* and Reply. The daemon delivers notifications from its event bus (herd/internal/notify).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/herd"
)

func (h *herdCLI) notifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify",
		Short: "be told when a member needs you: desktop, webhook (json, ntfy, Slack) or command sinks",
		Long: `Notifications are sent by the daemon from its event bus when a member enters blocked (with its
question, its options and the command that answers it), done, a task fails or a member is gone.
Each sink follows --on (default blocked,failed) and, optionally, some members. Sinks are kept in
$MOSH_HOME/herd/notify.json (0600); a webhook URL is never printed whole. docs/notifications.md
documents the webhook body (schema mosh.herd.notification/1).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(h.notifyAddCmd(), h.notifyListCmd(), h.notifyRemoveCmd(), h.notifyTestCmd())
	return cmd
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (h *herdCLI) notifyAddCmd() *cobra.Command {
	var on, format, members string
	cmd := &cobra.Command{
		Use:   "add desktop [MEMBER…] | webhook URL [MEMBER…] [--format json|ntfy|slack] | command CMD… [--on …] [--members a,b]",
		Short: "add a notification sink",
		Example: `  mosh herd notify add desktop
  mosh herd notify add webhook https://ntfy.sh/my-secret-topic --format ntfy --on blocked,failed,done
  mosh herd notify add webhook https://hooks.slack.com/services/T…/B…/… --format slack api web
  mosh herd notify add command -- notify-me --urgent        # the event JSON on stdin, MOSH_NOTIFY_* set`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("notify add needs a sink: desktop, webhook URL or command CMD…")
			}
			s := herd.Sink{Type: args[0], On: splitList(on), Members: splitList(members)}
			rest := args[1:]
			switch s.Type {
			case herd.SinkDesktop:
				s.Members = append(s.Members, rest...)
			case herd.SinkWebhook:
				if len(rest) == 0 {
					return usageErr("notify add webhook needs a URL: mosh herd notify add webhook https://ntfy.sh/TOPIC --format ntfy")
				}
				s.URL, s.Format = rest[0], format
				s.Members = append(s.Members, rest[1:]...)
			case herd.SinkCommand:
				if len(rest) == 0 {
					return usageErr("notify add command needs the command: mosh herd notify add command -- notify-me --urgent")
				}
				s.Command = rest
			default:
				return usageErr("unknown sink %q: use desktop, webhook URL or command CMD…", s.Type)
			}
			if format != "" && s.Type != herd.SinkWebhook {
				return usageErr("--format applies to webhooks only")
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				st, err := c.NotifyAdd(ctx, s, isDryRun(cmd))
				if err != nil {
					return err
				}
				if isDryRun(cmd) {
					return h.narrate(cmd, fmt.Sprintf("add sink %s (%s) on %s", st.ID, st.Target, strings.Join(st.On, ",")), st)
				}
				return output(cmd, h.stdout, st, func() error {
					_, err := fmt.Fprintf(h.stdout, "added %s: %s on %s%s\n", st.ID, st.Target, strings.Join(st.On, ","), membersNote(st.Members))
					return err
				})
			})
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "when to notify: blocked,done,failed,gone (default blocked,failed)")
	cmd.Flags().StringVar(&format, "format", "", "webhook body: json (documented schema), ntfy or slack (default json)")
	cmd.Flags().StringVar(&members, "members", "", "only these members (comma-separated; default all)")
	jsonFlag(cmd, "print the sink as JSON")
	return cmd
}

func membersNote(ms []string) string {
	if len(ms) == 0 {
		return ""
	}
	return " for " + strings.Join(ms, ",")
}

func (h *herdCLI) notifyListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "list the notification sinks and how their deliveries went",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				l, err := c.NotifyList(ctx)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, l, func() error {
					if len(l.Sinks) == 0 {
						_, err := fmt.Fprintln(h.stderr, "no sinks: mosh herd notify add desktop | webhook URL | command CMD…")
						return err
					}
					for _, s := range l.Sinks {
						last := "-"
						if s.LastDelivered > 0 {
							last = time.UnixMilli(s.LastDelivered).Format(time.TimeOnly)
						}
						line := fmt.Sprintf("%s\t%s\ton %s%s\tdelivered %d (last %s)", s.ID, s.Target, strings.Join(s.On, ","), membersNote(s.Members), s.Delivered, last)
						if s.LastError != "" {
							line += fmt.Sprintf("\tfailed %d, last error: %s", s.Failed, s.LastError)
						}
						if _, err := fmt.Fprintln(h.stdout, line); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
	jsonFlag(cmd, "print {sinks, desktop} as JSON")
	return cmd
}

func (h *herdCLI) notifyRemoveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "remove ID",
		Aliases: []string{"rm"},
		Short:   "remove a notification sink",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				st, err := c.NotifyRemove(ctx, args[0], isDryRun(cmd))
				if err != nil {
					return err
				}
				if isDryRun(cmd) {
					return h.narrate(cmd, fmt.Sprintf("remove sink %s (%s)", st.ID, st.Target), st)
				}
				return output(cmd, h.stdout, st, func() error {
					_, err := fmt.Fprintf(h.stdout, "removed %s: %s\n", st.ID, st.Target)
					return err
				})
			})
		},
	}
	jsonFlag(cmd, "print the removed sink as JSON")
	return cmd
}

func (h *herdCLI) notifyTestCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "test [ID]",
		Short: "send a test notification to one sink or all of them, and say how each took it (exit 5 if one failed)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				if isDryRun(cmd) {
					l, err := c.NotifyList(ctx)
					if err != nil {
						return err
					}
					var targets []string
					for _, s := range l.Sinks {
						if id == "" || s.ID == id {
							targets = append(targets, s.ID+" ("+s.Target+")")
						}
					}
					return h.narrate(cmd, "send a test notification to "+orDash(strings.Join(targets, ", ")), herd.NotifyIDParams{ID: id})
				}
				r, err := c.NotifyTest(ctx, id)
				if r == nil || len(r.Results) == 0 {
					if err == nil {
						fmt.Fprintln(h.stderr, "no sinks to test: mosh herd notify add desktop | webhook URL | command CMD…")
					}
					return err
				}
				if perr := output(cmd, h.stdout, r, func() error {
					for _, t := range r.Results {
						res := "ok"
						if !t.OK {
							res = "FAILED: " + t.Error
						}
						if _, err := fmt.Fprintf(h.stdout, "%s\t%s\t%dms\t%s\n", t.ID, t.Target, t.Ms, res); err != nil {
							return err
						}
					}
					return nil
				}); perr != nil {
					return perr
				}
				return err
			})
		},
	}
	jsonFlag(cmd, "print {results: [{id, target, ok, error, ms}]} as JSON")
	return cmd
}

func (h *herdCLI) replyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reply ID TEXT…",
		Short: "answer a script's ask() (its notification names the ID)",
		Example: `  mosh herd reply q3 yes
  mosh herd reply q4 "ship it on Monday"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("herd reply needs the ask's id and a text: mosh herd reply q3 yes")
			}
			id, text := args[0], strings.Join(args[1:], " ")
			if isDryRun(cmd) {
				return h.narrate(cmd, fmt.Sprintf("reply %q to %s", text, id), herd.ReplyParams{ID: id, Text: text})
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Reply(ctx, id, text)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error {
					_, err := fmt.Fprintf(h.stdout, "replied to %s (%q): %s\n", r.ID, r.Question, r.Reply)
					return err
				})
			})
		},
	}
	jsonFlag(cmd, "print {id, question, reply} as JSON")
	return cmd
}
