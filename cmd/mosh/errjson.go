package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// watchStdout counts what reaches stdout when the arguments ask for --json (so a failure can
// still print JSON, jsonError); other invocations keep their stdout untouched (a terminal stays
// an *os.File for the tools and scripts that look).
func watchStdout(gs *globalState, args []string) *countingWriter {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || strings.HasPrefix(a, "--json=") {
			out := &countingWriter{w: gs.Stdout}
			gs.Stdout = out
			return out
		}
	}
	return nil
}

// rawStdout is stdout as the process has it, for children that inherit it.
func rawStdout(w io.Writer) io.Writer {
	if c, ok := w.(*countingWriter); ok {
		return c.w
	}
	return w
}

// countingWriter remembers whether anything reached stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// jsonErrorResult is what a verb run with --json prints on stdout when it fails before printing
// its result, so a caller that parses stdout always gets JSON: {"error": {"message", "exitCode"}}.
// The message goes to stderr as well.
type jsonErrorResult struct {
	Error jsonErrorBody `json:"error"`
}

type jsonErrorBody struct {
	Message  string `json:"message"`
	ExitCode int    `json:"exitCode"`
}

// jsonError prints err as JSON on stdout when cmd was run with --json and printed nothing yet.
func jsonError(cmd *cobra.Command, out *countingWriter, err error) {
	if cmd == nil || out == nil || out.n > 0 {
		return
	}
	f := cmd.Flags().Lookup("json")
	if f == nil || f.Value.Type() != "bool" || f.Value.String() != "true" {
		return
	}
	_ = writeJSON(out, jsonErrorResult{Error: jsonErrorBody{
		Message:  strings.TrimRight(err.Error(), "\n"),
		ExitCode: int(exitcode.Of(err)),
	}})
}
