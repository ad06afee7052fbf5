//go:build !windows

package main

// mosh --version, mosh completion SHELL, and the completion of member names.

import (
	"context"
	"fmt"
	"io"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/herd"
)

// buildVersion describes this binary from its build info: the module version ("(devel)" for a
// plain go build), the VCS commit and time the go command stamped, and the Go version.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Time     string `json:"time,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readBuildVersion() buildVersion {
	v := buildVersion{Version: "(devel)", Go: goruntime.Version(), Platform: goruntime.GOOS + "/" + goruntime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the line `mosh --version` prints:
// "mosh (devel) commit 0123abcd4567 (modified) 2026-12-03T08:00:00Z go1.24.1 linux/amd64".
func (v buildVersion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mosh %s", v.Version)
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		fmt.Fprintf(&b, " commit %s", c)
		if v.Modified {
			b.WriteString(" (modified)")
		}
	} else {
		b.WriteString(" commit unknown (built without VCS information)")
	}
	if v.Time != "" {
		b.WriteString(" " + v.Time)
	}
	fmt.Fprintf(&b, " %s %s", v.Go, v.Platform)
	return b.String()
}

// completionCmd is `mosh completion bash|zsh|fish`: cobra's generators over the whole tree
// (script verbs included); dynamic parts (member names) are asked of the running daemon.
func completionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "print a shell completion script (verbs, flags, script verbs and member names)",
		Long: "Print a shell completion script. Load it with:\n\n" +
			"  bash:  source <(mosh completion bash)       (or save it under ~/.local/share/bash-completion/completions/mosh)\n" +
			"  zsh:   mosh completion zsh > \"${fpath[1]}/_mosh\"\n" +
			"  fish:  mosh completion fish > ~/.config/fish/completions/mosh.fish\n\n" +
			"Member names complete from the running daemon; completion never starts one.",
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("completion needs a shell: mosh completion bash|zsh|fish")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				if _, err := io.WriteString(out, bashCompletionGuard); err != nil {
					return err
				}
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			}
			return usageErr("completion: unknown shell %q: use bash, zsh or fish", args[0])
		},
	}
}

// bashCompletionGuard heads the bash script: cobra's script calls _get_comp_words_by_ref from
// the bash-completion package, so without it every Tab printed "command not found". Sourced
// without the package, the script says what to install and registers nothing.
const bashCompletionGuard = `# mosh's completion needs the bash-completion package (its _get_comp_words_by_ref).
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    echo "mosh completion: bash completion needs the bash-completion package (e.g. apt install bash-completion, dnf install bash-completion, brew install bash-completion@2); install it, start a new shell, then load this again" >&2
    return 1 2>/dev/null || exit 1
fi

`

// memberArgs says which positional arguments of a command name a member, from its usage line:
// "attach NAME" → the first; "wait NAME…" and "kill NAME…|t-N…|--all" → every one.
func memberArgs(use string) (first, every bool) {
	fields := strings.Fields(use)
	if len(fields) < 2 {
		return false, false
	}
	arg := fields[1]
	switch {
	case strings.HasPrefix(arg, "NAME…"), strings.HasPrefix(arg, "[NAME]"):
		return true, strings.HasPrefix(arg, "NAME…")
	case arg == "NAME":
		return true, false
	}
	return false, false
}

// addMemberCompletion gives every command whose usage takes NAME a completion of the herd's
// member names.
func addMemberCompletion(root *cobra.Command, h *herdCLI) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.ValidArgsFunction != nil || c.ValidArgs != nil {
			return
		}
		first, every := memberArgs(c.Use)
		if !first {
			return
		}
		c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 && !every {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return h.memberNames(cmd.Context(), args, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	walk(root)
}

// memberNames lists the running herd's members that start with prefix, minus those already
// given. It never starts a daemon: none running completes nothing.
func (h *herdCLI) memberNames(ctx context.Context, given []string, prefix string) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := h.connectRunning(ctx)
	if err != nil || c == nil {
		return nil
	}
	defer c.Close()
	ms, err := c.List(ctx)
	if err != nil {
		return nil
	}
	skip := map[string]bool{}
	for _, g := range given {
		skip[g] = true
	}
	var out []cobra.Completion
	for _, m := range ms {
		if strings.HasPrefix(m.Name, prefix) && !skip[m.Name] {
			out = append(out, cobra.CompletionWithDesc(m.Name, memberDesc(m)))
		}
	}
	return out
}

func memberDesc(m herd.Member) string {
	return strings.TrimSpace(m.Engine + " " + m.State)
}
