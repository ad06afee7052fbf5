package builtins

import (
	"context"

	"github.com/tidwall/gjson"
)

func init() {
	Register(&Verb{
		Name: "query", Usage: `query(jsonTextOrValue, "a.b.#.c")`, Summary: "pick from JSON by a gjson path; null when absent",
		Params: "json: string | unknown, path: string", Result: TSType("any"),
		Detail: "A string is JSON text; anything else is converted to JSON first. The path is gjson's syntax\n" +
			"(github.com/tidwall/gjson): a.b for keys, a.0 for an index, a.# for a length, a.#.c for every c,\n" +
			"a.#(c==\"x\").d to filter. Returns the value, or null when the path matches nothing or the text is not JSON.",
		Read: true,
		Bind: func(c *Call) (Action, error) {
			if !c.Given(0) {
				return Action{}, c.Misuse("missing the JSON text or value")
			}
			path, err := c.String(1, "the path")
			if err != nil {
				return Action{}, err
			}
			text, ok := c.Arg(0).Export().(string)
			if !ok {
				text, err = stringifyJSON(c.VM(), c.Arg(0))
				if err != nil {
					return Action{}, c.Misuse("the value cannot be converted to JSON: %v", err)
				}
			}
			return Action{Do: func(context.Context) (any, error) {
				if !gjson.Valid(text) {
					return nil, nil
				}
				r := gjson.Get(text, path)
				if !r.Exists() {
					return nil, nil
				}
				return parseJSON(c.VM(), r.Raw)
			}}, nil
		},
	})
}
