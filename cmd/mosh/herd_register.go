//go:build !windows

package main

import "github.com/spf13/cobra"

// herdVerb is one command of the herd family with every name that reaches it (Name, then
// Aliases: TestHerdVerbNames checks them against the built commands), so an invocation builds
// only the verb it names — every hook runs `mosh herd report`.
type herdVerb struct {
	names []string
	// sub: a child of `mosh herd`; top: also a top-level shortcut (`mosh ps`). Cobra commands
	// have one parent, so a shortcut is built by the same constructor a second time.
	sub, top bool
	build    func(h *herdCLI) *cobra.Command
}

var herdVerbs = []herdVerb{
	{names: []string{"run"}, sub: true, build: (*herdCLI).runCmd},
	{names: []string{"start"}, sub: true, build: (*herdCLI).startCmd},
	{names: []string{"ps", "list", "ls"}, sub: true, top: true, build: func(h *herdCLI) *cobra.Command { return h.psCmd("ps") }},
	{names: []string{"attach"}, sub: true, top: true, build: (*herdCLI).attachCmd},
	{names: []string{"prompt"}, sub: true, build: (*herdCLI).promptCmd},
	{names: []string{"read"}, sub: true, build: (*herdCLI).readCmd},
	{names: []string{"send-keys"}, sub: true, build: (*herdCLI).sendKeysCmd},
	{names: []string{"answer"}, sub: true, build: (*herdCLI).answerCmd},
	{names: []string{"reply"}, sub: true, build: (*herdCLI).replyCmd},
	{names: []string{"notify"}, sub: true, build: (*herdCLI).notifyCmd},
	{names: []string{"interrupt"}, sub: true, build: (*herdCLI).interruptCmd},
	{names: []string{"wait"}, sub: true, top: true, build: (*herdCLI).waitCmd},
	{names: []string{"kill"}, sub: true, top: true, build: (*herdCLI).killCmd},
	{names: []string{"prune"}, sub: true, build: (*herdCLI).pruneCmd},
	{names: []string{"restore"}, sub: true, top: true, build: (*herdCLI).restoreCmd},
	{names: []string{"report"}, sub: true, build: (*herdCLI).reportCmd},
	{names: []string{"status"}, sub: true, build: (*herdCLI).statusCmd},
	{names: []string{"doctor"}, sub: true, build: (*herdCLI).doctorCmd},
	{names: []string{"explain"}, sub: true, build: (*herdCLI).explainCmd},
	{names: []string{"daemon"}, sub: true, build: (*herdCLI).daemonCmd},
	{names: []string{"top"}, sub: true, build: (*herdCLI).topCmd},
	{names: []string{"cost"}, sub: true, build: (*herdCLI).costCmd},
}

// The herd family: `mosh herd VERB` plus the top-level shortcuts ps, attach, wait, kill and
// restore. Bare `mosh herd` (with or without --json) is `mosh herd ps`.
func herdFamily(gs *globalState) []*cobra.Command {
	h := newHerdCLI(gs)
	parent := gs.parentCommand("herd")
	var top []*cobra.Command
	for _, v := range herdVerbs {
		if v.sub && gs.scope.wants("herd", v.names...) {
			parent.AddCommand(v.build(h))
		}
		if v.top && gs.scope.wants("", v.names...) {
			top = append(top, v.build(h))
		}
	}
	jsonFlag(parent, "print the roster as a JSON array (bare mosh herd is mosh herd ps)")
	parent.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErr("unknown herd verb %q: run 'mosh herd --help' to list them", args[0])
		}
		return h.runPs(cmd)
	}
	return top
}
