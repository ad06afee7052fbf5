package builtins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeDataset(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const evalPrelude = `import { loadDataset, score } from "mosh:eval"
const show = (cs) => console.log(JSON.stringify(cs.map(c => [c.id, c.prompt, c.expect ?? null, c.rubric ?? null, c.assert.length])))
`

func TestEvalLoadDatasetFormats(t *testing.T) {
	jsonl := writeDataset(t, "x.jsonl", `{"id":"a","prompt":"one","expect":"\\b1\\b"}

{"input":"two","rubric":"be kind","assert":[{"type":"contains","value":"2","weight":2}]}
`)
	jsonArr := writeDataset(t, "y.json", `[{"id":"a","prompt":"p"},{"id":"b","input":"q"}]`)
	jsonCases := writeDataset(t, "z.json", `{"cases":[{"prompt":"p"}]}`)
	csvText := "ID,Prompt,Expect,assert\r\n" +
		"c1,\"line one\nline two, with comma\",\"say \"\"hi\"\"\",\"[{\"\"type\"\":\"\"contains\"\",\"\"value\"\":\"\"hi\"\"}]\"\r\n" +
		"c2,plain,,\r\n"
	csvFile := writeDataset(t, "w.csv", csvText)
	gradient := writeDataset(t, "g.csv", "query,expected_response\n\"{\"\"prompt\"\": \"\"What is 2+2?\"\"}\",4\nnot json at all,x\n")
	r := run(t, evalPrelude+`
for (const f of argv) show(loadDataset(f))
`, Config{Args: []string{jsonl, jsonArr, jsonCases, csvFile, gradient}})
	expectOut(t, r, `[["a","one","\\b1\\b",null,0],["case-2","two",null,"be kind",1]]`+"\n"+
		`[["a","p",null,null,0],["b","q",null,null,0]]`+"\n"+
		`[["case-1","p",null,null,0]]`+"\n"+
		`[["c1","line one\nline two, with comma","say \"hi\"",null,1],["c2","plain",null,null,0]]`+"\n"+
		`[["case-1","What is 2+2?",null,null,0],["case-2","not json at all",null,null,0]]`+"\n")
}

func TestEvalLoadDatasetErrorsNameTheRow(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"bad.jsonl", "{\"prompt\":\"ok\"}\n{not json\n", "bad.jsonl:2: not valid JSON"},
		{"dup.jsonl", "{\"id\":\"a\",\"prompt\":\"x\"}\n{\"id\":\"a\",\"prompt\":\"y\"}\n", `dup.jsonl:2: duplicate id "a" (first at `},
		{"noprompt.json", `[{"id":"a","prompt":"x"},{"id":"b"}]`, "noprompt.json: case 2: no prompt (give prompt, input or query)"},
		{"empty.jsonl", "\n\n", "empty.jsonl: the dataset has no cases"},
		{"empty.csv", "id,prompt\n", "empty.csv: the dataset has no cases"},
		{"obj.json", `{"rows":[]}`, `obj.json: a .json dataset is an array of cases or {"cases": [...]}`},
		{"quote.csv", "id,prompt\na,\"unterminated\n", "quote.csv: line 2, column"},
		{"noprompt.csv", "id,prompt\na,x\nb,\n", "noprompt.csv: row 2: no prompt"},
		{"badassert.jsonl", `{"prompt":"x","assert":[{"type":"smells-like","value":"y"}]}`, `badassert.jsonl:1: assert[0]: unknown type "smells-like"`},
		{"x.yaml", "a: b", "x.yaml: unknown dataset format: use .jsonl, .json or .csv"},
	} {
		p := writeDataset(t, tc.name, tc.text)
		r := run(t, evalPrelude+`try { loadDataset(argv[0]); console.log("loaded?") } catch (e) { console.log(e.message) }`, Config{Args: []string{p}})
		if r.err != nil || !strings.Contains(r.stdout, tc.want) || !strings.HasPrefix(r.stdout, filepath.Dir(p)) {
			t.Errorf("%s: %q %v, want %q", tc.name, r.stdout, r.err, tc.want)
		}
	}
	r := run(t, evalPrelude+`try { loadDataset(argv[0]) } catch (e) { console.log(e.message) }`, Config{Args: []string{filepath.Join(t.TempDir(), "missing.jsonl")}})
	if !strings.Contains(r.stdout, "missing.jsonl: cannot read the dataset") {
		t.Errorf("%q", r.stdout)
	}
}

func TestEvalScore(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "present.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, evalPrelude+`
const s = async (c, a, o) => { const r = await score({assert: [], ...c}, a, o); return [r.scored, r.score, r.pass, r.results.map(x => x.pass)] }
const out = []
out.push(await s({expect: "(^|\\D)2(\\D|$)"}, "The answer is 2."))
out.push(await s({expect: "(^|\\D)2(\\D|$)"}, "The answer is 12."))
out.push(await s({expect: "c++ (x"}, "I like C++ (X) a lot"))
out.push(await s({assert: [{type: "contains", value: "PONG", weight: 3}, {type: "not-contains", value: "error", weight: 1}]}, "pong, error"))
out.push(await s({assert: [{type: "regex", value: "^ok$"}, {type: "equals", value: "ok"}]}, "  ok \n"))
out.push(await s({assert: [{type: "json-path", path: "$.score", value: 0.5}, {type: "json-path", path: "items[1]"}]}, 'x {"score": 0.5, "items": [1, 2]} y'))
out.push(await s({assert: [{type: "json-path", path: "score"}]}, "no json"))
out.push(await s({assert: [{type: "command", value: "test -e present.txt"}, {type: "command", value: "test -e absent.txt"}]}, "", {cwd: argv[0]}))
const rub = await score({id: "r", prompt: "p", rubric: "be kind", assert: []}, "x")
out.push([rub.scored, rub.score, rub.pass, rub.rubric])
for (const o of out) console.log(JSON.stringify(o))
`, Config{Args: []string{dir}})
	expectOut(t, r, strings.Join([]string{
		`[true,1,true,[true]]`,
		`[true,0,false,[false]]`,
		`[true,1,true,[true]]`,
		`[true,0.75,false,[true,false]]`,
		`[true,0.5,false,[false,true]]`,
		`[true,1,true,[true,true]]`,
		`[true,0,false,[false]]`,
		`[true,0.5,false,[true,false]]`,
		`[false,null,null,"be kind"]`,
	}, "\n")+"\n")
}

func TestParseCSVAndFirstJSONBuiltins(t *testing.T) {
	r := run(t, `
console.log(JSON.stringify(parseCSV('a,"b ""q"" c"\n"multi\nline",2\n')))
try { parseCSV('a,"b\n') } catch (e) { console.log(e.message) }
console.log(JSON.stringify(firstJSON("the score: {\"s\": 1}")), firstJSON("none"))
`, Config{})
	expectOut(t, r, `[["a","b \"q\" c"],["multi\nline","2"]]`+"\n"+
		"parseCSV: line 1, column 6: extraneous or missing \" in quoted-field\n"+
		`{"s":1} null`+"\n")
}

func TestUnknownBuiltinModule(t *testing.T) {
	r := run(t, `import { x } from "mosh:nope"`, Config{})
	if r.err == nil || !strings.Contains(r.err.Error(), `no built-in module "mosh:nope" (there are: mosh:eval)`) {
		t.Fatalf("%v", r.err)
	}
}
