//go:build !windows

package main

// `mosh herd remote add|list|remove|ping|card`: remote members (an A2A agent, another machine's
// herd, a /run endpoint) on the roster. Thin adapters over herd.Client's Remote* methods; every
// other verb (prompt, wait, read, kill, tasks…) works on a remote member unchanged.
//
// The token comes from MOSH_REMOTE_<NAME>_TOKEN in the command's environment and goes to the
// daemon's memory only: no flag takes it (flags land in shell history), no file holds it.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote"
)

// remoteFamily: `mosh herd remote add|ls|rm|ping|card`.
func remoteFamily(gs *globalState) []*cobra.Command {
	gs.parentCommand("herd").AddCommand(newHerdCLI(gs).remoteCmd())
	return nil
}

func (h *herdCLI) remoteCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remote",
		Short: "remote members: A2A agents, other herds and /run endpoints on the roster",
		Long: `A remote member is an agent elsewhere under a local name. Every verb works on it:
prompt sends the text (A2A message/send, or a POST to a /run endpoint), wait follows its state,
read shows its last answer, kill cancels its open task, tasks lists its prompts.

The bearer token is read from MOSH_REMOTE_<NAME>_TOKEN (upper-case, '-' becomes '_') in the
environment of the commands that add, ping or prompt it; it is kept in the daemon's memory only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(h.remoteAddCmd(), h.remoteListCmd(), h.remoteRemoveCmd(), h.remotePingCmd(), h.remoteCardCmd())
	return cmd
}

func (h *herdCLI) remoteAddCmd() *cobra.Command {
	var kind, inputKey, timeout string
	var force bool
	cmd := &cobra.Command{
		Use:   "add NAME URL [--kind a2a|run] [--input-key KEY] [--timeout D] [--force]",
		Short: "register a remote member (its card is discovered; nothing is registered if it does not answer)",
		Example: `  mosh herd remote add build https://ci.example.com/herd/s/api/
  MOSH_REMOTE_SUMMARY_TOKEN=… mosh herd remote add summary https://agents.do-ai.run/ws/summary/run --kind run`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("herd remote add needs a name and a URL: mosh herd remote add NAME URL [--kind a2a|run]")
			}
			name, url := args[0], args[1]
			if err := herd.CheckName(name); err != nil {
				return err
			}
			switch kind {
			case remote.KindA2A, remote.KindRun:
			default:
				return usageErr("--kind %q: use a2a (an A2A agent or another herd) or run (a POST /run endpoint)", kind)
			}
			if inputKey != "" && kind != remote.KindRun {
				return usageErr("--input-key only applies to --kind run")
			}
			opts := herd.RemoteAddOptions{Kind: kind, InputKey: inputKey, Force: force}
			if timeout != "" {
				d, err := parseCLIDuration(timeout)
				if err != nil || d <= 0 {
					return usageErr("--timeout %q: give a duration above 0 (30s, 2m, 10m)", timeout)
				}
				opts.Timeout = d
			}
			if isDryRun(cmd) {
				return h.dryRemoteAdd(cmd, name, url, opts)
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.RemoteAdd(ctx, name, url, opts)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error {
					if !r.Probe.OK {
						fmt.Fprintf(h.stderr, "mosh: %s does not answer now (%s); registered anyway (--force)\n", name, r.Probe.Error)
					}
					return h.writeRemotes([]herd.Member{r.Member})
				})
			})
		},
	}
	cmd.Flags().StringVar(&kind, "kind", remote.KindA2A, "a2a (an A2A agent, another mosh herd) or run (POST {\"prompt\": …} to a /run endpoint)")
	cmd.Flags().StringVar(&inputKey, "input-key", "", "run: the JSON key the prompt is sent under (default prompt)")
	cmd.Flags().StringVar(&timeout, "timeout", "", "bound on each call to the remote (default 30s; a /run call 10m)")
	cmd.Flags().BoolVar(&force, "force", false, "register even when the remote does not answer now")
	jsonFlag(cmd, "print {member, probe, card} as JSON")
	return cmd
}

func (h *herdCLI) remoteListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "list remote members: name, kind, state, host, last answer, error",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				ms, err := c.RemoteList(ctx)
				if err != nil {
					return err
				}
				if ms == nil {
					ms = []herd.Member{}
				}
				return output(cmd, h.stdout, ms, func() error { return h.writeRemotes(ms) })
			})
		},
	}
	jsonFlag(cmd, "print the remote members as a JSON array (ps rows)")
	return cmd
}

// writeRemotes prints remote rows: the columns that matter for something not on this machine.
func (h *herdCLI) writeRemotes(ms []herd.Member) error {
	st := h.style()
	if len(ms) == 0 {
		if st.tty {
			fmt.Fprintln(h.stderr, "no remote members — add one: mosh herd remote add NAME URL")
		}
		return nil
	}
	tb := newTable("name", "kind", "state", "host", "answered", "token", "error")
	for _, m := range ms {
		ri := m.Remote
		if ri == nil {
			continue
		}
		answered := "never"
		if ri.ObservedMs > 0 {
			answered = st.fmtTime(ri.ObservedMs)
		}
		token := "-"
		if ri.Token {
			token = "set"
		}
		tb.add(cell{Text: m.Name, Color: ansiBold}, plain(ri.Kind), cell{Text: stateLabel(m.State, m.BlockedOn), Color: stateColor(m.State)},
			plain(ri.Host), plain(answered), plain(token), plain(orDash(oneLine(ri.Error, 80))))
	}
	return tb.write(h.stdout, st)
}

func (h *herdCLI) remoteRemoveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "deregister a remote member (its open task is canceled first; its ledger history stays)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("herd remote remove needs one name: mosh herd remote remove NAME")
			}
			if isDryRun(cmd) {
				return h.dryRemoteRemove(cmd, args[0])
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.RemoteRemove(ctx, args[0])
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error {
					if r.Canceled != "" && h.stdoutTTY {
						fmt.Fprintf(h.stdout, "canceled the open task of %s\n", r.Removed)
					}
					h.printNames("removed", []string{r.Removed})
					return nil
				})
			})
		},
	}
	jsonFlag(cmd, "print {removed, canceled} as JSON")
	return cmd
}

func (h *herdCLI) remotePingCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ping NAME…",
		Short: "probe remote members now (exit 5 when one does not answer)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("herd remote ping needs names: mosh herd remote ping NAME…")
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				var out []herd.RemotePing
				failed := 0
				for _, n := range args {
					p, err := c.RemotePing(ctx, n)
					if err != nil {
						return err
					}
					if !p.OK {
						failed++
					}
					out = append(out, *p)
				}
				if err := output(cmd, h.stdout, out, func() error {
					st := h.style()
					tb := newTable("name", "ok", "latency", "agent", "error")
					for _, p := range out {
						ok, color := "yes", ansiGreen
						if !p.OK {
							ok, color = "no", ansiRed
						}
						tb.add(cell{Text: p.Name, Color: ansiBold}, cell{Text: ok, Color: color}, plain(fmt.Sprintf("%.1fms", p.LatencyMs)),
							plain(orDash(p.Agent)), plain(orDash(p.Error)))
					}
					return tb.write(h.stdout, st)
				}); err != nil {
					return err
				}
				if failed > 0 {
					return exitcode.Silent(exitcode.Infra)
				}
				return nil
			})
		},
	}
	jsonFlag(cmd, "print the probes as a JSON array")
	return cmd
}

func (h *herdCLI) remoteCardCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "card NAME",
		Short: "print an A2A member's agent card as it serves it (JSON)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("herd remote card needs one name: mosh herd remote card NAME")
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.RemoteCard(ctx, args[0])
				if err != nil {
					return err
				}
				if !json.Valid(r.Card) {
					// Not JSON (a broken remote): shown as it came, since nothing can be indented.
					_, err := fmt.Fprintln(h.stdout, strings.TrimSpace(string(r.Card)))
					return err
				}
				// Indented as served: key order kept, nothing re-encoded; --json (the default)
				// and --json=false print the same.
				card := rawResult(func() (json.RawMessage, error) { return r.Card, nil })
				return output(cmd, h.stdout, card, func() error { return emit(h.stdout, true, card, nil) })
			})
		},
	}
	alwaysJSONFlag(cmd, "the card is always JSON (accepted for symmetry)")
	return cmd
}
