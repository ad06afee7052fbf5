package builtins

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// isTerminal reports the run's streams as the CLI found them; a stream name it does not know is
// a misuse.
func TestIsTerminal(t *testing.T) {
	r := run(t, `console.log(isTerminal("stdout"), isTerminal("stderr"))
try { isTerminal("stdin") } catch (e) { console.log(e.message) }`, Config{StderrTTY: true})
	expectOut(t, r, "false true\n"+`isTerminal("stdout" | "stderr"): the stream must be "stdout" or "stderr", not "stdin"`+"\n")
}

// herdEngine reads the engines table (aliases resolve): what herdStart would launch.
func TestHerdEngine(t *testing.T) {
	home := t.TempDir()
	r := run(t, `const e = await herdEngine("cc")
console.log(e.name, e.bin, JSON.stringify(e.agentArgs), e.headless, e.hooks)
const x = await herdEngine("codex")
console.log(x.name, x.agentArgs.includes("--dangerously-bypass-approvals-and-sandbox"))
console.log(await herdEngine("nosuch"))
console.log(e.path)`, Config{Env: map[string]string{"HOME": home, "MOSH_HOME": home, "PATH": t.TempDir()}})
	expectOut(t, r, `claude claude ["--dangerously-skip-permissions"] true true`+"\ncodex true\nnull\nnull\n")
	// path: where bin is found, on the script's PATH or in $MOSH_HOME/bin (as herdStart looks).
	bin := filepath.Join(home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = run(t, `console.log((await herdEngine("codex")).path, (await herdEngine("claude")).path)`, Config{Env: map[string]string{"HOME": home, "MOSH_HOME": home, "PATH": t.TempDir()}})
	expectOut(t, r, filepath.Join(bin, "codex")+" null\n")
}

const evalRunPrelude = `import { shellSplit, xmlEscape, summarize, junit, median, rowMessage } from "mosh:eval"
`

func TestEvalShellSplit(t *testing.T) {
	r := run(t, evalRunPrelude+`
for (const s of ["--model x", "--model 'big one' -v", "a\\ b \"c \\\"d\\\"\" ''", "  "]) console.log(JSON.stringify(shellSplit(s)))
try { shellSplit("'open") } catch (e) { console.log(e.message) }`, Config{})
	expectOut(t, r, `["--model","x"]`+"\n"+`["--model","big one","-v"]`+"\n"+`["a b","c \"d\"",""]`+"\n"+"[]\n"+`unterminated ' in "'open"`+"\n")
}

// summarize: score = passed / (total - unscorable); pass@k over attempts with flaky marks; the
// JUnit XML of a report with hostile answers parses back with the right counts.
func TestEvalSummarizeAndJUnit(t *testing.T) {
	r := run(t, evalRunPrelude+`
const row = (id, engine, outcome, attempt = 1, extra = {}) => ({id, engine, attempt, outcome, score: outcome === "pass" ? 1 : outcome === "fail" ? 0 : null,
  pass: outcome === "pass", answer: "", taskId: null, member: null, durationMs: 100 * attempt, results: [], ...extra})
const rows = [
  row("a", "claude", "pass", 1, {cost: {totalTokens: 16, tokens: {input: 12, output: 4, cacheRead: 0, cacheWrite: 0}, costUSD: 0.5, costSource: "engine"}}),
  row("b", "claude", "fail", 1, {cost: {totalTokens: 4, tokens: {input: 3, output: 1, cacheRead: 0, cacheWrite: 0}, costUSD: null, note: "no price"}, answer: "bad <b>&\"x\" \u001b[31mred\u001b[0m ]]>", results: [{type: "expect", value: "4", pass: false, weight: 1, detail: "no match"}]}),
  row("c", "claude", "unscorable", 1, {judge: {score: null, why: "garbage"}}), row("d", "claude", "blocked", 1, {question: "permission: Do you want to proceed?"}),
  row("e", "claude", "failed", 1, {exitCode: 7}), row("f", "claude", "timeout"),
  row("a", "@m", "pass", 1), row("a", "@m", "fail", 2), row("a", "@m", "pass", 3),
  row("b", "@m", "error", 1, {error: "engine x is not installed"}), row("b", "@m", "error", 2), row("b", "@m", "error", 3),
]
const engines = summarize(rows, ["claude", "@m"], 0.5)
for (const e of engines) console.log(JSON.stringify(e))
console.log(rows.filter(r => r.flaky).map(r => r.engine + r.id + r.attempt).join(","))
console.log(median([5, 1, 3]), median([4, 1, 3, 2]), median([]))
console.log(rowMessage(rows[4]), "|", rowMessage(rows[3]))
console.log(junit({engines, rows}))
`, Config{})
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	lines := strings.SplitN(r.stdout, "\n", 6)
	want := []string{
		`{"engine":"claude","score":0.2,"passed":1,"failed":1,"blocked":1,"timeouts":1,"errors":1,"unscorable":1,"total":6,"medianMs":100,` +
			`"cost":{"totalTokens":20,"tokens":{"input":15,"output":5,"cacheRead":0,"cacheWrite":0},"costUSD":null,"unknown":4,"note":"no price"},"pass":false}`,
		`{"engine":"@m","score":0.5,"passed":1,"failed":0,"blocked":0,"timeouts":0,"errors":1,"unscorable":0,"total":2,"medianMs":200,` +
			`"cost":{"totalTokens":null,"tokens":null,"costUSD":null,"unknown":6},"pass":true}`,
		"@ma1,@ma2,@ma3",
		"3 3 null",
		"the engine exited mid-row with code 7 | blocked on a question: permission: Do you want to proceed?",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], w)
		}
	}
	var ju struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Error *struct {
					Type string `xml:"type,attr"`
				} `xml:"error"`
				Out string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(lines[5]), &ju); err != nil {
		t.Fatalf("junit is not XML: %v\n%s", err, lines[5])
	}
	if ju.Tests != 12 || len(ju.Suites) != 2 {
		t.Fatalf("junit: %+v", ju)
	}
	c, m := ju.Suites[0], ju.Suites[1]
	if c.Name != "claude" || c.Tests != 6 || c.Failures != 1 || c.Errors != 3 || c.Skipped != 1 {
		t.Errorf("claude suite: %+v", c)
	}
	if m.Name != "@m" || m.Tests != 6 || m.Failures != 1 || m.Errors != 3 || m.Cases[0].Name != "a (attempt 1)" {
		t.Errorf("@m suite: %+v", m)
	}
	if b := c.Cases[1]; b.Out != "bad <b>&\"x\" \uFFFD[31mred\uFFFD[0m ]]>" || b.Failure == nil || !strings.Contains(b.Failure.Message, `expect "4"`) {
		t.Errorf("the answer survives escaping: %+v", b)
	}
	if c.Cases[4].Error == nil || c.Cases[4].Error.Type != "failed" {
		t.Errorf("a crash is an <error type=failed>: %+v", c.Cases[4])
	}
}

// herdAsk is prompt --wait: it resolves how the prompt's own turn ended, with the exit code of a
// member that died during it; a name not on the roster rejects (code 3).
func TestHerdAskAgainstADaemon(t *testing.T) {
	env := herdDaemon(t)
	r := runCtx(t, context.Background(), `
const q = await herdRun(["/bin/sh", "-c", "read x; exit 7"], {name: "crash"})
if (!q.ok) throw new Error("herdRun: " + q.error)
const a = await herdAsk("crash", "go", {states: ["done"], timeout: "60s"})
console.log("crash", a.ok, typeof a.task, a.outcome, a.exitCode)
try { await herdAsk("ghost", "hello"); console.log("ghost resolved") } catch (e) { console.log("ghost", e.code) }
try { herdAsk("crash", "  ") } catch (e) { console.log("misuse", e.message.includes("missing the prompt text")) }
`, Config{Env: env}, time.Minute)
	if r.err != nil {
		t.Fatalf("%v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	expectOut(t, r, "crash true string ended 7\nghost 3\nmisuse true\n")
}

// screenAnswer: what a turn printed below its typed prompt, however the terminal wrapped or
// decorated the echo; the prompt alone is never an answer. answerOf prefers the engine's own.
func TestEvalScreenAnswer(t *testing.T) {
	r := run(t, `import { screenAnswer, answerOf } from "mosh:eval"
const cases = [
  ["what is 2+2\nanswer: 4", "what is 2+2"],
  ["say PONG", "say PONG"],
  ["$ say PONG\n$", "say PONG"],
  ["❯ please write a haiku about the\n  sea and the sky\n\n⏺ Waves fold into blue,\n  sky answers\n", "please write a haiku about the sea and the sky"],
  ["> the answer is 4\n\nthe answer is 4", "the answer is 4"], // an answer may repeat the prompt exactly
  ["about the sea and the sky\nWaves", "please write a haiku about the sea and the sky"],
  ["", "x"],
  ["PONG", "!!!"],
  ["› Reply pong. fake-plain\n\n• Plain answer: pong.\n\n  gpt-fake default · /tmp/p · Reply pong. fake-plain\n  ? for shortcuts", "Reply pong. fake-plain"],
  ["hi\nhi\nthis is it", "hi"],
]
for (const [text, prompt] of cases) console.log(JSON.stringify(screenAnswer(text, prompt)))
console.log(JSON.stringify(answerOf({text: "from the hook", source: "hook"}, "p")))
console.log(JSON.stringify(answerOf({text: "p\nfrom the screen", source: "screen"}, "p")))
console.log(JSON.stringify(answerOf({text: "p", source: "screen"}, "p")))
console.log(JSON.stringify(answerOf({text: "the member stopped", source: "error"}, "p")))
console.log(JSON.stringify(answerOf(null, "p")))
console.log(JSON.stringify(answerOf({text: "", source: "remote"}, "p")))`, Config{})
	expectOut(t, r, `"answer: 4"
""
""
"⏺ Waves fold into blue,\n  sky answers"
"the answer is 4"
"Waves"
""
"PONG"
"• Plain answer: pong.\n\n  ? for shortcuts"
"hi\nthis is it"
{"answer":"from the hook","source":"hook"}
{"answer":"from the screen","source":"screen"}
{"answer":"","source":"none"}
{"answer":"","source":"none"}
{"answer":"","source":"none"}
{"answer":"","source":"none"}
`)
}
