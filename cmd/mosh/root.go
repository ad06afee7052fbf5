//go:build !windows

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mosh-dev/mosh/builtins"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/runtime"
	"github.com/mosh-dev/mosh/runtime/repl"
	"github.com/mosh-dev/mosh/runtime/scriptverb"
)

// commandFamilies is the whole command tree, in one list: each family, defined in its own file,
// adds its verbs to a parent (gs.parentCommand("herd"), shared with `parent: herd` script verbs)
// and returns its top-level commands. Nothing registers itself from an init function
// (TestCommandTreeIsOneList). A family only builds commands; it must not touch the network or
// the disk (it runs on every invocation, `mosh -e 0` included).
var commandFamilies = []func(gs *globalState) []*cobra.Command{
	herdFamily,   // herd_register.go: mosh herd VERB, ps, attach, wait, kill, restore
	remoteFamily, // herd_remote.go
	serveFamily,  // serve.go
	tasksFamily,  // tasks.go
	toolsFamily,  // tools.go
	mcpFamily,    // mcp.go
}

// parentSummaries describe the parents that group verbs, used when the parent is created.
var parentSummaries = map[string]string{
	"herd": "drive the herd: named coding-agent sessions that outlive the terminal",
}

// parentCommand returns `mosh NAME`, the command that groups a family's verbs, creating it on
// first use. Factories and script verbs with `parent: NAME` share it. The caller may set RunE
// (e.g. bare `mosh herd` = ps); by default it prints its help.
func (gs *globalState) parentCommand(name string) *cobra.Command {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.parents == nil {
		gs.parents = map[string]*cobra.Command{}
	}
	if c := gs.parents[name]; c != nil {
		return c
	}
	c := &cobra.Command{
		Use:   name + " VERB [args...]",
		Short: parentSummaries[name],
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.RunE == nil {
				return exitcode.New(exitcode.Usage, "unknown %s verb %q: run 'mosh %s --help' or 'mosh commands' to list them", name, args[0], name)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	gs.parents[name] = c
	return c
}

// cli holds one invocation's global flags.
type cli struct {
	gs      *globalState
	max     int
	dryRun  bool
	timeout durationFlag
	eval    string
	version bool
	jq      string // --jq EXPR of the command that runs (jqFlags)
	catalog *scriptverb.Catalog
	// verbErr is a broken header of the verb the arguments named; reported if nothing else matches.
	verbErr error
	// verbs and headerErrs are the full catalog, loaded only for listings and help.
	verbs      []*scriptverb.Verb
	headerErrs []error
}

// buildScope is the part of the command tree an invocation can reach. Building only that part
// keeps start-up small: `mosh -e 0`, a script file and stdin reach no command at all, and every
// hook runs `mosh herd report`, which reaches one verb.
type buildScope struct {
	all bool
	// top is the one top-level command reachable ("" = none); verb, when top is a parent
	// ("herd"), the one verb under it ("" = all of them).
	top, verb string
}

// wants reports whether a command reached as name (or one of its aliases) under parent ("" =
// the root) must be built.
func (s buildScope) wants(parent string, names ...string) bool {
	if s.all {
		return true
	}
	want := s.top
	if parent != "" {
		if parent != s.top {
			return false
		}
		if s.verb == "" {
			return true
		}
		want = s.verb
	}
	for _, n := range names {
		if n == want {
			return true
		}
	}
	return false
}

// none: the invocation runs a script (-e, a file, stdin, the REPL); no command is reachable.
func (s buildScope) none() bool { return !s.all && s.top == "" }

// scopeOf mirrors how newRootCommand resolves an invocation. A first word that cannot name a
// command (a path: "x.mosh", "./x", "-") reaches nothing: every command and verb name is
// scriptverb.ValidName (TestCommandNamesAreVerbNames).
func scopeOf(inv invocation) buildScope {
	switch {
	case inv.eval:
		return buildScope{}
	case len(inv.words) == 0:
		return buildScope{all: inv.help}
	case inv.words[0] == "help" || inv.words[0] == "commands" || inv.help || wantsWholeTree(inv.words[0]):
		return buildScope{all: true}
	case isParentName(inv.words[0]):
		if len(inv.words) == 1 {
			return buildScope{all: true}
		}
		return buildScope{top: inv.words[0], verb: inv.words[1]}
	case !scriptverb.ValidName(inv.words[0]):
		return buildScope{}
	}
	return buildScope{top: inv.words[0]}
}

// wantsWholeTree: `mosh completion SHELL` describes every command, and cobra's hidden
// __complete (what the completion scripts run) may complete any of them.
func wantsWholeTree(word string) bool {
	return word == "completion" || strings.HasPrefix(word, "__complete")
}

// newRootCommand builds the command tree for args: only the part the arguments can reach
// (buildScope). Script verbs are added lazily too: only the one the arguments name, or all of
// them for listings and help, so start-up does not grow with the number of installed scripts.
func newRootCommand(gs *globalState, args []string) *cobra.Command {
	c := &cli{gs: gs, max: builtins.DefaultMax}
	inv := scanArgs(args)
	scope := scopeOf(inv)
	gs.mu.Lock()
	gs.parents = nil // parents belong to one command tree; a globalState may build several
	gs.scope = scope
	gs.argv = args
	gs.mu.Unlock()
	root := &cobra.Command{
		Use:   "mosh [FILE.mosh | -e CODE | -] [args...]",
		Short: "moshscript runtime and agent herd",
		Long: "mosh runs moshscript (JavaScript with top-level await, imports and a shell-friendly vocabulary)\n" +
			"and drives a herd of coding-agent sessions.\n\n" +
			"  mosh FILE.mosh [args...]   run a script (args reach it as argv)\n" +
			"  mosh -e CODE [args...]     run CODE\n" +
			"  mosh -                     run the script on stdin\n" +
			"  mosh                       REPL on a terminal\n" +
			"  mosh commands              every verb and script function, with usage",
		Args:              cobra.ArbitraryArgs,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE:              c.runRoot,
	}
	root.Flags().SetInterspersed(false) // everything after FILE belongs to the script
	pf := root.PersistentFlags()
	c.addMaxFlag(root) // only where a script runs: the root, run and script verbs
	pf.BoolVar(&c.dryRun, "dry-run", false, "side-effecting verbs and builtins say what they would do and do nothing")
	pf.Var(&c.timeout, "timeout", "end the run after DUR (500ms, 2s, 10m, 1h; a bare number is seconds)")
	root.Flags().StringVarP(&c.eval, "eval", "e", "", "run CODE instead of a file")
	root.Flags().BoolVar(&c.version, "version", false, "print mosh's version, commit and Go version")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return exitcode.New(exitcode.Usage, "%s (see '%s --help')", flagErrorText(err), cmd.CommandPath())
	})
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		out, _ := gs.Stdout.(*countingWriter)
		if err := jqImpliesJSON(cmd, out); err != nil {
			return err
		}
		return checkDryRun(cmd, args)
	}
	if !scope.none() {
		root.SetHelpCommand(c.helpCmd())
		for _, b := range []struct {
			name  string
			build func() *cobra.Command
		}{{"run", c.runCmd}, {"commands", c.commandsCmd}, {"types", c.typesCmd}, {"exit-codes", exitCodesTopic}, {"script-headers", scriptHeadersTopic}, {"completion", completionCmd}} {
			if scope.wants("", b.name) {
				root.AddCommand(b.build())
			}
		}
		for _, f := range commandFamilies {
			root.AddCommand(f(gs)...)
		}
		gs.mu.Lock()
		for _, p := range gs.parents {
			if !p.HasParent() {
				root.AddCommand(p)
			}
		}
		gs.mu.Unlock()
	}

	switch {
	case inv.eval:
		root.ResetCommands() // `mosh -e CODE run` passes "run" to the script
	case len(inv.words) == 0:
		if inv.help {
			c.addAllVerbs(root)
		} else {
			root.ResetCommands()
		}
	case inv.words[0] == "help" || inv.words[0] == "commands" || wantsWholeTree(inv.words[0]):
		c.addAllVerbs(root)
		if strings.HasPrefix(inv.words[0], "__complete") {
			addMemberCompletion(root, newHerdCLI(gs))
		}
	case isParentName(inv.words[0]):
		if len(inv.words) == 1 || inv.help {
			c.addAllVerbs(root)
		} else if sub, rest, err := root.Find(inv.words[:2]); err != nil || sub.Name() == inv.words[0] || len(rest) > 0 {
			// No Go verb of that name (a Go verb wins over a script verb, so only then is the
			// script catalog read).
			c.addNamedVerb(root, inv.words[0], inv.words[1])
		}
	default:
		if sub, _, err := root.Find(inv.words[:1]); err == nil && sub != root {
			break // a Go command wins over a script verb of the same name
		}
		if c.addNamedVerb(root, "", inv.words[0]) {
			break
		}
		root.ResetCommands() // a file: its name must not be taken for a command
	}
	jqFlags(root, &c.jq)
	ownArgErrors(root)
	return root
}

// invocation is what the arguments say before cobra parses them.
type invocation struct {
	eval, help bool
	words      []string // the first positionals: the command path ("herd", "wait") or the file
}

// scanArgs finds the leading positionals, skipping the root's flags and their values.
func scanArgs(args []string) invocation {
	var inv invocation
	for i := 0; i < len(args) && len(inv.words) < 2; i++ {
		a := args[i]
		if len(inv.words) == 1 && inv.words[0] != "herd" {
			break
		}
		switch {
		case a == "--":
			if i+1 < len(args) && len(inv.words) == 0 {
				inv.words = append(inv.words, args[i+1])
			}
			return inv
		case a == "-" || !strings.HasPrefix(a, "-"):
			inv.words = append(inv.words, a)
		case len(inv.words) > 0:
			// a flag of the subcommand; its value cannot be told apart here
		case a == "-e" || a == "--eval" || strings.HasPrefix(a, "--eval=") || (strings.HasPrefix(a, "-e") && !strings.HasPrefix(a, "--")):
			inv.eval = true // every positional is the code's argv
			return inv
		case a == "-h" || a == "--help":
			inv.help = true
		case a == "--max" || a == "--timeout":
			i++
		}
	}
	return inv
}

// runWideFlag annotates a flag that every script run takes (not the verb's own).
const runWideFlag = "mosh-run-wide"

// addMaxFlag gives a command that runs a script moshcode's --max: how many times `alive` reads
// true. Verbs that run no script do not show it.
func (c *cli) addMaxFlag(cmd *cobra.Command) {
	if cmd.Flags().Lookup("max") == nil {
		cmd.Flags().IntVar(&c.max, "max", builtins.DefaultMax, "how many times alive reads true (a script loop's safety cap; 0 = no cap)")
		// A run-wide flag, like --timeout: `mosh commands` lists a verb's own (header) flags.
		_ = cmd.Flags().SetAnnotation("max", runWideFlag, []string{"true"})
	}
}

func (c *cli) runCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run FILE [args...]",
		Short: "run a script (same as mosh FILE)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitcode.New(exitcode.Usage, "run needs a script: mosh run FILE.mosh [args...] (or - for stdin)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return c.runFile(cmd.Context(), args[0], args[1:]) },
	}
	cmd.Flags().SetInterspersed(false)
	c.addMaxFlag(cmd)
	return cmd
}

func (c *cli) runRoot(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if c.version {
		_, err := fmt.Fprintln(c.gs.Stdout, readBuildVersion())
		return err
	}
	if cmd.Flags().Changed("eval") {
		return c.runScript(ctx, runtime.Script{Name: "<eval>", Source: []byte(c.eval)}, args, nil, "")
	}
	if len(args) == 0 {
		if c.gs.StdinTTY {
			return c.runREPL(ctx)
		}
		return c.runFile(ctx, "-", nil)
	}
	return c.runFile(ctx, args[0], args[1:])
}

// runFile runs a script file, or stdin for "-".
func (c *cli) runFile(ctx context.Context, file string, args []string) error {
	if file == "-" {
		src, err := io.ReadAll(c.gs.Stdin)
		if err != nil {
			return exitcode.New(exitcode.Usage, "reading the script from stdin: %v", err)
		}
		// The script was stdin; the script's own stdin is empty.
		return c.runScriptWithStdin(ctx, runtime.Script{Name: "<stdin>", Source: src}, args, nil, "", bytes.NewReader(nil))
	}
	src, err := os.ReadFile(file)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if c.verbErr != nil {
				return exitcode.Wrap(c.verbErr, exitcode.Usage)
			}
			if !strings.ContainsAny(file, "/.") {
				return exitcode.New(exitcode.Usage, "%s: no such command or file (run 'mosh commands' to list verbs, or give the path of a .mosh file)", file)
			}
			return exitcode.New(exitcode.Usage, "%s: no such file", file)
		case isDir(file):
			return exitcode.New(exitcode.Usage, "%s is a directory, not a script", file)
		}
		return exitcode.New(exitcode.Usage, "cannot read %s: %v", file, err)
	}
	return c.runScript(ctx, runtime.Script{Name: file, Source: src}, args, headerDefaults(file, src), "")
}

// headerDefaults gives a script run as a file the defaults of the flags its header declares, so
// a verb script also runs directly (its arguments still reach argv untouched). A header that
// does not parse is just a comment here.
func headerDefaults(file string, src []byte) map[string]any {
	h, err := scriptverb.ParseHeader(file, bytes.NewReader(src))
	if err != nil || len(h.Flags) == 0 {
		return nil
	}
	flags := make(map[string]any, len(h.Flags))
	for _, f := range h.Flags {
		flags[f.Name] = f.ScriptValue(f.Default)
	}
	return flags
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// runScript runs one script with the vocabulary installed and the global flags applied.
func (c *cli) runScript(ctx context.Context, s runtime.Script, args []string, flags map[string]any, dir string) error {
	return c.runScriptWithStdin(ctx, s, args, flags, dir, c.gs.Stdin)
}

func (c *cli) runScriptWithStdin(ctx context.Context, s runtime.Script, args []string, flags map[string]any, dir string, stdin io.Reader) error {
	max, err := c.scriptMax()
	if err != nil {
		return err
	}
	if args == nil {
		args = []string{}
	}
	env := c.gs.scriptEnv()
	cfg := builtins.Config{
		Args: args, Env: env, Max: max, DryRun: c.dryRun, Flags: flags,
		Stdout: c.gs.Stdout, Stderr: c.gs.Stderr, StdoutTTY: c.gs.StdoutTTY, StderrTTY: c.gs.StderrTTY,
		StdinTTY: c.gs.StdinTTY,
	}
	return runtime.Run(ctx, s, runtime.Options{
		Args: args, Env: env, Stdin: stdin, Stdout: c.gs.Stdout, Stderr: c.gs.Stderr,
		Timeout: time.Duration(c.timeout), Dir: dir,
		Install: func(vu runtime.VU) error { return builtins.Install(vu, cfg) },
	})
}

// scriptMax is --max as the builtins take it: 0 lifts the cap (builtins.NoMax), a negative
// count is a usage error.
func (c *cli) scriptMax() (int, error) {
	switch {
	case c.max < 0:
		return 0, exitcode.New(exitcode.Usage, "--max must be 0 (no cap) or a positive count of how many times alive reads true, not %d", c.max)
	case c.max == 0:
		return builtins.NoMax, nil
	}
	return c.max, nil
}

func (c *cli) runREPL(ctx context.Context) error {
	if c.gs.releaseSignals != nil {
		c.gs.releaseSignals() // the REPL handles Ctrl-C itself
	}
	home, err := c.gs.MoshHome()
	if err != nil {
		return exitcode.Wrap(fmt.Errorf("finding MOSH_HOME for the REPL history: %w (set MOSH_HOME)", err), exitcode.Infra)
	}
	max, err := c.scriptMax()
	if err != nil {
		return err
	}
	env := c.gs.scriptEnv()
	cfg := builtins.Config{Args: []string{}, Env: env, Max: max, DryRun: c.dryRun, Stdout: c.gs.Stdout, Stderr: c.gs.Stderr, StdoutTTY: c.gs.StdoutTTY}
	return repl.Run(ctx, repl.Options{
		Stdin: c.gs.Stdin, Stdout: c.gs.Stdout, Stderr: c.gs.Stderr,
		HistoryPath: filepath.Join(home, "repl_history"),
		Banner:      "mosh " + readBuildVersion().Version + ": moshscript REPL, .help for help, .exit or Ctrl-D to leave",
		Env:         env, Args: []string{},
		Install: func(vu runtime.VU) error { return builtins.Install(vu, cfg) },
	})
}

// durationFlag is a pflag.Value for durations: 500ms, 2s, 10m, 1h, or bare seconds.
type durationFlag time.Duration

func (d *durationFlag) String() string {
	if *d == 0 {
		return ""
	}
	return time.Duration(*d).String()
}
func (d *durationFlag) Type() string { return "DUR" }
func (d *durationFlag) Set(s string) error {
	v, err := scriptverb.ParseDuration(s, time.Second)
	if err != nil {
		return err
	}
	*d = durationFlag(v)
	return nil
}

var _ pflag.Value = (*durationFlag)(nil)
