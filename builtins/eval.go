package builtins

import (
	"context"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mosh-dev/mosh/runtime"
)

// The building blocks of evals, importable by any script (`import { loadDataset, score } from
// "mosh:eval"`), and the two generic builtins they need: a real CSV parser and the first JSON
// value in a text.

//go:embed modules/eval.js
var evalModule string

func init() {
	runtime.RegisterModule("eval", evalModule)
	Register(&Verb{
		Name: "parseCSV", Usage: "parseCSV(text)", Summary: "parse CSV text (RFC 4180: quotes, doubled quotes, embedded newlines) into an array of rows",
		Detail: strings.Join([]string{
			"Each row is an array of strings; rows may differ in length. A malformed text throws with",
			"the line and column of the fault (\"parseCSV: line 3, column 7: bare \\\" in non-quoted field\").",
		}, "\n"),
		Bind: func(c *Call) (Action, error) {
			text, err := textArg(c, 0, "the CSV text")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) { return parseCSV(text) }}, nil
		},
	})
	Register(&Verb{
		Name: "firstJSON", Usage: "firstJSON(text)", Summary: "the first JSON value in a text (the whole text, or the first object or array in it), or null",
		Read: true,
		Bind: func(c *Call) (Action, error) {
			text, err := textArg(c, 0, "the text")
			if err != nil {
				return Action{}, err
			}
			return Action{Do: func(context.Context) (any, error) {
				v, ok := firstJSON(text)
				if !ok {
					return nil, errors.New("no JSON value")
				}
				return v, nil
			}}, nil
		},
	})
}

func parseCSV(text string) (any, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(text, "\ufeff")))
	r.FieldsPerRecord = -1
	out := []any{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
			}
			return nil, err
		}
		row := make([]any, len(rec))
		for i, f := range rec {
			row[i] = f
		}
		out = append(out, row)
	}
}
