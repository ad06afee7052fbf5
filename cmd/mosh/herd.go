//go:build !windows

package main

// The herd verbs on the CLI: thin adapters over herd.Client. Each verb parses flags, calls one
// Client method, and prints the result as --json (the herd types' lowerCamel JSON), a table on a
// terminal, or tab-separated rows off one. Errors carry exit codes from the exitcode package
// (moshcode's: wait 0 matched / 2 timeout / 3 gone or ended; doctor 5; usage 1) and are printed
// on stderr by the root command.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/herdd"
)

// defaultWaitTimeout is moshcode's: a wait with no --timeout gives up after 30 minutes.
const defaultWaitTimeout = 30 * time.Minute

// herdCLI is what every herd verb needs from the global state: streams, environment, terminal.
type herdCLI struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
	environ        []string // the member inherits exactly this environment
	stdoutTTY      bool
	stdinTTY       bool
	getwd          func() (string, error)
	moshHome       func() (string, error)
}

func newHerdCLI(gs *globalState) *herdCLI {
	return &herdCLI{
		stdout: gs.Stdout, stderr: gs.Stderr, stdin: gs.Stdin,
		getenv: gs.Getenv, environ: gs.Environ(),
		stdoutTTY: gs.StdoutTTY, stdinTTY: gs.StdinTTY,
		getwd: gs.Getwd, moshHome: gs.MoshHome,
	}
}

// cwd is --cwd made absolute, or the command's working directory.
func (h *herdCLI) cwd(flag string) (string, error) {
	if flag != "" {
		return absOrEmpty(flag), nil
	}
	if h.getwd != nil {
		if wd, err := h.getwd(); err == nil {
			return wd, nil
		}
	}
	return "", nil // the client falls back to the process's working directory
}

func (h *herdCLI) style() outputStyle { return newOutputStyle(h.stdoutTTY, h.getenv) }

// home is $MOSH_HOME as the command sees it (the injected environment, not the process's).
func (h *herdCLI) home() (string, error) {
	if h.moshHome != nil {
		return h.moshHome()
	}
	return herd.ResolveHome(h.getenv)
}

// options are the herd client's options for this command: its MOSH_HOME, resolved once, and its
// environment (where the client finds remote members' tokens).
func (h *herdCLI) options() (herd.Options, error) {
	home, err := h.home()
	if err != nil {
		return herd.Options{}, err
	}
	return herd.Options{Home: home, Getenv: h.getenv}, nil
}

// connect dials the daemon, starting one on demand (like a tmux server).
func (h *herdCLI) connect(ctx context.Context) (*herd.Client, error) {
	opts, err := h.options()
	if err != nil {
		return nil, err
	}
	return herd.NewClient(ctx, opts)
}

// connectRunning dials the daemon only if one runs; (nil, nil) when none answers.
func (h *herdCLI) connectRunning(ctx context.Context) (*herd.Client, error) {
	return h.connectRunningFor(ctx, "")
}

// connectRunningFor is connectRunning for the herd whose directory is herdDir ($MOSH_HOME/herd, as
// members see it in MOSH_HERD_DIR); an empty herdDir means the command's own MOSH_HOME.
func (h *herdCLI) connectRunningFor(ctx context.Context, herdDir string) (*herd.Client, error) {
	opts, err := h.options()
	if err != nil {
		return nil, err
	}
	if herdDir != "" {
		opts.Home = filepath.Dir(filepath.Clean(herdDir))
	}
	opts.NoStart = true
	c, err := herd.NewClient(ctx, opts)
	if err != nil {
		return nil, nil //nolint:nilerr // "not running" is an answer here, not a failure
	}
	return c, nil
}

// withClient runs fn with a connected client and closes it afterwards.
func (h *herdCLI) withClient(cmd *cobra.Command, fn func(ctx context.Context, c *herd.Client) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := h.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(ctx, c)
}

func usageErr(format string, args ...any) error { return exitcode.New(exitcode.Usage, format, args...) }

// checkNames validates member names at the edge so a typo is a usage error (1), not "gone" (3).
// taskIDLike: kill takes queued task ids (t-N) besides member names.
func taskIDLike(s string) bool {
	rest, ok := strings.CutPrefix(s, "t-")
	if !ok || rest == "" {
		return false
	}
	return strings.Trim(rest, "0123456789") == ""
}

func checkNames(names []string) error {
	for _, n := range names {
		if err := herd.CheckName(n); err != nil {
			return err
		}
	}
	return nil
}

// parseStates reads --state blocked,done[,blocked:permission…]: comma-separated, blanks skipped,
// each part trimmed and kept as written; gone, or anything herd.ParseStateArg accepts.
func parseStates(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if part != herd.StateGone {
			if _, _, err := herd.ParseStateArg(part); err != nil {
				return nil, err
			}
		}
		out = append(out, part)
	}
	return out, nil
}

// ---- run / start ------------------------------------------------------------------------------

func (h *herdCLI) printLaunched(cmd *cobra.Command, m *herd.Member) error {
	return output(cmd, h.stdout, m, func() error {
		st := h.style()
		if !st.tty {
			_, err := fmt.Fprintln(h.stdout, m.Name)
			return err
		}
		_, err := fmt.Fprintf(h.stdout, "started %s (%s, pid %d, %s) — mosh attach %s\n",
			st.paint(ansiBold, m.Name), m.Engine, m.Pid, st.abbrevHome(m.Cwd), m.Name)
		return err
	})
}

// waitReadyFlag is run's and start's --wait.
func waitReadyFlag(cmd *cobra.Command, wait *bool) {
	cmd.Flags().BoolVar(wait, "wait", false, "wait until the member is ready (idle or blocked); one that exits first is exit 5 with its last screen lines")
}

// awaitReady follows a member just started until it is ready (idle or blocked) or its process
// exits: an exit during start-up is infrastructure (exit 5) and says why, with the last lines the
// engine left on its screen. It returns the member's row as it is then.
func awaitReady(ctx context.Context, c *herd.Client, m *herd.Member) (*herd.Member, error) {
	w, err := c.Wait(ctx, []string{m.Name}, herd.WaitOptions{States: []string{herd.StateIdle, herd.StateBlocked}})
	if w != nil && len(w.Results) == 1 && w.Results[0].ExitCode != nil {
		o := w.Results[0]
		return nil, exitcode.New(exitcode.Infra, "%s exited during start-up with code %d%s (`mosh herd read %s` shows its last screen)",
			m.Name, *o.ExitCode, herd.ExitReasonSuffix(o.ExitReason), m.Name)
	}
	if err != nil {
		return nil, err
	}
	members, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	for i := range members {
		if members[i].Name == m.Name {
			return &members[i], nil
		}
	}
	return m, nil
}

func (h *herdCLI) runCmd() *cobra.Command {
	var name, cwd, engine string
	var wait bool
	cmd := &cobra.Command{
		Use:   "run [--name N] [--cwd DIR] [--engine E] -- CMD [ARGS…]",
		Short: "run any command as a herd member that outlives this terminal",
		Example: `  mosh herd run --name api -- claude
  mosh herd run --name build -- make -j8`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("herd run needs a command: mosh herd run [--name N] -- CMD [ARGS…]")
			}
			if err := ownFlagAfterCommand(cmd, args); err != nil {
				return err
			}
			if name != "" {
				if err := herd.CheckName(name); err != nil {
					return err
				}
			}
			dir, err := h.cwd(cwd)
			if err != nil {
				return err
			}
			if isDryRun(cmd) {
				return h.dryRun(cmd, herd.RunParams{Name: name, Cwd: dir, Engine: engine, Argv: args})
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				m, err := c.Run(ctx, herd.RunParams{Name: name, Cwd: dir, Engine: engine, Argv: args, Env: h.environ})
				if err == nil && wait {
					m, err = awaitReady(ctx, c, m)
				}
				if err != nil {
					return err
				}
				return h.printLaunched(cmd, m)
			})
		},
	}
	cmd.Flags().SetInterspersed(false) // everything after the command is the command's
	cmd.Flags().StringVar(&name, "name", "", "member name ([a-z][a-z0-9_-]{0,31}); default <engine>-<dir>")
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory (default: the current one)")
	cmd.Flags().StringVar(&engine, "engine", "", "engine whose state rules classify the screen (default: from the command)")
	waitReadyFlag(cmd, &wait)
	jsonFlag(cmd, "print the member as JSON")
	return cmd
}

func (h *herdCLI) startCmd() *cobra.Command {
	var name, cwd string
	var agent, wait bool
	cmd := &cobra.Command{
		Use:   "start ENGINE [--name N] [--cwd DIR] [--agent] [-- ARGS…]",
		Short: "start a coding agent from the engines table (claude, codex, opencode, pi, gemini, aider…)",
		Example: `  mosh herd start claude --name api
  mosh herd start codex --agent -- --model o4-mini`,
		RunE: func(cmd *cobra.Command, args []string) error {
			engineArgs := args
			var extra []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				engineArgs, extra = args[:dash], args[dash:]
			}
			if len(engineArgs) != 1 {
				return usageErr("herd start takes one ENGINE (then -- ARGS for the engine): mosh herd start claude --name api -- --model X")
			}
			if name != "" {
				if err := herd.CheckName(name); err != nil {
					return err
				}
			}
			dir, err := h.cwd(cwd)
			if err != nil {
				return err
			}
			if isDryRun(cmd) {
				return h.dryStart(cmd, herd.StartParams{Engine: engineArgs[0], Name: name, Cwd: dir, Agent: agent, Args: extra})
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				m, err := c.Start(ctx, herd.StartParams{Engine: engineArgs[0], Name: name, Cwd: dir, Agent: agent, Args: extra, Env: h.environ})
				if err == nil && wait {
					m, err = awaitReady(ctx, c, m)
				}
				if err != nil {
					return err
				}
				return h.printLaunched(cmd, m)
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "member name ([a-z][a-z0-9_-]{0,31}); default <engine>-<dir>")
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory (default: the current one)")
	cmd.Flags().BoolVar(&agent, "agent", false, "add the engine's autonomous flags and mark the member autonomous")
	waitReadyFlag(cmd, &wait)
	jsonFlag(cmd, "print the member as JSON")
	return cmd
}

func absOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// ---- ps ---------------------------------------------------------------------------------------

func (h *herdCLI) psCmd(use string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use,
		Aliases: []string{"list", "ls"},
		Short:   "list herd members: name, engine, state, authority, cwd, age",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return h.runPs(cmd)
		},
	}
	jsonFlag(cmd, "print the roster as a JSON array")
	return cmd
}

func (h *herdCLI) runPs(cmd *cobra.Command) error {
	return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
		members, err := c.List(ctx)
		if err != nil {
			return err
		}
		sort.SliceStable(members, func(i, j int) bool { return members[i].Name < members[j].Name })
		if members == nil {
			members = []herd.Member{}
		}
		return output(cmd, h.stdout, members, func() error { return h.writeRoster(members) })
	})
}

// writeRoster prints ps rows; on a terminal it adds the footer that names who waits on the user.
func (h *herdCLI) writeRoster(members []herd.Member) error {
	st := h.style()
	if len(members) == 0 {
		if st.tty {
			fmt.Fprintln(h.stderr, "no members — start one: mosh herd run --name NAME -- CMD")
		}
		return nil
	}
	tb := newTable("name", "engine", "kind", "state", "authority", "cwd", "pid", "age", "attached", "substrate")
	var waiting []string
	for _, m := range members {
		if m.State == herd.StateBlocked {
			waiting = append(waiting, m.Name)
		}
		place := st.abbrevHome(m.Cwd)
		if m.Kind == herd.KindRemote {
			place = remoteHost(m)
		}
		pid := "-"
		if m.Pid > 0 && m.Alive {
			pid = fmt.Sprint(m.Pid)
		}
		age := st.fmtTime(m.CreatedMs)
		if m.Kind == herd.KindRemote {
			age = "-"
		}
		state := stateLabel(m.State, m.BlockedOn)
		if m.ExitCode != nil && (m.State == herd.StateGone || m.State == herd.StateDone) && m.Authority == herd.AuthorityRuntime {
			state += fmt.Sprintf(" (exit %d)", *m.ExitCode)
		}
		tb.add(
			cell{Text: m.Name, Color: ansiBold},
			plain(m.Engine),
			plain(orDash(m.Kind)),
			cell{Text: state, Color: stateColor(m.State)},
			plain(orDash(m.Authority)),
			plain(place),
			plain(pid),
			plain(age),
			plain(fmt.Sprint(m.Attached)),
			plain(orDash(m.Substrate)),
		)
	}
	if err := tb.write(h.stdout, st); err != nil {
		return err
	}
	if st.tty && len(waiting) > 0 {
		_, err := fmt.Fprintln(h.stdout, st.paint(ansiYellow, fmt.Sprintf("%d waiting on you — mosh attach %s", len(waiting), waiting[0])))
		return err
	}
	return nil
}

// remoteHost is what the cwd column shows for a remote member: the host it lives on.
func remoteHost(m herd.Member) string {
	if m.Remote != nil && m.Remote.Host != "" {
		return m.Remote.Host
	}
	if m.Cwd == "" {
		return "-"
	}
	s := m.Cwd
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ---- attach -----------------------------------------------------------------------------------

func (h *herdCLI) attachCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "attach NAME",
		Short: "attach this terminal to a member (detach with Ctrl-])",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := herd.CheckName(name); err != nil {
				return err
			}
			in, ok := h.stdin.(*os.File)
			if !ok || !h.stdinTTY || !isTerminalFile(in) {
				return usageErr("mosh attach needs a terminal on stdin: run it from an interactive shell (to look without attaching: mosh herd read %s)", name)
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				cols, rows := terminalSize(int(in.Fd()))
				s, err := c.Attach(ctx, name, cols, rows)
				if err != nil {
					return err
				}
				defer s.Close()
				fmt.Fprintf(h.stderr, "attaching to %s — detach with Ctrl-]\n", name)
				end, err := runAttachTerminal(ctx, in, h.stdout, h.stdoutTTY, s)
				if err != nil {
					return exitcode.Wrap(err, exitcode.Infra)
				}
				switch end {
				case endDetached:
					fmt.Fprintf(h.stderr, "detached from %s\n", name)
				default:
					if s.ExitCode != nil {
						fmt.Fprintf(h.stderr, "%s exited (code %d)\n", name, *s.ExitCode)
					} else {
						fmt.Fprintf(h.stderr, "%s: the daemon closed the session\n", name)
					}
				}
				return nil
			})
		},
	}
}

// ---- prompt / read / send-keys ----------------------------------------------------------------

func (h *herdCLI) promptCmd() *cobra.Command {
	var wait, answer, now bool
	var timeout, states, cont string
	cmd := &cobra.Command{
		Use:   "prompt NAME TEXT… [--wait] [--timeout D] [--answer] [--now]",
		Short: "type a prompt into a member, then Enter (TEXT - reads stdin)",
		Example: `  mosh herd prompt api "port the auth routes" --wait
  git diff | mosh herd prompt api -
  mosh herd prompt api 1 --answer      # pick option 1 of a permission menu`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("herd prompt needs a member and text: mosh herd prompt NAME TEXT… (or - to read stdin)")
			}
			name := args[0]
			if err := herd.CheckName(name); err != nil {
				return err
			}
			text := strings.Join(args[1:], " ")
			if len(args) == 2 && args[1] == "-" {
				b, err := io.ReadAll(h.stdin)
				if err != nil {
					return exitcode.New(exitcode.Usage, "cannot read the prompt from stdin: %v", err)
				}
				text = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
			}
			if strings.TrimSpace(text) == "" {
				return usageErr("herd prompt: the text is empty: mosh herd prompt NAME TEXT…")
			}
			opts := herd.PromptOptions{Answer: answer, Wait: wait, Now: now, Continue: cont}
			if answer {
				opts.By = answerBy()
			}
			if wait {
				d, err := waitTimeout(timeout)
				if err != nil {
					return err
				}
				opts.Timeout = d
				if opts.States, err = parseStates(states); err != nil {
					return err
				}
			}
			if isDryRun(cmd) {
				return h.dryPrompt(cmd, name, text, opts)
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Prompt(ctx, name, text, opts)
				if r == nil || (!r.Sent && err != nil) {
					return err
				}
				if perr := h.printPrompt(cmd, r, wait); perr != nil {
					return perr
				}
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the member is blocked or done (see --state)")
	cmd.Flags().StringVar(&timeout, "timeout", "30m", "with --wait: give up after this long (exit 2); 0 = never")
	cmd.Flags().StringVar(&states, "state", "", "with --wait: states to wait for (default blocked,done,idle)")
	cmd.Flags().BoolVar(&answer, "answer", false, "type into a blocked member on purpose (answering its question or menu)")
	cmd.Flags().StringVar(&cont, "continue", "", "queue the text into the member's running or queued task t-N as its next turn (a follow-up) instead of a new task")
	cmd.Flags().BoolVar(&now, "now", false, "type at once into a working member instead of queueing behind its turn (its running task ends canceled)")
	jsonFlag(cmd, "print the result as JSON")
	return cmd
}

// queuedLine says where a queued prompt waits: "queued behind t-4 (position 2)".
func queuedLine(r *herd.PromptResult) string {
	line := "queued"
	if r.Behind != "" {
		line += " behind " + r.Behind
	}
	return line + fmt.Sprintf(" (position %d): typed when %s is next idle or done", r.Position, r.Name)
}

// waitTimeout reads a --timeout value (a bare number is seconds; 0 = no deadline).
func waitTimeout(s string) (time.Duration, error) {
	d, err := parseCLIDuration(s)
	if err != nil {
		return 0, exitcode.New(exitcode.Usage, "--timeout: %v", err)
	}
	return d, nil
}

func (h *herdCLI) printPrompt(cmd *cobra.Command, r *herd.PromptResult, wait bool) error {
	return output(cmd, h.stdout, r, func() error { return h.writePrompt(r, wait) })
}

func (h *herdCLI) writePrompt(r *herd.PromptResult, wait bool) error {
	st := h.style()
	if !st.tty {
		if r.Queued {
			fmt.Fprintln(h.stderr, queuedLine(r))
		}
		fields := []string{r.Name, orDash(r.Task)}
		if wait {
			fields = append(fields, orDash(r.Outcome), orDash(r.State))
		}
		_, err := fmt.Fprintln(h.stdout, strings.Join(fields, "\t"))
		return err
	}
	line := "sent to " + r.Name
	if r.Task != "" {
		line += " (task " + r.Task + ")"
	}
	if r.Queued {
		line += " — " + queuedLine(r)
	}
	if wait {
		line += fmt.Sprintf(" — %s: %s", r.Outcome, st.paint(stateColor(r.State), r.State))
	}
	_, err := fmt.Fprintln(h.stdout, line)
	return err
}

func (h *herdCLI) readCmd() *cobra.Command {
	var lines int
	cmd := &cobra.Command{
		Use:   "read NAME [--lines N]",
		Short: "print the last lines of a member's screen and history",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := herd.CheckName(args[0]); err != nil {
				return err
			}
			if lines < 0 {
				return usageErr("--lines must be positive (e.g. --lines 200)")
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Read(ctx, args[0], lines)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error {
					screen := r.Screen
					if screen != "" && !strings.HasSuffix(screen, "\n") {
						screen += "\n"
					}
					_, err := io.WriteString(h.stdout, screen)
					return err
				})
			})
		},
	}
	cmd.Flags().IntVarP(&lines, "lines", "n", herd.DefaultReadLines, "how many lines")
	jsonFlag(cmd, "print {name, state, screen} as JSON")
	return cmd
}

func (h *herdCLI) sendKeysCmd() *cobra.Command {
	var now bool
	cmd := &cobra.Command{
		Use:   "send-keys NAME KEY… [--json] [-- KEY…]",
		Short: "send keys to a member: Enter, Escape, C-c, Up/Down/Left/Right, Tab, BSpace, Space, digits, literal text",
		Long: "Send keys to a member. Flags are read anywhere before --; everything after -- is keys, so a key\n" +
			"that starts with - (literal text such as -n or --help) goes after --.",
		Example: `  mosh herd send-keys api Escape
  mosh herd send-keys api 1 Enter
  mosh herd send-keys api "yes please" Enter
  mosh herd send-keys api -- --help Enter   # type the text --help`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("herd send-keys needs a member and keys: mosh herd send-keys NAME Enter|Escape|C-c|Up|Tab|TEXT… (keys starting with - go after --)")
			}
			if err := herd.CheckName(args[0]); err != nil {
				return err
			}
			if isDryRun(cmd) {
				return h.drySendKeys(cmd, args[0], args[1:])
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				send := c.SendKeys
				if now {
					send = c.SendKeysNow
				}
				r, err := send(ctx, args[0], args[1:]...)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, nil)
			})
		},
	}
	// Flags anywhere before --, keys after it: `send-keys api Enter --json` prints JSON instead
	// of typing "--json" into the member (issue 11).
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%s (keys that start with - go after --: mosh herd send-keys NAME -- -n)", flagErrorText(err))
	})
	jsonFlag(cmd, "print {name, bytes} as JSON")
	cmd.Flags().BoolVar(&now, "now", false, "type at once, even to a member a hook reports blocked whose screen has not shown the question yet")
	return cmd
}

// interruptCmd is `herd interrupt NAME`: the daemon stops the member's turn (the engines table's
// keys: Escape, then Ctrl-C only if it still reads busy; a remote member's task canceled) and
// closes its task interrupted — the same daemon path as A2A tasks/cancel.
func (h *herdCLI) interruptCmd() *cobra.Command {
	var grace string
	cmd := &cobra.Command{
		Use:   "interrupt NAME [--grace D] [--json]",
		Short: "stop a member's turn without killing it: Escape, then Ctrl-C only if it is still busy (its task ends interrupted)",
		Example: `  mosh herd interrupt api
  mosh herd interrupt api --json | jq -r .task`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := herd.CheckName(args[0]); err != nil {
				return err
			}
			var opts herd.InterruptOptions
			if grace != "" {
				d, err := time.ParseDuration(grace)
				if err != nil || d <= 0 {
					return usageErr("--grace %q is not a positive duration: e.g. --grace 3s", grace)
				}
				opts.Grace = d
			}
			if isDryRun(cmd) {
				if _, err := h.dryMember(cmd, args[0]); err != nil {
					return err
				}
				return h.narrate(cmd, "interrupt the turn of "+args[0], herd.InterruptParams{Name: args[0], GraceMs: opts.Grace.Milliseconds()})
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Interrupt(ctx, args[0], opts)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error {
					switch {
					case r.Remote:
						fmt.Fprintf(h.stdout, "%s: its remote task was canceled", r.Name)
					default:
						fmt.Fprintf(h.stdout, "%s: sent %s", r.Name, strings.Join(append(append([]string(nil), r.Keys...), r.Then...), " "))
					}
					if r.Task != "" {
						fmt.Fprintf(h.stdout, "; task %s %s", r.Task, r.TaskState)
					}
					_, err := fmt.Fprintf(h.stdout, "; now %s\n", r.State)
					return err
				})
			})
		},
	}
	jsonFlag(cmd, "print {name, task, taskState, keys, then, remote, state} as JSON")
	cmd.Flags().StringVar(&grace, "grace", "", "how long to wait after the first keys before Ctrl-C (default: the engines table's, 1.5s)")
	return cmd
}

// ---- wait -------------------------------------------------------------------------------------

func (h *herdCLI) waitCmd() *cobra.Command {
	var anyF, allF bool
	var states, timeout string
	cmd := &cobra.Command{
		Use:   "wait NAME… [--any|--all] [--state S,…] [--timeout D]",
		Short: "wait until members reach a state (exit 0 matched, 2 timeout, 3 gone or ended)",
		Example: `  mosh wait api                       # until its turn ends (done, or idle for a shell) or it is blocked
  mosh wait api web --any --state blocked,done
  mosh wait api --state idle --timeout 10m`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if anyF && allF {
				return usageErr("--any and --all exclude each other: pick one")
			}
			if err := checkNames(args); err != nil {
				return err
			}
			st, err := parseStates(states)
			if err != nil {
				return err
			}
			d, err := waitTimeout(timeout)
			if err != nil {
				return err
			}
			opts := herd.WaitOptions{States: st, Any: anyF, All: allF || (!anyF && len(args) > 1), Timeout: d}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Wait(ctx, args, opts)
				if r == nil || r.Outcome == "" {
					return err // the wait itself failed (daemon, usage): nothing to print
				}
				if perr := h.printWait(cmd, r); perr != nil {
					return perr
				}
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&anyF, "any", false, "return when the first member matches (the others keep running)")
	cmd.Flags().BoolVar(&allF, "all", false, "return when every member matched (the default for several names)")
	cmd.Flags().StringVar(&states, "state", "", "states to wait for, comma-separated (default: the end of the open task, whatever state it leaves, or blocked)")
	cmd.Flags().StringVar(&timeout, "timeout", "30m", "give up after this long (exit 2); 0 = never")
	jsonFlag(cmd, "print {mode, outcome, winner, results} as JSON")
	return cmd
}

func (h *herdCLI) printWait(cmd *cobra.Command, r *herd.WaitResult) error {
	if r.Results == nil {
		r.Results = []herd.WaitOutcome{}
	}
	return output(cmd, h.stdout, r, func() error { return h.writeWait(r) })
}

func (h *herdCLI) writeWait(r *herd.WaitResult) error {
	st := h.style()
	if st.tty && r.Mode == "one" && len(r.Results) == 1 {
		o := r.Results[0]
		outcome := o.Outcome
		if o.ExitCode != nil {
			outcome += fmt.Sprintf(", exit code %d", *o.ExitCode)
		}
		_, err := fmt.Fprintf(h.stdout, "%s: %s (%s)\n", o.Name, st.paint(stateColor(o.State), stateLabel(o.State, o.BlockedOn)), outcome)
		return err
	}
	tb := newTable("name", "outcome", "state")
	for _, o := range r.Results {
		tb.add(cell{Text: o.Name, Color: ansiBold}, plain(o.Outcome), cell{Text: stateLabel(o.State, o.BlockedOn), Color: stateColor(o.State)})
	}
	if err := tb.write(h.stdout, st); err != nil {
		return err
	}
	if st.tty && r.Winner != "" {
		_, err := fmt.Fprintf(h.stdout, "winner: %s\n", st.paint(ansiBold, r.Winner))
		return err
	}
	return nil
}

// ---- kill / prune / restore -------------------------------------------------------------------

func (h *herdCLI) killCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "kill NAME…|t-N…|--all",
		Short: "stop members and forget them, or remove queued prompts (t-N) untyped (exit 3 only if none was found)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return usageErr("herd kill takes member names or --all (not both): mosh kill api web | mosh kill --all")
			}
			if err := checkNames(args); err != nil {
				return err
			}
			if isDryRun(cmd) {
				return h.dryKill(cmd, args, all)
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Kill(ctx, args, all)
				if err != nil {
					if exitcode.Of(err) == exitcode.Gone {
						// None of the names is a member: the result says so too, not only stderr.
						if werr := output(cmd, h.stdout, herd.KillResult{Killed: []string{}, Missing: args}, nil); werr != nil {
							return werr
						}
					}
					return err
				}
				if r.Killed == nil {
					r.Killed = []string{}
				}
				if err := output(cmd, h.stdout, r, func() error {
					if len(r.Killed) > 0 || len(r.Canceled) == 0 {
						h.printNames("killed", r.Killed)
					}
					var tasks, remotes []string
					for _, n := range r.Canceled {
						if slices.Contains(args, n) && taskIDLike(n) {
							tasks = append(tasks, n)
						} else {
							remotes = append(remotes, n)
						}
					}
					if len(tasks) > 0 {
						// kill t-N: queued prompts removed before they were typed.
						h.printNames("canceled the queued task", tasks)
					}
					if len(remotes) > 0 {
						// Remote members: their open task was canceled; they stay registered.
						h.printNames("canceled the open task of", remotes)
					}
					return nil
				}); err != nil {
					return err
				}
				for _, m := range r.Missing {
					fmt.Fprintf(h.stderr, "mosh: no member named %s (see mosh ps)\n", m)
				}
				if len(r.Killed) == 0 && len(r.Canceled) == 0 && len(r.Missing) > 0 {
					return exitcode.Silent(exitcode.Gone)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "kill every member")
	jsonFlag(cmd, "print {killed, missing} as JSON")
	return cmd
}

// printNames prints "verb a, b" on a terminal and one name per line off one.
func (h *herdCLI) printNames(verb string, names []string) {
	if !h.stdoutTTY {
		for _, n := range names {
			fmt.Fprintln(h.stdout, n)
		}
		return
	}
	if len(names) == 0 {
		fmt.Fprintf(h.stdout, "nothing %s\n", verb)
		return
	}
	fmt.Fprintf(h.stdout, "%s %s\n", verb, strings.Join(names, ", "))
}

func (h *herdCLI) pruneCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "forget members that are not running (their ledger is kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if isDryRun(cmd) {
				return h.dryPrune(cmd)
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Prune(ctx)
				if err != nil {
					return err
				}
				if r.Pruned == nil {
					r.Pruned = []string{}
				}
				return output(cmd, h.stdout, r, func() error {
					h.printNames("pruned", r.Pruned)
					return nil
				})
			})
		},
	}
	jsonFlag(cmd, "print {pruned} as JSON")
	return cmd
}

func (h *herdCLI) restoreCmd() *cobra.Command {
	var resume, dryRun bool
	cmd := &cobra.Command{
		Use:   "restore [--resume] [--dry-run]",
		Short: "relaunch remembered members that are not running (same names, cwd and arguments)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Restore(ctx, herd.RestoreOptions{Resume: resume, DryRun: dryRun})
				if err != nil {
					return err
				}
				if r.Actions == nil {
					r.Actions = []herd.RestoreAction{}
				}
				return output(cmd, h.stdout, r, func() error { return h.writeRestore(r, dryRun) })
			})
		},
	}
	cmd.Flags().BoolVar(&resume, "resume", false, "relaunch engines with their resume arguments (continue the last conversation)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be relaunched without doing it")
	jsonFlag(cmd, "print {dryRun, actions} as JSON")
	return cmd
}

func (h *herdCLI) writeRestore(r *herd.RestoreResult, dryRun bool) error {
	st := h.style()
	if len(r.Actions) == 0 {
		if st.tty {
			fmt.Fprintln(h.stderr, "nothing to restore: every remembered member is running")
		}
		return nil
	}
	action := func(a herd.RestoreAction) string {
		if dryRun && a.Action == "restart" {
			return "would restart"
		}
		return a.Action
	}
	tb := newTable("name", "action", "command", "cwd", "reason")
	for _, a := range r.Actions {
		color := ansiGreen
		if a.Action != "restart" {
			color = ansiYellow
		}
		command := strings.TrimSpace(a.Bin + " " + strings.Join(a.Args, " "))
		tb.add(cell{Text: a.Name, Color: ansiBold}, cell{Text: action(a), Color: color}, plain(orDash(command)), plain(st.abbrevHome(orDash(a.Cwd))), plain(orDash(a.Reason)))
	}
	if err := tb.write(h.stdout, st); err != nil {
		return err
	}
	if st.tty && !dryRun {
		fmt.Fprintln(h.stderr, "the shape is back; the processes are new (with this shell's environment)")
	}
	return nil
}

// ---- report -----------------------------------------------------------------------------------

// maxReportPayload bounds the hook JSON a report carries (Claude's Stop payload holds the last
// message, which the ledger truncates at 8000 characters anyway).
const maxReportPayload = 1 << 20

// reportDeadline bounds a whole report (connect + deliver); hooks run it synchronously.
const reportDeadline = 3 * time.Second

func (h *herdCLI) reportCmd() *cobra.Command {
	var ttl, payload string
	cmd := &cobra.Command{
		Use:   "report NAME STATE[:KIND] [--ttl D] [--payload FILE|-]",
		Short: "report a member's state from a hook (an empty NAME is a silent no-op)",
		Long: `Report a member's state, as the engine's hooks do:

  mosh herd report "$MOSH_HERD_NAME" working
  mosh herd report "$MOSH_HERD_NAME" blocked:permission --payload -   # hook JSON on stdin

An empty NAME (a hook fired outside the herd) exits 0 and prints nothing. When no daemon runs the
report is dropped silently (exit 0): there is no member to report on. A report lives for --ttl
(default and maximum 15m) unless a newer reading replaces it.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, stateArg := args[0], args[1]
			if name == "" {
				return nil
			}
			d, err := parseCLIDuration(ttl)
			if err != nil {
				return exitcode.New(exitcode.Usage, "--ttl: %v", err)
			}
			req, err := h.parseReport(name, stateArg, d, payload)
			if err != nil {
				return err
			}
			if isDryRun(cmd) {
				return h.dryReport(cmd, name, stateArg)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			r, err := h.sendReport(ctx, req)
			if err != nil || r == nil {
				return err
			}
			return output(cmd, h.stdout, r, nil)
		},
	}
	cmd.Flags().StringVar(&ttl, "ttl", "15m", "how long the report holds (capped at 15m)")
	cmd.Flags().StringVar(&payload, "payload", "", "hook JSON to attach: a file, or - for stdin")
	jsonFlag(cmd, "print {name, accepted, state} as JSON")
	return cmd
}

// reportRequest is one hook report, its arguments checked.
type reportRequest struct {
	name, state, kind string
	ttl               time.Duration
	payload           json.RawMessage
}

// parseReport checks a report's arguments (a non-empty name, STATE[:KIND], the TTL, capped at
// herd.MaxReportTTL) and reads its payload from payloadSrc (a file, "-" for stdin, "" for none).
// The command and main's fast path (hookReport) both report through it and sendReport.
func (h *herdCLI) parseReport(name, stateArg string, ttl time.Duration, payloadSrc string) (reportRequest, error) {
	state, kind, err := herd.ParseStateArg(stateArg)
	if err != nil {
		return reportRequest{}, err
	}
	if err := herd.CheckName(name); err != nil {
		return reportRequest{}, err
	}
	raw, err := h.readPayload(payloadSrc)
	if err != nil {
		return reportRequest{}, err
	}
	return reportRequest{name: name, state: state, kind: kind, ttl: min(ttl, herd.MaxReportTTL), payload: raw}, nil
}

// sendReport delivers a report to the running daemon; (nil, nil) when no daemon runs.
func (h *herdCLI) sendReport(ctx context.Context, req reportRequest) (*herd.ReportResult, error) {
	// A hook waits on this command: a hung daemon must not hold the engine's turn for the
	// hook's whole timeout, so the report gives up after reportDeadline.
	ctx, cancel := context.WithTimeout(ctx, reportDeadline)
	defer cancel()
	// A hook must never start a daemon just to drop a report: with no daemon there is no
	// member to report on. Inside a member, MOSH_HERD_DIR names the herd that owns it even
	// when the engine runs with another HOME or MOSH_HOME.
	c, err := h.connectRunningFor(ctx, h.getenv("MOSH_HERD_DIR"))
	if err != nil || c == nil {
		return nil, err
	}
	defer c.Close()
	return c.Report(ctx, req.name, req.state, req.kind, req.ttl, req.payload)
}

func (h *herdCLI) readPayload(src string) (json.RawMessage, error) {
	if src == "" {
		return nil, nil
	}
	var r io.Reader
	if src == "-" {
		r = h.stdin
	} else {
		f, err := os.Open(src)
		if err != nil {
			return nil, exitcode.New(exitcode.Usage, "--payload: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxReportPayload+1))
	if err != nil {
		return nil, exitcode.New(exitcode.Usage, "--payload: %v", err)
	}
	switch {
	case len(b) > maxReportPayload:
		return nil, exitcode.New(exitcode.Usage, "--payload is larger than %d bytes: pass the hook's JSON only", maxReportPayload)
	case len(bytes.TrimSpace(b)) == 0:
		return nil, nil
	case !json.Valid(b):
		return nil, exitcode.New(exitcode.Usage, "--payload is not JSON: pass the hook's JSON input (or leave --payload out)")
	}
	return json.RawMessage(b), nil
}

// ---- status / doctor / explain ----------------------------------------------------------------

func (h *herdCLI) statusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "show the herd: substrate, socket, directory, members, live, blocked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Status(ctx)
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error {
					st := h.style()
					return h.writeFields([][2]string{
						{"substrate", r.Substrate},
						{"socket", r.Socket},
						{"dir", st.abbrevHome(r.Dir)},
						{"members", fmt.Sprint(r.Members)},
						{"live", fmt.Sprint(r.Live)},
						{"blocked", fmt.Sprint(r.Blocked)},
						{"daemon pid", fmt.Sprint(r.DaemonPid)},
						{"uptime", fmtUptime(st, r.UptimeMs)},
					})
				})
			})
		},
	}
	jsonFlag(cmd, "print the status as JSON")
	return cmd
}

func fmtUptime(st outputStyle, ms int64) string {
	if !st.tty {
		return fmt.Sprint(ms)
	}
	return fmtAge(time.Duration(ms) * time.Millisecond)
}

// writeFields prints key/value pairs: aligned "key: value" on a terminal, "key\tvalue" off one.
func (h *herdCLI) writeFields(kv [][2]string) error {
	st := h.style()
	width := 0
	for _, p := range kv {
		width = max(width, len(p[0]))
	}
	var b strings.Builder
	for _, p := range kv {
		if st.tty {
			fmt.Fprintf(&b, "%-*s  %s\n", width+1, p[0]+":", escapeControls(p[1], ""))
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", p[0], tsvField(p[1]))
		}
	}
	_, err := io.WriteString(h.stdout, b.String())
	return err
}

func (h *herdCLI) doctorCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "check the herd: daemon, manifest drift, stale reports, directories, rules.json (exit 5 on a failure)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := h.options()
			if err != nil {
				return err
			}
			r, err := herd.Doctor(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if r.Checks == nil {
				r.Checks = []herd.DoctorCheck{}
			}
			if err := output(cmd, h.stdout, r, func() error { return h.writeDoctor(r) }); err != nil {
				return err
			}
			if !r.OK {
				return exitcode.Silent(exitcode.Infra)
			}
			return nil
		},
	}
	jsonFlag(cmd, "print {ok, level, herdDir, checks} as JSON")
	return cmd
}

func (h *herdCLI) writeDoctor(r *herd.DoctorResult) error {
	st := h.style()
	if !st.tty {
		tb := newTable("check", "level", "detail", "fix")
		for _, c := range r.Checks {
			tb.add(plain(c.Name), plain(c.Level), plain(c.Detail), plain(c.Fix))
		}
		return tb.write(h.stdout, st)
	}
	var b strings.Builder
	for _, c := range r.Checks {
		mark, color := "✓", ansiGreen
		switch c.Level {
		case "warn":
			mark, color = "!", ansiYellow
		case "fail":
			mark, color = "✗", ansiRed
		}
		fmt.Fprintf(&b, "%s %s — %s\n", st.paint(color, mark), c.Name, c.Detail)
		if c.Fix != "" && c.Level != "ok" {
			fmt.Fprintf(&b, "    fix: %s\n", c.Fix)
		}
	}
	switch r.Level {
	case "fail":
		b.WriteString(st.paint(ansiRed, "the herd has a problem (see the fixes above)") + "\n")
	case "warn":
		b.WriteString(st.paint(ansiYellow, "the herd works, with warnings") + "\n")
	default:
		b.WriteString(st.paint(ansiGreen, "the herd is healthy") + "\n")
	}
	_, err := io.WriteString(h.stdout, b.String())
	return err
}

func (h *herdCLI) explainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain NAME",
		Short: "say which rule or hook report decided a member's state, and what its screen shows",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := herd.CheckName(args[0]); err != nil {
				return err
			}
			return h.withClient(cmd, func(ctx context.Context, c *herd.Client) error {
				r, err := c.Explain(ctx, args[0])
				if err != nil {
					return err
				}
				return output(cmd, h.stdout, r, func() error { return h.writeExplain(r) })
			})
		},
	}
	jsonFlag(cmd, "print every reading, the evidence and the screen bottom as JSON")
	return cmd
}

func (h *herdCLI) writeExplain(r *herd.ExplainResult) error {
	st := h.style()
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s, by %s\n", st.paint(ansiBold, r.Name), r.Engine,
		st.paint(stateColor(r.State), stateLabel(r.State, r.BlockedOn)), r.Authority)
	if r.Decided != "" {
		fmt.Fprintf(&b, "why: %s\n", r.Decided)
	}
	reading := func(label string, rd *herd.Reading) {
		if rd == nil {
			return
		}
		fmt.Fprintf(&b, "%-8s %s", label+":", stateLabel(rd.State, rd.BlockedOn))
		if rd.Rule != "" {
			fmt.Fprintf(&b, "  rule %s", rd.Rule)
		}
		if rd.AtMs > 0 {
			fmt.Fprintf(&b, "  at %s", time.UnixMilli(rd.AtMs).UTC().Format(time.RFC3339))
		}
		if rd.ExpiresMs > 0 {
			fmt.Fprintf(&b, "  expires %s", time.UnixMilli(rd.ExpiresMs).UTC().Format(time.RFC3339))
		}
		b.WriteByte('\n')
	}
	reading("runtime", r.Runtime)
	reading("remote", r.Remote)
	reading("hook", r.Hook)
	reading("screen", r.Screen)
	if r.Title != "" {
		fmt.Fprintf(&b, "title:   %s\n", r.Title)
	}
	if len(r.Evidence) > 0 {
		b.WriteString("matched:\n")
		for _, l := range r.Evidence {
			fmt.Fprintf(&b, "  │ %s\n", l)
		}
	}
	if len(r.Bottom) > 0 {
		b.WriteString("screen bottom:\n")
		for _, l := range r.Bottom {
			fmt.Fprintf(&b, "  │ %s\n", l)
		}
	}
	_, err := io.WriteString(h.stdout, b.String())
	return err
}

// ---- daemon -----------------------------------------------------------------------------------

func (h *herdCLI) daemonCmd() *cobra.Command {
	var foreground bool
	cmd := &cobra.Command{
		Use:   "daemon status|stop [--yes] | --foreground",
		Short: "inspect or stop the herd daemon, or run it in the foreground for a service manager",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !foreground {
				return usageErr("herd daemon needs a verb: mosh herd daemon status | stop [--yes] | --foreground")
			}
			home, err := h.home()
			if err != nil {
				return err
			}
			return runForegroundDaemon(cmd.Context(), home)
		},
	}
	cmd.Flags().BoolVar(&foreground, "foreground", false, "run the daemon in this process (for systemd, launchd, containers)")

	status := &cobra.Command{
		Use:   "status",
		Short: "say whether the daemon runs, its pid, uptime, members and clients (never starts one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := h.options()
			if err != nil {
				return err
			}
			r, err := herd.Probe(cmd.Context(), opts)
			if err != nil {
				return err
			}
			return output(cmd, h.stdout, r, func() error { return h.writeDaemonStatus(r) })
		},
	}
	jsonFlag(status, "print the daemon status as JSON")

	var yes bool
	stop := &cobra.Command{
		Use:   "stop [--yes]",
		Short: "stop the daemon (refuses while members run, unless --yes, which kills them)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if isDryRun(cmd) {
				return h.dryDaemonStop(cmd, yes)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			opts, err := h.options()
			if err != nil {
				return err
			}
			// Returns once the daemon's process is gone: the next verb starts a fresh one.
			r, err := herd.StopDaemon(ctx, opts, yes)
			if err != nil {
				return err
			}
			return output(cmd, h.stdout, r, func() error {
				if !r.Stopped {
					fmt.Fprintln(h.stderr, "no herd daemon is running")
					return nil
				}
				if h.stdoutTTY {
					msg := "herd daemon stopped"
					if len(r.Killed) > 0 {
						msg += " (killed " + strings.Join(r.Killed, ", ") + ")"
					}
					fmt.Fprintln(h.stdout, msg)
				}
				return nil
			})
		},
	}
	stop.Flags().BoolVarP(&yes, "yes", "y", false, "stop even though members run (they are killed)")
	jsonFlag(stop, "print {stopped, killed} as JSON")
	cmd.AddCommand(status, stop)
	return cmd
}

// writeDaemonStatus is `herd daemon status` for a person.
func (h *herdCLI) writeDaemonStatus(r *herd.DaemonStatusResult) error {
	st := h.style()
	if !r.Running {
		return h.writeFields([][2]string{{"running", "no"}, {"socket", r.Socket}, {"dir", st.abbrevHome(r.Dir)}})
	}
	return h.writeFields([][2]string{
		{"running", "yes"},
		{"pid", fmt.Sprint(r.Pid)},
		{"uptime", fmtUptime(st, r.UptimeMs)},
		{"members", fmt.Sprint(r.Members)},
		{"live", fmt.Sprint(r.Live)},
		{"clients", fmt.Sprint(r.Clients)},
		{"socket", r.Socket},
		{"dir", st.abbrevHome(r.Dir)},
		{"version", orDash(r.Version)},
	})
}

// runForegroundDaemon serves the herd in this process until SIGINT or SIGTERM (what service
// managers send) or a client's `mosh herd daemon stop`.
func runForegroundDaemon(ctx context.Context, home string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return herdd.Serve(ctx, home)
}
