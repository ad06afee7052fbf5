//go:build !windows

package main

// `mosh herd mcp`: the nine agent tools of seed 002 over MCP (stdio), herd/mcp behind the SDK.

import (
	"context"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/exitcode"
	herdmcp "github.com/mosh-dev/mosh/herd/mcp"
)

// mcpFamily: `mosh herd mcp`.
func mcpFamily(gs *globalState) []*cobra.Command {
	gs.parentCommand("herd").AddCommand(mcpCmd(gs))
	return nil
}

func mcpCmd(gs *globalState) *cobra.Command {
	var prefix string
	cmd := &cobra.Command{
		Use:   "mcp [--tool-prefix herd_]",
		Short: "serve the nine agent tools (spawn, get_result, message, list, interrupt, inbox, read, close, doctor) over MCP stdio",
		Long: "An MCP server on stdin/stdout for any MCP host (Claude Code, Codex, OpenCode…): the host delegates\n" +
			"self-contained tasks to herd members and gets an AgentResult with evidence back (final message,\n" +
			"result.md, git diff, tests). Tools are named <prefix><tool>; --tool-prefix herdr_ gives seed 002's\n" +
			"exact names. Owned tasks live in $MOSH_HOME/mcp (config: $MOSH_HOME/mcp/config.json).",
		Example: `  mosh herd mcp
  claude --mcp-config '{"mcpServers":{"herd":{"command":"mosh","args":["herd","mcp"]}}}'
  mosh herd mcp --tool-prefix herdr_`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prefix == "" || len(prefix) > 32 {
				return usageErr("--tool-prefix %q: use 1-32 characters (letters, digits, '_', '-'), e.g. herd_ or herdr_", prefix)
			}
			for _, r := range prefix {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
					return usageErr("--tool-prefix %q: use letters, digits, '_' or '-' (MCP tool names), e.g. herd_ or herdr_", prefix)
				}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			h := newHerdCLI(gs)
			home, err := h.home()
			if err != nil {
				return err
			}
			c, err := h.connect(ctx) // the command's MOSH_HOME and environment (remote members' tokens)
			if err != nil {
				return err
			}
			defer c.Close()
			cwd, _ := h.cwd("")
			s, err := herdmcp.New(herdmcp.Options{Client: c, Home: home, Prefix: prefix, Cwd: cwd, Version: readBuildVersion().Version})
			if err != nil {
				return exitcode.Wrap(err, exitcode.Infra)
			}
			defer s.Close()
			t := &sdk.IOTransport{Reader: io.NopCloser(gs.Stdin), Writer: nopWriteCloser{gs.Stdout}}
			if err := s.Run(ctx, t); err != nil && ctx.Err() == nil && err != io.EOF {
				return exitcode.Wrap(err, exitcode.Infra)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "tool-prefix", herdmcp.DefaultPrefix, "prefix of the tool names (herdr_ = seed 002's names)")
	jsonFlag(cmd, "accepted for uniformity: MCP output is always JSON-RPC")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
