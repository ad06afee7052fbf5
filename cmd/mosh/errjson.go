//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/mosh-dev/mosh/exitcode"
)

// watchStdout counts what reaches stdout when the arguments ask for --json (so a failure can
// still print JSON, jsonError); other invocations keep their stdout untouched (a terminal stays
// an *os.File for the tools and scripts that look).
func watchStdout(gs *globalState, args []string) *countingWriter {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || strings.HasPrefix(a, "--json=") || a == "--jq" || strings.HasPrefix(a, "--jq=") {
			out := &countingWriter{w: gs.Stdout, askedJSON: askedJSON(args)}
			gs.Stdout = out
			return out
		}
	}
	return nil
}

// askedJSON says whether the command line sets --json (true), before any "--". A flag error
// can stop parsing before --json is read, and its JSON error is still due.
func askedJSON(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(a, "--json="); ok {
			on, _ = strconv.ParseBool(v)
		}
	}
	return on
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
	// jq, when --jq is given, holds the command's JSON until the filter runs (applyJQ).
	jq *bytes.Buffer
	// askedJSON: the command line sets --json (askedJSON), parsed or not.
	askedJSON bool
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.jq != nil {
		c.n += int64(len(p))
		return c.jq.Write(p)
	}
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
	if f == nil || f.Value.Type() != "bool" || (f.Value.String() != "true" && !out.askedJSON) {
		return
	}
	_ = writeJSON(out, jsonErrorResult{Error: jsonErrorBody{
		Message:  strings.TrimRight(err.Error(), "\n"),
		ExitCode: int(exitcode.Of(err)),
	}})
}

// jqFlags gives every command with --json a --jq EXPR flag: the JSON output filtered by a gjson
// path (github.com/tidwall/gjson: a.b, a.0, a.#, a.#.c, a.#(c=="x")), as gh's --jq does with
// jq; it implies --json. One helper for every verb: the command writes its usual JSON and
// applyJQ filters it on the way out.
func jqFlags(root *cobra.Command, expr *string) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Annotations["origin"] != "" {
			return // a script verb: its output is the script's, JSON or not
		}
		if f := c.Flags().Lookup("json"); f != nil && f.Value.Type() == "bool" && c.Flags().Lookup("jq") == nil {
			c.Flags().StringVar(expr, "jq", "", "filter the JSON output with a gjson path (a.b, a.#.c; implies --json)")
		}
	}
	walk(root)
}

// jqImpliesJSON sets --json on a command run with --jq.
func jqImpliesJSON(cmd *cobra.Command, out *countingWriter) error {
	f := cmd.Flags().Lookup("jq")
	if f == nil || !f.Changed {
		return nil
	}
	if strings.TrimSpace(f.Value.String()) == "" {
		return exitcode.New(exitcode.Usage, "--jq needs a gjson path, e.g. --jq '#.name' (see https://github.com/tidwall/gjson#path-syntax)")
	}
	if err := checkJQPath(f.Value.String()); err != nil {
		return exitcode.New(exitcode.Usage, "invalid --jq path %q: %v (the syntax: https://github.com/tidwall/gjson/blob/master/SYNTAX.md)", f.Value.String(), err)
	}
	if out == nil {
		return exitcode.New(exitcode.Usage, "--jq must come before -- on the command line")
	}
	out.jq = &bytes.Buffer{}
	return cmd.Flags().Set("json", "true")
}

// applyJQ writes what the command printed, filtered by expr, to the real stdout: strings raw,
// other values as JSON, one per line; output of several JSON documents (one per line) is
// filtered document by document. Nothing matching prints nothing.
func applyJQ(out *countingWriter, expr string) error {
	if out == nil || out.jq == nil {
		return nil
	}
	data := out.jq.Bytes()
	out.jq = nil
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	emit := func(doc []byte) {
		r := gjson.GetBytes(doc, expr)
		switch {
		case !r.Exists():
		case r.Type == gjson.String:
			fmt.Fprintln(out.w, r.String())
		default:
			var b bytes.Buffer
			if json.Compact(&b, []byte(r.Raw)) != nil {
				b.Reset()
				b.WriteString(r.Raw)
			}
			fmt.Fprintln(out.w, b.String())
		}
	}
	if gjson.ValidBytes(data) {
		emit(data)
		return nil
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !gjson.ValidBytes(line) {
			return exitcode.New(exitcode.Infra, "--jq: the command's output is not JSON (a bug: please report it)")
		}
		emit(line)
	}
	return nil
}

// jqExpr is the --jq of the command that ran ("" when none).
func jqExpr(cmd *cobra.Command) string {
	if cmd == nil {
		return ""
	}
	if f := cmd.Flags().Lookup("jq"); f != nil {
		return f.Value.String()
	}
	return ""
}

// checkJQPath finds what gjson would silently read as "no match" although the path is malformed:
// an unclosed or unbalanced bracket, an unterminated string inside a query or a modifier's
// argument, an unknown @modifier, a trailing backslash. gjson has no validator of its own.
func checkJQPath(path string) error {
	closer := map[rune]rune{'(': ')', '[': ']', '{': '}'}
	var open []rune
	inString := false
	atStart := true // at the start of a path component, where @modifier may stand
	rs := []rune(path)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if c == '\\' {
			if i == len(rs)-1 {
				return fmt.Errorf("it ends in a backslash (escape of nothing)")
			}
			i++
			atStart = false
			continue
		}
		if inString {
			if c == '"' {
				inString = false
			}
			continue
		}
		switch {
		case c == '"' && len(open) > 0:
			inString = true
		case c == '(' || c == '[' || c == '{':
			open = append(open, c)
		case c == ')' || c == ']' || c == '}':
			if len(open) == 0 || closer[open[len(open)-1]] != c {
				return fmt.Errorf("unbalanced %c at character %d", c, i+1)
			}
			open = open[:len(open)-1]
		case c == '@' && atStart:
			j := i + 1
			for j < len(rs) && (rs[j] == '_' || rs[j] >= 'a' && rs[j] <= 'z' || rs[j] >= 'A' && rs[j] <= 'Z' || rs[j] >= '0' && rs[j] <= '9') {
				j++
			}
			if name := string(rs[i+1 : j]); !gjson.ModifierExists(name, nil) {
				return fmt.Errorf("unknown modifier @%s", name)
			}
			i = j - 1
		}
		atStart = c == '.' || c == '|' || c == ',' || c == '{' || c == '['
	}
	if inString {
		return fmt.Errorf("unterminated string")
	}
	if len(open) > 0 {
		return fmt.Errorf("unclosed %c", open[len(open)-1])
	}
	return nil
}
