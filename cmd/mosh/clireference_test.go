package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// updateCLIReference rewrites docs/cli.md instead of comparing it.
var updateCLIReference = flag.Bool("update", false, "rewrite ../../docs/cli.md from the command tree (TestCLIReference)")

const cliReferencePath = "../../docs/cli.md"

// TestCLIReference keeps docs/cli.md equal to the command tree: every visible command with its
// usage, aliases, description and flags, as `mosh CMD --help` shows them. The tree is built in an
// empty MOSH_HOME, so only the bundled script verbs appear, never the user's own.
func TestCLIReference(t *testing.T) {
	want := cliReference(newRootCommand(scopeTestState(t), []string{"--help"}))
	if *updateCLIReference {
		if err := os.WriteFile(cliReferencePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(cliReferencePath)
	if err != nil {
		t.Fatalf("%v: generate it with `go test ./cmd/mosh -run TestCLIReference -update`", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/cli.md is out of date with the command tree: regenerate it with `go test ./cmd/mosh -run TestCLIReference -update` and commit it")
	}
}

// cliReference renders the command tree under root as one markdown page, commands in the tree's
// order (cobra sorts each level by name), hidden commands and cobra's help command left out.
func cliReference(root *cobra.Command) []byte {
	var b bytes.Buffer
	b.WriteString("# mosh command reference\n\n")
	b.WriteString("Generated from the command tree by `go test ./cmd/mosh -run TestCLIReference -update`; do not edit by hand.\n")
	b.WriteString("`mosh CMD --help` prints the same text. Exit codes: [README](../README.md#exit-codes).\n\n")
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
				walk(sub)
			}
		}
	}
	walk(root)
	for _, c := range cmds[1:] {
		fmt.Fprintf(&b, "- [`%s`](#%s)\n", c.CommandPath(), cliAnchor(c))
	}
	b.WriteString("\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "## %s\n\n", c.CommandPath())
		if c.Short != "" {
			fmt.Fprintf(&b, "%s\n\n", c.Short)
		}
		if c.Runnable() {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
		}
		if len(c.Aliases) > 0 {
			fmt.Fprintf(&b, "Aliases: `%s`\n\n", strings.Join(c.Aliases, "`, `"))
		}
		if long := strings.TrimSpace(c.Long); long != "" && long != c.Short {
			fmt.Fprintf(&b, "```text\n%s\n```\n\n", long)
		}
		if c.Example != "" {
			fmt.Fprintf(&b, "Examples:\n\n```sh\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
		}
		if fs := c.LocalNonPersistentFlags(); c == root && fs.HasAvailableFlags() {
			fmt.Fprintf(&b, "Flags:\n\n```text\n%s```\n\n", fs.FlagUsages())
		} else if fs := c.NonInheritedFlags(); c != root && fs.HasAvailableFlags() {
			fmt.Fprintf(&b, "Flags:\n\n```text\n%s```\n\n", fs.FlagUsages())
		}
		if c == root {
			fmt.Fprintf(&b, "Global flags (every command takes them):\n\n```text\n%s```\n\n", root.PersistentFlags().FlagUsages())
		} else if fs := ownInheritedFlags(c, root); fs.HasAvailableFlags() {
			fmt.Fprintf(&b, "Flags from %s:\n\n```text\n%s```\n\n", c.Parent().CommandPath(), fs.FlagUsages())
		}
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

// ownInheritedFlags are the flags c inherits from a parent other than the root (the root's
// persistent flags are listed once, under mosh).
func ownInheritedFlags(c, root *cobra.Command) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if root.PersistentFlags().Lookup(f.Name) == nil {
			fs.AddFlag(f)
		}
	})
	return fs
}

// cliAnchor is the heading anchor GitHub gives "## mosh herd run": lower case, spaces to dashes.
func cliAnchor(c *cobra.Command) string {
	return strings.ReplaceAll(strings.ToLower(c.CommandPath()), " ", "-")
}
