//go:build !windows

package main

// Script verbs: every scripts/*.mosh embedded in the binary and every $MOSH_HOME/scripts/*.mosh
// becomes `mosh NAME` (or `mosh herd NAME`), with flags from its header (runtime/scriptverb).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/runtime"
	"github.com/mosh-dev/mosh/runtime/scriptverb"
	"github.com/mosh-dev/mosh/scripts"
)

// newCatalog finds verbs in the bundled scripts, then the user's (which shadow bundled ones).
func newCatalog(gs *globalState) *scriptverb.Catalog {
	dirs := []scriptverb.Dir{{
		FS: scripts.Verbs, Origin: "bundled",
		Display: func(f string) string { return "scripts/" + f },
	}}
	if home, err := gs.MoshHome(); err == nil {
		dir := filepath.Join(home, "scripts")
		dirs = append(dirs, scriptverb.Dir{
			FS: os.DirFS(dir), Origin: "user",
			Display: func(f string) string { return filepath.Join(dir, f) },
		})
	}
	return scriptverb.NewCatalog(dirs...)
}

// scripts is the script-verb catalog, made on first use: most invocations never read it.
func (c *cli) scripts() *scriptverb.Catalog {
	if c.catalog == nil {
		c.catalog = newCatalog(c.gs)
	}
	return c.catalog
}

func isParentName(s string) bool {
	for _, p := range scriptverb.Parents {
		if p != "" && p == s {
			return true
		}
	}
	return false
}

// addNamedVerb adds the script verb `mosh [parent] name` if there is one. A verb whose header is
// broken is added as a command that reports the header error, so the user learns why.
func (c *cli) addNamedVerb(root *cobra.Command, parent, name string) bool {
	if !scriptverb.ValidName(name) {
		return false
	}
	v, err := c.scripts().Lookup(name)
	if err != nil {
		c.verbErr = err
		return c.attach(root, parent, brokenVerbCommand(name, err))
	}
	if v == nil {
		return false
	}
	if v.Parent != parent {
		if parent == "" {
			c.verbErr = exitcode.New(exitcode.Usage, "%s is a %s verb: run 'mosh %s %s'", name, v.Parent, v.Parent, name)
		}
		return false
	}
	return c.attach(root, v.Parent, c.verbCommand(v))
}

// addAllVerbs adds every script verb (for help and listings) and remembers broken headers.
func (c *cli) addAllVerbs(root *cobra.Command) {
	verbs, errs := c.scripts().All()
	c.verbs, c.headerErrs = verbs, errs
	for _, v := range verbs {
		if !c.attach(root, v.Parent, c.verbCommand(v)) {
			where := "mosh " + strings.TrimSpace(v.Parent+" "+v.Name)
			c.headerErrs = append(c.headerErrs, &scriptverb.HeaderError{File: v.File,
				Msg: fmt.Sprintf("%q is a built-in command, which wins over the script: rename the file", where)})
		}
	}
}

// attach adds cmd under parent ("" = root) unless a command of that name is there already (Go
// commands win over scripts).
func (c *cli) attach(root *cobra.Command, parent string, cmd *cobra.Command) bool {
	p := root
	if parent != "" {
		p = c.gs.parentCommand(parent)
		if !p.HasParent() {
			root.AddCommand(p)
		}
	}
	for _, existing := range p.Commands() {
		if existing.Name() == cmd.Name() {
			return false
		}
	}
	p.AddCommand(cmd)
	return true
}

func brokenVerbCommand(name string, err error) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              "(broken header: run it to see why)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return exitcode.Wrap(fmt.Errorf("%w (fix the header: see 'mosh help script-headers')", err), exitcode.Usage)
		},
	}
}

// verbCommand is the cobra command of a script verb: its flags are the header's, parsed in Go;
// the script gets them as `flags` and the positionals as `argv`.
func (c *cli) verbCommand(v *scriptverb.Verb) *cobra.Command {
	use := v.Usage
	switch {
	case use == "":
		use = v.Name + " [args...]"
	case use != v.Name && !strings.HasPrefix(use, v.Name+" "):
		use = v.Name + " " + use
	}
	long := v.Summary
	if v.Detail != "" {
		long += "\n\n" + v.Detail
	}
	long += "\n\nScript: " + v.File
	if v.Shadows != "" {
		long += " (hides the " + v.Shadows + " verb of the same name)"
	}
	cmd := &cobra.Command{
		Use:         use,
		Short:       v.Summary,
		Long:        strings.TrimSpace(long),
		Args:        cobra.ArbitraryArgs,
		Annotations: map[string]string{"origin": v.Origin, "file": v.File},
	}
	values := map[string]func() any{}
	fs := cmd.Flags()
	for _, f := range v.Flags {
		switch f.Type {
		case scriptverb.Bool:
			p := fs.Bool(f.Name, f.Default.(bool), f.Usage)
			values[f.Name] = func() any { return *p }
		case scriptverb.String:
			p := fs.String(f.Name, f.Default.(string), f.Usage)
			values[f.Name] = func() any { return *p }
		case scriptverb.List:
			p := fs.StringArray(f.Name, f.Default.([]string), f.Usage+" (repeatable)")
			values[f.Name] = func() any { return append([]string{}, *p...) }
		case scriptverb.Int:
			p := fs.Int64(f.Name, f.Default.(int64), f.Usage)
			values[f.Name] = func() any { return *p }
		case scriptverb.Duration:
			d := durationFlag(f.Default.(time.Duration))
			fs.Var(&d, f.Name, f.Usage+" (500ms, 2s, 10m; bare number = seconds)")
			values[f.Name] = func() any { return f.ScriptValue(time.Duration(d)) }
		}
	}
	c.addMaxFlag(cmd) // unless the header declares its own --max
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		src, err := v.Source()
		if err != nil {
			return exitcode.New(exitcode.Infra, "reading %s: %v", v.File, err)
		}
		flags := make(map[string]any, len(values))
		for name, get := range values {
			flags[name] = get()
		}
		dir := ""
		if v.Origin == "bundled" {
			// Bundled scripts live in the binary; relative paths they name are the user's.
			if dir, err = c.gs.Getwd(); err != nil {
				dir = "."
			}
		}
		return c.runScript(cmd.Context(), runtime.Script{Name: v.File, Source: src}, args, flags, dir)
	}
	return cmd
}
