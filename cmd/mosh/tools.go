//go:build !windows

package main

// The workflow tools (builtins/tools): `mosh install [TOOL]`, the `mosh gradient …` passthrough
// and `mosh template list`.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/builtins/tools"
	"github.com/mosh-dev/mosh/exitcode"
)

// toolsFamily: `mosh install`, the pass-through tools and `mosh template`.
func toolsFamily(gs *globalState) []*cobra.Command {
	var out []*cobra.Command
	if gs.scope.wants("", "install") {
		out = append(out, installCmd(gs))
	}
	for _, t := range tools.Table {
		if gs.scope.wants("", t.Name) {
			out = append(out, passthroughCmd(gs, t))
		}
	}
	if gs.scope.wants("", "template", "templates") {
		out = append(out, templateCmd(gs))
	}
	return out
}

// toolRow is one line of `mosh install` (no argument).
type toolRow struct {
	Name      string `json:"name"`
	Summary   string `json:"summary"`
	Package   string `json:"package"`
	Installed bool   `json:"installed"`
	Path      string `json:"path,omitempty"` // what `mosh NAME` runs
}

func installCmd(gs *globalState) *cobra.Command {
	var upgrade bool
	cmd := &cobra.Command{
		Use:   "install [TOOL] [--upgrade] [--dry-run] [--json]",
		Short: "install a workflow tool (gradient: the DigitalOcean Gradient ADK); no TOOL lists them",
		Long: "mosh install gradient finds a Python 3.10 or newer (or $MOSH_PYTHON), makes a virtual environment\n" +
			"of its own in $MOSH_HOME/tools/gradient/venv, pip-installs gradient-adk there and links the\n" +
			"command at $MOSH_HOME/bin/gradient, where `mosh gradient` and gradient() find it. Running it\n" +
			"again changes nothing; --upgrade upgrades; --dry-run prints each step without running it.\n" +
			"It exits 5 when Python is missing or too old, or when pip fails (with pip's last lines).",
		Example: "  mosh install\n  mosh install gradient\n  mosh install gradient --upgrade\n  mosh install gradient --dry-run",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listTools(gs, cmd)
			}
			if len(args) > 1 {
				return usageErr("install takes one tool (got %d): mosh install %s", len(args), strings.Join(tools.Names(), "|"))
			}
			t, ok := tools.Lookup(args[0])
			if !ok {
				return usageErr("mosh install cannot install %q: it installs %s (run `mosh install` to list them)", args[0], strings.Join(tools.Names(), ", "))
			}
			dryRun, _ := cmd.Flags().GetBool("dry-run")
			home, err := gs.MoshHome()
			if err != nil {
				return exitcode.New(exitcode.Infra, "finding MOSH_HOME: %v (set MOSH_HOME)", err)
			}
			verb := "installing"
			if dryRun {
				verb = "dry run: installing"
			}
			fmt.Fprintf(gs.Stderr, "mosh install %s — %s: %s (pip package %s)\n", t.Name, verb, t.Summary, t.Package)
			res, err := tools.Install(cmd.Context(), t, tools.Options{
				Env: gs.Env, MoshHome: home, Upgrade: upgrade, DryRun: dryRun,
				Progress: gs.Stderr, Terminal: gs.StderrTTY,
			})
			if res != nil {
				for _, w := range res.Warnings {
					fmt.Fprintf(gs.Stderr, "warning: %s\n", w)
				}
			}
			if err != nil {
				if res != nil {
					_ = output(cmd, gs.Stdout, res, nil)
				}
				if cmd.Context().Err() != nil {
					return err // Ctrl-C: the cause carries 130
				}
				return exitcode.Wrap(fmt.Errorf("install %s: %w", t.Name, err), exitcode.Infra)
			}
			return output(cmd, gs.Stdout, res, func() error { return writeInstalled(gs, t, res) })
		},
	}
	cmd.Flags().BoolVar(&upgrade, "upgrade", false, "upgrade the tool's package even when it is installed")
	jsonFlag(cmd, "print the result (or the list) as JSON")
	return cmd
}

// writeInstalled is `mosh install TOOL` for a person.
func writeInstalled(gs *globalState, t *tools.Tool, res *tools.Result) error {
	switch {
	case res.DryRun:
		fmt.Fprintf(gs.Stdout, "dry run: nothing was changed (mosh install %s runs these steps)\n", t.Name)
	case res.Already:
		fmt.Fprintf(gs.Stdout, "✓ %s — %s %s is already installed (mosh install %s --upgrade upgrades it)\n", t.Name, t.Package, res.Version, t.Name)
	case res.Upgraded:
		fmt.Fprintf(gs.Stdout, "✓ %s — %s upgraded %s → %s\n", t.Name, t.Package, res.Previous, res.Version)
	default:
		fmt.Fprintf(gs.Stdout, "✓ %s — %s %s in %s; run it with: mosh %s --help\n", t.Name, t.Package, res.Version, res.Venv, t.Name)
	}
	if !res.OnPath && !res.DryRun {
		fmt.Fprintf(gs.Stderr, "note: %s is not on PATH. `mosh %s …` and `mosh herd run -- %s …` find %s anyway;\n"+
			"  to run `%s` directly in your shell, add it: export PATH=\"%s:$PATH\"\n",
			filepath.Dir(res.Command), t.Name, t.Command, t.Command, t.Command, filepath.Dir(res.Command))
	}
	return nil
}

func listTools(gs *globalState, cmd *cobra.Command) error {
	home, _ := gs.MoshHome()
	rows := []toolRow{}
	for _, t := range tools.Table {
		r := toolRow{Name: t.Name, Summary: t.Summary, Package: t.Package}
		if p, err := tools.Find(t, gs.Env, home); err == nil {
			r.Installed, r.Path = true, p
		}
		rows = append(rows, r)
	}
	return output(cmd, gs.Stdout, rows, func() error { return writeTools(gs, rows) })
}

func writeTools(gs *globalState, rows []toolRow) error {
	tab := newTable("tool", "installed", "what")
	for _, r := range rows {
		status := "no"
		if r.Installed {
			status = r.Path
		}
		tab.add(plain(r.Name), plain(status), plain(r.Summary))
	}
	if err := tab.write(gs.Stdout, newOutputStyle(gs.StdoutTTY, gs.Getenv)); err != nil {
		return err
	}
	if gs.StdoutTTY {
		fmt.Fprintln(gs.Stderr, "install one: mosh install TOOL")
	}
	return nil
}

// passthroughCmd is `mosh NAME ARGS…`: the tool's own command with every argument, stdin, the
// terminal and the exit code passed through untouched.
func passthroughCmd(gs *globalState, t *tools.Tool) *cobra.Command {
	return &cobra.Command{
		Use:   t.Name + " [ARGS…]",
		Short: "run " + t.Summary + " (every argument passes through; install with mosh install " + t.Name + ")",
		// Every flag, --help and --version included, belongs to the tool.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, args := splitPassthrough(gs.argv, t.Name, args)
			home, _ := gs.MoshHome()
			bin, err := tools.Find(t, gs.Env, home)
			if err != nil {
				return exitcode.Wrap(err, exitcode.Infra)
			}
			if slices.Contains(own, "--dry-run") || slices.Contains(own, "--dry-run=true") {
				fmt.Fprintf(gs.Stderr, "mosh: dry run: would run %s (nothing done)\n", strings.Join(append([]string{bin}, args...), " "))
				return nil
			}
			return runPassthrough(cmd.Context(), gs, bin, args)
		},
	}
}

// runPassthrough runs bin with args on this process's streams (a terminal stays a terminal: an
// *os.File is handed to the child as is) and returns its exit status. On a terminal a Ctrl-C
// reaches the child itself (it is in the foreground process group) and mosh waits for it to
// finish; off a terminal nothing else signals the child, so a Ctrl-C or SIGTERM to mosh is
// passed on to it as SIGTERM, and mosh exits 130 once it has ended.
func runPassthrough(ctx context.Context, gs *globalState, bin string, args []string) error {
	c := exec.Command(bin, args...)
	c.Stdin, c.Stdout, c.Stderr = gs.Stdin, rawStdout(gs.Stdout), gs.Stderr
	c.Env = gs.Environ()
	if err := c.Start(); err != nil {
		return exitcode.New(exitcode.Infra, "cannot run %s: %v (reinstall it: mosh install %s)", bin, err, filepath.Base(bin))
	}
	ended := make(chan struct{})
	forwarded := false
	var mu sync.Mutex
	go func() {
		select {
		case <-ctx.Done():
			if !gs.StdinTTY {
				mu.Lock()
				forwarded = true
				mu.Unlock()
				_ = c.Process.Signal(syscall.SIGTERM)
			}
		case <-ended:
		}
	}()
	err := c.Wait()
	close(ended)
	mu.Lock()
	defer mu.Unlock()
	if forwarded {
		return context.Cause(ctx)
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return exitcode.New(exitcode.Infra, "running %s: %v", bin, err)
		}
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return exitcode.Silent(exitcode.Code(code))
	}
	return nil
}

func templateCmd(gs *globalState) *cobra.Command {
	list := func(cmd *cobra.Command, args []string) error {
		ts := tools.Templates
		if len(args) > 1 {
			return usageErr("template list takes at most one template name")
		}
		if len(args) == 1 {
			t, ok := tools.LookupTemplate(args[0])
			if !ok {
				names := make([]string, len(tools.Templates))
				for i, t := range tools.Templates {
					names[i] = t.Name
				}
				return usageErr("no ADK template %q: use one of %s", args[0], strings.Join(names, ", "))
			}
			ts = []tools.Template{t}
		}
		return output(cmd, gs.Stdout, ts, func() error { return writeTemplates(gs, ts) })
	}
	listCmd := &cobra.Command{
		Use:   "list [NAME] [--json]",
		Short: "list the Gradient ADK templates; with NAME, the commands that start it",
		RunE:  list,
	}
	jsonFlag(listCmd, "print the templates (with their commands) as JSON")
	cmd := &cobra.Command{
		Use:     "template [list [NAME]] [--json]",
		Aliases: []string{"templates"},
		Short:   "DigitalOcean Gradient ADK templates (digitalocean/gradient-adk-templates) and how to start one",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown template verb %q: use mosh template list [NAME]", args[0])
			}
			return list(cmd, nil)
		},
	}
	jsonFlag(cmd, "print the templates as JSON (bare mosh template is mosh template list)")
	cmd.AddCommand(listCmd)
	return cmd
}

// writeTemplates is `mosh template list [NAME]` for a person.
func writeTemplates(gs *globalState, ts []tools.Template) error {
	if len(ts) == 1 {
		t := ts[0]
		fmt.Fprintf(gs.Stdout, "%s — %s\n%s/tree/main/%s\n\nstart it:\n", t.Name, t.Description, tools.TemplatesRepo, t.Path)
		for _, c := range t.Commands {
			fmt.Fprintf(gs.Stdout, "  %s\n", c)
		}
		fmt.Fprintf(gs.Stdout, "\nthen: mosh wait agent --state idle,blocked   (idle: serving on :8080/run; blocked: a traceback)\n"+
			"deploy: .venv/bin/gradient agent deploy, then mosh herd remote add NAME URL --kind run on the URL it prints\n")
		return nil
	}
	tab := newTable("template", "what")
	for _, t := range ts {
		tab.add(plain(t.Name), plain(t.Description))
	}
	if err := tab.write(gs.Stdout, newOutputStyle(gs.StdoutTTY, gs.Getenv)); err != nil {
		return err
	}
	if gs.StdoutTTY {
		fmt.Fprintf(gs.Stderr, "from %s; the commands to start one: mosh template list NAME\n", tools.TemplatesRepo)
	}
	return nil
}

// splitPassthrough separates mosh's own flags, written before the verb's name (mosh --dry-run
// gradient …), from the tool's arguments: with flag parsing off, cobra hands both to the verb as
// one list. Everything after the name belongs to the tool, --dry-run included.
func splitPassthrough(argv []string, name string, args []string) (own, rest []string) {
	i := slices.Index(argv, name)
	if i <= 0 || i > len(args) {
		return nil, args
	}
	return argv[:i], args[i:]
}
