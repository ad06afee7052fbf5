package runtime

import "testing"

// TestJSONStringifyIndent pins JSON.stringify's layout with a gap to what the spec (and Node)
// print; goja's own indents everything after an empty [] or {} one level too deep.
func TestJSONStringifyIndent(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, expr, want string }{
		{"empty containers then nested", `JSON.stringify({a: [], b: {c: 1}, d: {}, e: [1, "x\n"]}, null, 2)`,
			"{\n  \"a\": [],\n  \"b\": {\n    \"c\": 1\n  },\n  \"d\": {},\n  \"e\": [\n    1,\n    \"x\\n\"\n  ]\n}"},
		{"string gap", `JSON.stringify([1, {}], null, "--")`, "[\n--1,\n--{}\n]"},
		{"gap capped at 10", `JSON.stringify([1], null, 20)`, "[\n          1\n]"},
		{"no gap stays compact", `JSON.stringify({a: [1, {}]})`, `{"a":[1,{}]}`},
		{"zero gap is compact", `JSON.stringify({a: 1}, null, 0)`, `{"a":1}`},
		{"replacer array still applies", `JSON.stringify({k: 1, j: 2}, ["k"], 1)`, "{\n \"k\": 1\n}"},
		{"replacer function and toJSON", `JSON.stringify({d: {toJSON() { return "t" }}, n: 2}, (k, v) => k === "n" ? v * 10 : v, 1)`,
			"{\n \"d\": \"t\",\n \"n\": 20\n}"},
		{"undefined stays undefined", `String(JSON.stringify(undefined, null, 2))`, "undefined"},
		{"a cycle still throws", `(() => { const o = {}; o.o = o; try { JSON.stringify(o, null, 2) } catch (e) { return e.name } })()`, "TypeError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runSource(t, "json.mosh", "process_out("+c.expr+")", nil, Options{Install: func(vu VU) error {
				return vu.Runtime().Set("process_out", func(s string) { _, _ = vu.Stdout().Write([]byte(s)) })
			}})
			if r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.stderr)
			}
			if r.stdout != c.want {
				t.Fatalf("got\n%s\nwant\n%s", r.stdout, c.want)
			}
		})
	}
}
