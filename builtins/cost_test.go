package builtins

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"
	"time"
)

// An eval row's cost is its task's use in its engine's own records (a real Claude Code transcript,
// herd/cost's fixture, its timestamps moved into the task), read after the member was killed; an
// engine's sum adds its rows. A row whose engine records nothing, or that typed no prompt, carries
// null with the reason, never 0.
func TestEvalRowCostFromAClaudeTranscript(t *testing.T) {
	env := herdDaemon(t)
	b, err := os.ReadFile("../herd/cost/testdata/claude-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	fixture := regexp.MustCompile(`"timestamp":"[^"]*"`).ReplaceAllString(string(b), `"timestamp":"@TS@"`)
	lit, _ := json.Marshal(fixture)
	r := runCtx(t, context.Background(), `
import { rowCost, costSum } from "mosh:eval"
const fixture = `+string(lit)+`
const slug = (d) => d.replace(/[^A-Za-z0-9]/g, "-")
// One row: a member in its own directory takes a prompt; Claude Code's transcript for that
// directory records the task's model call; the member is killed before its cost is read.
async function row(id, engine, transcript) {
  const cwd = env.HOME + "/work-" + id
  mkdir(cwd)
  const m = await herdRun(["/bin/sh", "-c", "exec cat"], { name: id, cwd })
  if (!m.ok) throw new Error(m.error)
  const p = await herdPrompt(id, "say fake-plain")
  if (!p.ok) throw new Error(p.error)
  await herdWait(id)
  const t = await herdTask(p.task)
  if (transcript) {
    mkdir(env.HOME + "/.claude/projects/" + slug(m.cwd), { mode: 0o700 })
    writeText(env.HOME + "/.claude/projects/" + slug(m.cwd) + "/" + id + ".jsonl", fixture.replaceAll("@TS@", new Date(t.submittedMs).toISOString()))
  }
  await herdKill(id)
  const r = { id, engine, taskId: p.task, member: id }
  r.cost = await rowCost(r, { engine, cwd: m.cwd })
  return r
}
const a = await row("a", "claude", true)
const b = await row("b", "claude", true)
const o = await row("o", "opencode", false)
const none = { id: "x", engine: "claude", taskId: null, member: null }
none.cost = await rowCost(none)
console.log(JSON.stringify({ a: a.cost, o: o.cost, none: none.cost, claude: costSum([a, b]), mixed: costSum([a, o]), nothing: costSum([o, none]) }))
`, Config{Env: env}, time.Minute)
	if r.err != nil {
		t.Fatalf("script failed: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	type tokens struct {
		Input, Output, CacheRead, CacheWrite int64
	}
	type cost struct {
		TotalTokens *int64   `json:"totalTokens"`
		Tokens      *tokens  `json:"tokens"`
		CostUSD     *float64 `json:"costUSD"`
		CostSource  string   `json:"costSource"`
		Unknown     int      `json:"unknown"`
		Note        string   `json:"note"`
	}
	var got struct{ A, O, None, Claude, Mixed, Nothing cost }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v: %s\nstderr: %s", err, r.stdout, r.stderr)
	}
	is := func(p *int64, v int64) bool { return p != nil && *p == v }
	money := func(p *float64, v float64) bool { return p != nil && *p == v }
	if !is(got.A.TotalTokens, 16) || got.A.Tokens == nil || *got.A.Tokens != (tokens{Input: 12, Output: 4}) || !money(got.A.CostUSD, 0.000128) || got.A.CostSource != "engine" || got.A.Note != "" {
		t.Errorf("row a: %+v", got.A)
	}
	if !is(got.Claude.TotalTokens, 32) || *got.Claude.Tokens != (tokens{Input: 24, Output: 8}) || !money(got.Claude.CostUSD, 0.000256) || got.Claude.Unknown != 0 {
		t.Errorf("claude's sum: %+v", got.Claude)
	}
	if got.O.TotalTokens != nil || got.O.Tokens != nil || got.O.CostUSD != nil || !regexp.MustCompile(`opencode records no usage`).MatchString(got.O.Note) {
		t.Errorf("an engine that records nothing: %+v", got.O)
	}
	if got.None.TotalTokens != nil || got.None.CostUSD != nil || !regexp.MustCompile(`no task`).MatchString(got.None.Note) {
		t.Errorf("a row without a task: %+v", got.None)
	}
	if !is(got.Mixed.TotalTokens, 16) || !money(got.Mixed.CostUSD, 0.000128) || got.Mixed.Unknown != 1 || !regexp.MustCompile(`opencode records no usage`).MatchString(got.Mixed.Note) {
		t.Errorf("a sum with a row of unknown use: %+v", got.Mixed)
	}
	if got.Nothing.TotalTokens != nil || got.Nothing.Tokens != nil || got.Nothing.CostUSD != nil || got.Nothing.Unknown != 2 || got.Nothing.Note == "" {
		t.Errorf("a sum of nothing known is null, never 0: %+v", got.Nothing)
	}
}

// herdTaskCost: a malformed id or option throws with the usage; a task the ledger does not have
// resolves null (a read verb), and rowCost then says so instead of a 0.
func TestHerdTaskCostBadInput(t *testing.T) {
	env := herdDaemon(t)
	r := runCtx(t, context.Background(), `
import { rowCost } from "mosh:eval"
for (const args of [["x"], [], ["t-1", { foo: 1 }], ["t-1", { engine: 3 }]]) {
  try {
    await herdTaskCost(...args)
    console.log("no throw", JSON.stringify(args))
  } catch (e) {
    console.log("throws")
  }
}
console.log(await herdTaskCost("t-99"))
const c = await rowCost({ taskId: "t-99" }, { engine: "claude", cwd: "/nowhere" })
console.log(c.totalTokens, c.costUSD, c.note)
`, Config{Env: env}, time.Minute)
	expectOut(t, r, "throws\nthrows\nthrows\nthrows\nnull\nnull null the use of t-99 could not be read: see mosh herd task t-99\n")
}
