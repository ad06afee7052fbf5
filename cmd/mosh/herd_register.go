package main

import "github.com/spf13/cobra"

// The herd family: `mosh herd VERB` plus the top-level shortcuts ps, attach, wait, kill and
// restore. Bare `mosh herd` (with or without --json) is `mosh herd ps`.
func init() {
	commandFactories = append(commandFactories, func(gs *globalState) []*cobra.Command {
		h := newHerdCLI(gs)
		parent := gs.parentCommand("herd")
		sub, top := herdCommandSet(h)
		parent.AddCommand(sub...)
		var asJSON bool
		parent.Flags().BoolVar(&asJSON, "json", false, "print the roster as a JSON array (bare mosh herd is mosh herd ps)")
		parent.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown herd verb %q: run 'mosh herd --help' to list them", args[0])
			}
			return h.runPs(cmd, asJSON)
		}
		return top
	})
}
