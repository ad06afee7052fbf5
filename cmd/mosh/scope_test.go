package main

import (
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mosh-dev/mosh/runtime/scriptverb"
)

func scopeTestState(t *testing.T) *globalState {
	t.Helper()
	return &globalState{Env: map[string]string{"MOSH_HOME": t.TempDir()}, Stdout: io.Discard, Stderr: io.Discard,
		Stdin: strings.NewReader(""), Getwd: os.Getwd}
}

// commandPaths lists every command of the tree (not the root) by the words that reach it:
// its path, and the path with each alias.
func commandPaths(root *cobra.Command) [][]string {
	var out [][]string
	var walk func(c *cobra.Command, prefix []string)
	walk = func(c *cobra.Command, prefix []string) {
		for _, sub := range c.Commands() {
			for _, n := range append([]string{sub.Name()}, sub.Aliases...) {
				out = append(out, append(append([]string{}, prefix...), n))
			}
			walk(sub, append(append([]string{}, prefix...), sub.Name()))
		}
	}
	walk(root, nil)
	return out
}

func flagNames(c *cobra.Command) string {
	var names []string
	// LocalFlags and InheritedFlags, not Flags: cobra merges the parents' flags into Flags on
	// first use, so Flags depends on what was asked before.
	c.LocalFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, "^"+f.Name) })
	sort.Strings(names)
	return strings.Join(names, ",")
}

// The scope shortcut for paths relies on this: no command or alias could be named by a word
// that is not a valid verb name.
func TestCommandNamesAreVerbNames(t *testing.T) {
	root := newRootCommand(scopeTestState(t), []string{"help"})
	paths := commandPaths(root)
	if len(paths) < 20 {
		t.Fatalf("the full tree has only %d commands: %v", len(paths), paths)
	}
	for _, p := range paths {
		if n := p[len(p)-1]; !scriptverb.ValidName(n) {
			t.Errorf("command %q: %q is not a valid verb name, so 'mosh %s' would be taken for a file", strings.Join(p, " "), n, n)
		}
	}
}

// Every command reached through a tree built only for it is the command the full tree has:
// same path, same flags, found the same way.
func TestScopedTreeFindsWhatTheFullTreeFinds(t *testing.T) {
	full := newRootCommand(scopeTestState(t), []string{"help"})
	for _, p := range commandPaths(full) {
		want, _, err := full.Find(p)
		if err != nil {
			t.Fatalf("full tree: %v: %v", p, err)
		}
		args := append(append([]string{}, p...), "x")
		root := newRootCommand(scopeTestState(t), args)
		got, _, err := root.Find(p)
		if err != nil || got.CommandPath() != want.CommandPath() || flagNames(got) != flagNames(want) {
			t.Errorf("mosh %s: scoped tree finds %q (flags %s, %v), full tree %q (flags %s)", strings.Join(p, " "),
				got.CommandPath(), flagNames(got), err, want.CommandPath(), flagNames(want))
		}
	}
}

// Scripts reach no command: the tree is the root alone.
func TestScriptInvocationsBuildNoCommands(t *testing.T) {
	for _, args := range [][]string{{"-e", "0"}, {"hello.mosh"}, {"./dir/x"}, {"-"}, {}} {
		root := newRootCommand(scopeTestState(t), args)
		if n := len(root.Commands()); n != 0 {
			t.Errorf("mosh %s built %d commands", strings.Join(args, " "), n)
		}
	}
	// A word that could be a command builds only that one at the top.
	root := newRootCommand(scopeTestState(t), []string{"ls"})
	if c, _, err := root.Find([]string{"ls"}); err != nil || c.Name() != "ps" {
		t.Fatalf("mosh ls: %v %v", c, err)
	}
	if c, _, _ := root.Find([]string{"attach"}); c != root {
		t.Errorf("mosh ls also built %s", c.CommandPath())
	}
}

// herdVerbs names each verb the way the built command does.
func TestHerdVerbNames(t *testing.T) {
	h := newHerdCLI(scopeTestState(t))
	for _, v := range herdVerbs {
		c := v.build(h)
		if got := append([]string{c.Name()}, c.Aliases...); strings.Join(got, " ") != strings.Join(v.names, " ") {
			t.Errorf("herdVerbs lists %v, the command is reached by %v", v.names, got)
		}
	}
}
