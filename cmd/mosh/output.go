//go:build !windows

package main

// The one output helper of the printing verbs, as gh has it: a verb computes its result value
// and says how a person reads it; output decides which of the two is printed. With --json the
// value goes out as indented JSON (writeJSON), which --jq filters on its way to stdout (jqFlags,
// applyJQ); without, the verb's human form, whose tables go through outputStyle (a padded table
// with a header on a terminal, tab-separated rows without one off a terminal). A failure before
// the result is JSON too (jsonError). No verb writes JSON or reads its --json flag itself
// (TestEveryJSONVerbPrintsThroughTheOutputHelper).

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

// jsonFlag gives cmd its --json flag; usage says what it prints ("print {name, bytes} as JSON").
func jsonFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().Bool("json", false, usage)
}

// alwaysJSONFlag is --json for a verb whose output is JSON either way (default true).
func alwaysJSONFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().Bool("json", true, usage)
}

// jsonOn reports whether cmd runs with --json (--jq sets it, jqImpliesJSON).
func jsonOn(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.Type() == "bool" && f.Value.String() == "true"
}

// rawResult is a result the daemon encoded, asked for only when --json wants it and passed
// through as its bytes (writeRawJSON: the layout writeJSON gives, without decoding 500 tasks).
type rawResult func() (json.RawMessage, error)

// output prints a verb's result v: as JSON when cmd runs with --json, otherwise by human (nil
// prints nothing: the verb's person-facing form is silence or stderr).
func output(cmd *cobra.Command, w io.Writer, v any, human func() error) error {
	return emit(w, jsonOn(cmd), v, human)
}

// emit is output for a verb that decided --json before it printed (herd serve's banner, written
// once the server listens).
func emit(w io.Writer, asJSON bool, v any, human func() error) error {
	if asJSON {
		switch v := v.(type) {
		case rawResult:
			raw, err := v()
			if err != nil {
				return err
			}
			return writeRawJSON(w, raw)
		case jsonLine:
			b, err := json.Marshal(v.v)
			if err != nil {
				return err
			}
			_, err = w.Write(append(b, '\n'))
			return err
		}
		return writeJSON(w, v)
	}
	if human == nil {
		return nil
	}
	return human()
}

// jsonLine is a result printed as one compact line of JSON (a banner a script reads with one
// line read while the verb keeps running).
type jsonLine struct{ v any }

// writeJSON writes v as indented JSON followed by a newline. Keys come from the herd types' tags,
// which are lowerCamelCase and documented in docs/protocol.md.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
