//go:build !windows

package main

// mosh commands, mosh help, and the help topics (exit-codes, script-headers).

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mosh-dev/mosh/builtins"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/runtime/scriptverb"
)

// commandsListing is the --json shape of `mosh commands`. Stable: scripts and agents read it.
type commandsListing struct {
	Verbs     []verbInfo      `json:"verbs"`
	Functions []builtins.Info `json:"functions"`
	// Rules: the rule every function of a group follows, by group ("herd": every herd* function
	// returns a promise and never blocks the event loop).
	Rules  map[string]string `json:"rules"`
	Errors []headerProblem   `json:"errors"`
}

type verbInfo struct {
	Path    string     `json:"path"`   // "mosh herd wait"
	Name    string     `json:"name"`   // "wait"
	Parent  string     `json:"parent"` // "" or "herd"
	Usage   string     `json:"usage"`  // "mosh herd wait NAME... [flags]"
	Summary string     `json:"summary"`
	Origin  string     `json:"origin"`         // go | bundled | user
	File    string     `json:"file,omitempty"` // the script of a script verb
	Flags   []flagInfo `json:"flags"`
}

type flagInfo struct {
	Name      string `json:"name"`
	Shorthand string `json:"shorthand,omitempty"`
	Type      string `json:"type"`
	Default   string `json:"default"`
	Usage     string `json:"usage"`
}

type headerProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (c *cli) commandsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "commands [--json]",
		Short: "list every verb and script function with its usage",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l := c.listing(cmd.Root())
			// writeJSON escapes no HTML: signatures hold < and >.
			return output(cmd, c.gs.Stdout, l, func() error {
				c.printListing(l)
				return nil
			})
		},
	}
	jsonFlag(cmd, "print the listing as JSON")
	return cmd
}

// typesCmd prints TypeScript declarations of every script global and built-in module, generated
// from the same registry as `mosh commands`, for editors: `mosh types > mosh.d.ts`.
func (c *cli) typesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "types [--json]",
		Short: "print TypeScript declarations of every script function, value and mosh: module (mosh types > mosh.d.ts)",
		Long: "Prints a .d.ts file declaring every global a .mosh script sees (the builtins of `mosh commands`,\n" +
			"argv/env/flags/alive, console, timers, exit) and every built-in module (import … from \"mosh:eval\").\n" +
			"Save it next to your scripts (mosh types > mosh.d.ts) and editors complete and check .mosh/.ts files.\n" +
			"--json prints {\"file\": \"mosh.d.ts\", \"text\": …}.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			text := builtins.Declarations()
			return output(cmd, c.gs.Stdout, struct {
				File string `json:"file"`
				Text string `json:"text"`
			}{"mosh.d.ts", text}, func() error {
				_, err := fmt.Fprint(c.gs.Stdout, text)
				return err
			})
		},
	}
	jsonFlag(cmd, "print {file, text} as JSON")
	return cmd
}

func (c *cli) listing(root *cobra.Command) commandsListing {
	l := commandsListing{Verbs: []verbInfo{}, Functions: builtins.List(), Rules: map[string]string{}, Errors: []headerProblem{}}
	for _, f := range l.Functions {
		if r := builtins.GroupRule(f.Group); r != "" {
			l.Rules[f.Group] = r
		}
	}
	var walk func(cmd *cobra.Command, parent string)
	walk = func(cmd *cobra.Command, parent string) {
		for _, sub := range cmd.Commands() {
			if sub.Hidden || !sub.IsAvailableCommand() && !sub.HasAvailableSubCommands() {
				continue
			}
			origin := sub.Annotations["origin"]
			if origin == "" {
				origin = "go"
			}
			if sub.Runnable() {
				l.Verbs = append(l.Verbs, verbInfo{
					Path: sub.CommandPath(), Name: sub.Name(), Parent: parent, Usage: strings.TrimSuffix(sub.UseLine(), " [flags]"),
					Summary: sub.Short, Origin: origin, File: sub.Annotations["file"], Flags: flagsOf(sub),
				})
			}
			if sub.HasSubCommands() {
				walk(sub, sub.Name())
			}
		}
	}
	walk(root, "")
	for _, err := range c.headerErrs {
		var he *scriptverb.HeaderError
		if errors.As(err, &he) {
			l.Errors = append(l.Errors, headerProblem{File: he.File, Line: he.Line, Message: he.Msg})
		} else {
			l.Errors = append(l.Errors, headerProblem{Message: err.Error()})
		}
	}
	return l
}

func flagsOf(cmd *cobra.Command) []flagInfo {
	out := []flagInfo{}
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Annotations[runWideFlag] != nil {
			return
		}
		out = append(out, flagInfo{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), Default: f.DefValue, Usage: f.Usage})
	})
	return out
}

func (c *cli) printListing(l commandsListing) {
	var b strings.Builder
	b.WriteString("Verbs (mosh help VERB for details):\n")
	rows := make([][2]string, 0, len(l.Verbs))
	for _, v := range l.Verbs {
		summary := v.Summary
		if v.Origin != "go" {
			summary += " [" + v.Origin + " script]"
		}
		rows = append(rows, [2]string{v.Usage, summary})
	}
	writeTwoColumns(&b, rows)
	b.WriteString("\nScript functions (in .mosh files; mosh help NAME for details):\n")
	groups := make([]string, 0, len(l.Rules))
	for g := range l.Rules {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		fmt.Fprintf(&b, "  Rule: %s\n", l.Rules[g])
	}
	rows = rows[:0]
	for _, f := range l.Functions {
		rows = append(rows, [2]string{f.Usage, f.Summary})
	}
	writeTwoColumns(&b, rows)
	fmt.Fprint(c.gs.Stdout, b.String())
	for _, p := range l.Errors {
		where := p.File
		if p.Line > 0 {
			where = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		if where != "" {
			where += ": "
		}
		fmt.Fprintf(c.gs.Stderr, "mosh: skipped a script verb: %s%s\n", where, p.Message)
	}
}

func writeTwoColumns(b *strings.Builder, rows [][2]string) {
	width := 0
	for _, r := range rows {
		if n := len([]rune(r[0])); n > width && n <= 48 {
			width = n
		}
	}
	for _, r := range rows {
		pad := width - len([]rune(r[0]))
		if pad < 0 {
			fmt.Fprintf(b, "  %s\n  %s  %s\n", r[0], strings.Repeat(" ", width), r[1])
			continue
		}
		fmt.Fprintf(b, "  %s%s  %s\n", r[0], strings.Repeat(" ", pad), r[1])
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return exitcode.New(exitcode.Usage, "%s takes no arguments (got %q)", cmd.CommandPath(), args[0])
	}
	return nil
}

// helpCmd replaces cobra's: it knows script functions and topics besides commands, and never
// runs a script verb (its help comes from the header).
func (c *cli) helpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [VERB | FUNCTION | exit-codes | script-headers]",
		Short: "show help for a verb, a script function or a topic",
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			if len(args) == 0 {
				return root.Help()
			}
			if target, rest, err := root.Find(args); err == nil && target != root && len(rest) == 0 {
				return target.Help()
			}
			if len(args) == 1 {
				if v := builtins.Lookup(args[0]); v != nil {
					c.printFunctionHelp(v)
					return nil
				}
				for _, info := range builtins.List() {
					if info.Name == args[0] {
						fmt.Fprintf(c.gs.Stdout, "%s\n\n%s\n", info.Usage, info.Summary)
						if info.Detail != "" {
							fmt.Fprintf(c.gs.Stdout, "\n%s\n", info.Detail)
						}
						return nil
					}
				}
			}
			if c.verbErr != nil {
				return exitcode.Wrap(c.verbErr, exitcode.Usage)
			}
			return exitcode.New(exitcode.Usage, "no help for %q: it is not a verb, a script function or a topic (run 'mosh commands')", strings.Join(args, " "))
		},
	}
}

func (c *cli) printFunctionHelp(v *builtins.Verb) {
	var traits []string
	if r := builtins.GroupRule(v.Group); r != "" {
		traits = append(traits, r)
	} else if v.Async || v.Promise {
		traits = append(traits, "returns a promise")
	}
	if v.Read {
		trait := "never throws on failure (returns " + emptyText(v.Empty) + "), only on misuse"
		if v.Group == "herd" && strings.HasPrefix(v.Params, "name:") {
			trait += " or a member name not on the roster (code 3)"
		}
		traits = append(traits, trait)
	}
	if v.SideEffect {
		traits = append(traits, "narrated and skipped under --dry-run")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s\n", v.Usage, v.Summary)
	if len(traits) > 0 {
		fmt.Fprintf(&b, "(%s)\n", strings.Join(traits, "; "))
	}
	if v.Detail != "" {
		fmt.Fprintf(&b, "\n%s\n", v.Detail)
	}
	for _, info := range builtins.List() {
		if info.Name == v.Name && info.Signature != "" {
			fmt.Fprintf(&b, "\nTypeScript (mosh types): %s%s\n", v.Name, strings.TrimPrefix(strings.Replace(info.Signature, ") => ", "): ", 1), ""))
		}
	}
	fmt.Fprint(c.gs.Stdout, b.String())
}

func emptyText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func exitCodesTopic() *cobra.Command {
	var b strings.Builder
	b.WriteString("Exit codes of mosh and every verb:\n\n")
	for _, e := range exitcode.Table {
		fmt.Fprintf(&b, "  %-4d %-12s %s\n", e.Code, e.Name, e.Meaning)
	}
	b.WriteString("\nA script that calls exit(N) ends with N.")
	return &cobra.Command{Use: "exit-codes", Short: "what each exit code means", Long: b.String()}
}

func scriptHeadersTopic() *cobra.Command {
	return &cobra.Command{Use: "script-headers", Short: "how a script declares itself a verb", Long: scriptverb.HeaderHelp}
}
