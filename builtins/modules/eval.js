// mosh:eval: the building blocks of an eval, for `mosh herd eval` and for any script:
//
//   import { loadDataset, score } from "mosh:eval"
//   const cases = loadDataset("evals/x.jsonl")
//   const r = await score(cases[0], answer, {cwd})
//
// loadDataset reads .jsonl, .json (an array or {cases}) and .csv (a real CSV parser; columns
// id, prompt|input|query, expect, rubric, and gradient agent evaluate's query/expected_response)
// and returns normalised cases {id, prompt, expect?, rubric?, assert: [...], where}. Every
// problem throws naming its place: "x.jsonl:3: not valid JSON …", "x.csv: row 2: no prompt …".
//
// score(case, answer, {cwd}) applies the case's `expect` (a case-insensitive regex, moshcode's
// rule; an invalid regex is matched as a case-insensitive substring) and its `assert` list
// ({type, value, weight}: contains, not-contains, regex, equals, json-path, command) and
// resolves {scored, score, pass, results, rubric}. A case with only a rubric is not scored here
// (scored: false, rubric set): the judge scores it.

export const ASSERT_TYPES = ["contains", "not-contains", "regex", "equals", "json-path", "command"]

function fail(where, msg) {
  throw new Error(`${where}: ${msg}`)
}

function rowsOf(path, text) {
  const lower = path.toLowerCase()
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) {
    const rows = []
    text.split("\n").forEach((line, i) => {
      if (line.trim() === "") return
      let v
      try {
        v = JSON.parse(line)
      } catch (e) {
        fail(`${path}:${i + 1}`, `not valid JSON (${e.message})`)
      }
      rows.push({ row: v, where: `${path}:${i + 1}` })
    })
    return rows
  }
  if (lower.endsWith(".json")) {
    let v
    try {
      v = JSON.parse(text)
    } catch (e) {
      fail(path, `not valid JSON (${e.message})`)
    }
    if (v && !Array.isArray(v) && typeof v === "object" && Array.isArray(v.cases)) v = v.cases
    if (!Array.isArray(v)) fail(path, "a .json dataset is an array of cases or {\"cases\": [...]}")
    return v.map((row, i) => ({ row, where: `${path}: case ${i + 1}` }))
  }
  if (lower.endsWith(".csv")) {
    let recs
    try {
      recs = parseCSV(text)
    } catch (e) {
      fail(path, e.message.replace(/^parseCSV: /, ""))
    }
    recs = recs.filter((r) => !(r.length === 1 && r[0].trim() === ""))
    if (recs.length === 0) return []
    const header = recs[0].map((h) => h.trim().toLowerCase())
    return recs.slice(1).map((rec, i) => {
      const row = {}
      header.forEach((h, j) => {
        if (h !== "" && rec[j] !== undefined && rec[j] !== "") row[h] = rec[j]
      })
      return { row, where: `${path}: row ${i + 1}`, csv: true }
    })
  }
  fail(path, "unknown dataset format: use .jsonl, .json or .csv")
}

// promptOf takes prompt, input or query; a gradient-style query cell holding JSON
// ({"prompt": "..."}) gives its prompt.
function promptOf(row) {
  let p = row.prompt ?? row.input ?? row.query
  if (typeof p === "string" && row.prompt === undefined && row.input === undefined) {
    const t = p.trim()
    if (t.startsWith("{")) {
      try {
        const q = JSON.parse(t)
        const inner = q.prompt ?? q.input ?? q.query ?? q.message
        if (typeof inner === "string") p = inner
      } catch (e) {
        // not JSON: the text itself is the prompt
      }
    }
  }
  return p
}

function normaliseAssert(where, list, csv) {
  if (list === undefined || list === null || list === "") return []
  if (csv && typeof list === "string") {
    try {
      list = JSON.parse(list)
    } catch (e) {
      fail(where, `assert is not valid JSON (${e.message})`)
    }
  }
  if (!Array.isArray(list)) fail(where, "assert must be an array of {type, value, weight}")
  return list.map((a, i) => {
    if (!a || typeof a !== "object") fail(where, `assert[${i}] must be an object {type, value, weight}`)
    if (!ASSERT_TYPES.includes(a.type)) fail(where, `assert[${i}]: unknown type ${JSON.stringify(a.type)} (use ${ASSERT_TYPES.join(", ")})`)
    const weight = a.weight === undefined ? 1 : a.weight
    if (typeof weight !== "number" || !(weight >= 0)) fail(where, `assert[${i}]: weight must be a number ≥ 0`)
    if (a.type === "json-path") {
      if (typeof a.path !== "string" || a.path === "") fail(where, `assert[${i}]: json-path needs a path ("score", "items[0].name")`)
    } else if (typeof a.value !== "string" || a.value === "") {
      fail(where, `assert[${i}]: ${a.type} needs a string value`)
    }
    return { ...a, weight }
  })
}

export function loadDataset(path) {
  if (typeof path !== "string" || path === "") throw new TypeError("loadDataset(path): missing the dataset's path")
  const text = readText(path)
  if (text === null) fail(path, "cannot read the dataset (does it exist?)")
  const rows = rowsOf(path, text)
  if (rows.length === 0) fail(path, "the dataset has no cases")
  const seen = new Map()
  return rows.map(({ row, where, csv }, i) => {
    if (!row || typeof row !== "object" || Array.isArray(row)) fail(where, "a case must be an object")
    const prompt = promptOf(row)
    if (typeof prompt !== "string" || prompt.trim() === "") fail(where, "no prompt (give prompt, input or query)")
    const id = row.id === undefined || row.id === null || row.id === "" ? `case-${i + 1}` : String(row.id)
    if (seen.has(id)) fail(where, `duplicate id ${JSON.stringify(id)} (first at ${seen.get(id)})`)
    seen.set(id, where)
    const c = { id, prompt, where }
    if (row.expect !== undefined && row.expect !== "") c.expect = String(row.expect)
    if (row.rubric !== undefined && row.rubric !== "") c.rubric = String(row.rubric)
    if (row.expected_response !== undefined) c.expected = String(row.expected_response)
    c.assert = normaliseAssert(where, row.assert, csv)
    return c
  })
}

// expectMatches is moshcode's rule: a case-insensitive regex; an invalid one is a
// case-insensitive substring.
export function expectMatches(expect, answer) {
  let re
  try {
    re = new RegExp(expect, "i")
  } catch (e) {
    return answer.toLowerCase().includes(expect.toLowerCase())
  }
  return re.test(answer)
}

// jsonPath reads "a.b[0].c" (a leading "$." is allowed) from a value; undefined when absent.
export function jsonPath(value, path) {
  const parts = path.replace(/^\$\.?/, "").match(/[^.[\]]+/g) || []
  let v = value
  for (const p of parts) {
    if (v === null || typeof v !== "object" || !(p in v)) return undefined
    v = v[p]
  }
  return v
}

async function check(a, answer, opts) {
  switch (a.type) {
    case "contains":
      return { pass: answer.toLowerCase().includes(a.value.toLowerCase()) }
    case "not-contains":
      return { pass: !answer.toLowerCase().includes(a.value.toLowerCase()) }
    case "regex": {
      let re
      try {
        re = new RegExp(a.value, a.flags ?? "i")
      } catch (e) {
        return { pass: false, error: `invalid regex: ${e.message}` }
      }
      return { pass: re.test(answer) }
    }
    case "equals":
      return { pass: answer.trim() === a.value.trim() }
    case "json-path": {
      const v = firstJSON(answer)
      if (v === null) return { pass: false, error: "the answer holds no JSON value" }
      const got = jsonPath(v, a.path)
      if (got === undefined) return { pass: false, error: `no ${a.path} in the answer's JSON` }
      if (!("value" in a)) return { pass: true }
      return { pass: JSON.stringify(got) === JSON.stringify(a.value), got }
    }
    case "command": {
      const r = await sh(a.value, { cwd: opts.cwd, timeout: a.timeout ?? "10m" })
      return { pass: r.ok, code: r.code, output: (r.stdout + r.stderr).slice(-2000) }
    }
  }
  return { pass: false, error: `unknown assertion type ${a.type}` }
}

export async function score(c, answer, opts = {}) {
  if (!c || typeof c !== "object") throw new TypeError("score(case, answer, {cwd}): missing the case")
  if (typeof answer !== "string") throw new TypeError("score(case, answer, {cwd}): the answer must be a string")
  const results = []
  if (c.expect !== undefined) {
    results.push({ type: "expect", value: c.expect, weight: 1, pass: expectMatches(c.expect, answer) })
  }
  for (const a of c.assert || []) {
    results.push({ ...a, weight: typeof a.weight === "number" && a.weight >= 0 ? a.weight : 1, ...(await check(a, answer, opts)) })
  }
  if (results.length === 0) {
    return { scored: false, score: null, pass: null, results, rubric: c.rubric ?? null }
  }
  const total = results.reduce((s, r) => s + r.weight, 0)
  const got = results.reduce((s, r) => s + (r.pass ? r.weight : 0), 0)
  const value = total === 0 ? (results.every((r) => r.pass) ? 1 : 0) : got / total
  return { scored: true, score: value, pass: value >= 1, results, rubric: c.rubric ?? null }
}

// ---- running rows: runRow, judge, summarize, junit -------------------------------------------
//
// runRow(case, opts) runs one case on one engine and resolves a report row:
//   opts.engine   "claude" (a fresh member from the engines table, named opts.name, killed after the
//                 row unless opts.keep) or "@name" (an existing roster member, never killed)
//   opts.agent    launch with the engine's autonomous flags; opts.args: extra launch arguments
//   opts.cwd      the member's directory; opts.isolated: a fresh `git worktree` of opts.repo instead
//                 (removed afterwards unless opts.keep)
//   opts.timeout  ms for the whole turn (default 10m); opts.blockedGrace: ms a member may stay
//                 blocked before the row is `blocked` (default 30s)
//   opts.judge    "rules" (default), an engine name, or "model"; opts.threshold (judge pass mark)
//   opts.answers  "any" (default): the engine's own answer, else what the turn printed below the
//                 typed prompt; "engine": the engine's own answer only (a screen answer is unscorable)
// The answer is the engine's own final message (a hook's, or a remote agent's reply) when there is
// one; otherwise the text the turn added to the screen below the typed prompt (never the prompt
// itself). row.answerSource says which: hook | remote | screen | none. A row with no answer is
// unscorable with row.reason and row.fix, never fail. A member that exits before it is ready is
// failed with its last screen lines as row.reason and row.startup set.
// Outcomes: pass | fail | blocked | timeout | failed | unscorable | error.

export const OUTCOMES = ["pass", "fail", "blocked", "timeout", "failed", "unscorable", "error"]

const MINUTE = 60000

// waitOne waits for name to reach one of states within ms: {outcome, state, blockedOn, exitCode}.
async function waitOne(name, states, ms) {
  const [r] = await herdWait([name], { states, timeout: Math.max(1, Math.round(ms)), nothrow: true })
  return r || { outcome: "gone", state: "gone" }
}

// awaitTurn follows a member until its turn ends: {end: "done"|"blocked"|"timeout"|"failed", …}.
// A member that is blocked gets blockedGrace to move on (someone may answer it) before the turn
// ends as blocked with its question.
async function awaitTurn(name, deadline, grace, states, first) {
  for (;;) {
    const left = deadline - Date.now()
    if (left <= 0 && !first) return { end: "timeout" }
    const r = first || (await waitOne(name, states, left))
    first = null
    if (r.outcome === "timeout") return { end: "timeout" }
    if (r.outcome === "ended" || r.outcome === "gone" || r.state === "gone") {
      return { end: "failed", exitCode: r.exitCode ?? null }
    }
    if (r.state !== "blocked") return { end: "done", state: r.state }
    const question = r.blockedOn || (await waitOne(name, ["blocked"], 1)).blockedOn || ""
    const before = deadline - Date.now()
    const g = await waitOne(name, ["working", "done", "idle"], Math.min(grace, Math.max(1, before)))
    if (g.outcome === "timeout") return grace > before ? { end: "timeout" } : { end: "blocked", question }
    if (g.outcome === "ended" || g.outcome === "gone" || g.state === "gone") {
      return { end: "failed", exitCode: g.exitCode ?? null }
    }
    if (g.state !== "working") return { end: "done", state: g.state }
  }
}

// shellSplit splits a command line the way sh would split words: spaces separate, '…' and "…"
// quote, a backslash escapes the next character. No expansion of any kind.
export function shellSplit(s) {
  const out = []
  let cur = null
  let i = 0
  const push = () => {
    if (cur !== null) out.push(cur)
    cur = null
  }
  while (i < s.length) {
    const ch = s[i]
    if (ch === " " || ch === "\t" || ch === "\n") {
      push()
      i++
    } else if (ch === "'") {
      const j = s.indexOf("'", i + 1)
      if (j < 0) throw new Error(`unterminated ' in ${JSON.stringify(s)}`)
      cur = (cur ?? "") + s.slice(i + 1, j)
      i = j + 1
    } else if (ch === '"') {
      let j = i + 1
      let buf = ""
      while (j < s.length && s[j] !== '"') {
        if (s[j] === "\\" && j + 1 < s.length && '"\\$`'.includes(s[j + 1])) j++
        buf += s[j++]
      }
      if (j >= s.length) throw new Error(`unterminated " in ${JSON.stringify(s)}`)
      cur = (cur ?? "") + buf
      i = j + 1
    } else if (ch === "\\" && i + 1 < s.length) {
      cur = (cur ?? "") + s[i + 1]
      i += 2
    } else {
      cur = (cur ?? "") + ch
      i++
    }
  }
  push()
  return out
}

const shq = (s) => "'" + String(s).replace(/'/g, `'\\''`) + "'"

// git's worktree add/remove/prune are not safe at once in one repository: an add reads another's
// half-written .git/worktrees/NAME ("fatal: failed to read …/commondir"), so rows running at
// once (--concurrency, --isolated) take turns for them here.
let worktreeTurn = Promise.resolve()
function inTurn(f) {
  const run = worktreeTurn.then(f, f)
  worktreeTurn = run.catch(() => {})
  return run
}

// addWorktree makes a fresh detached worktree of repo's HEAD in a new temporary directory.
export async function addWorktree(repo, label = "row") {
  const tmp = await sh(["mktemp", "-d", `${env.TMPDIR || "/tmp"}/mosh-eval-XXXXXX`])
  if (!tmp.ok) throw new Error(`cannot make a temporary directory: ${tmp.stderr.trim()}`)
  const dir = `${tmp.stdout.trim()}/${label.replace(/[^A-Za-z0-9._-]/g, "_") || "row"}`
  const r = await inTurn(() => sh(["git", "-C", repo, "worktree", "add", "--detach", dir, "HEAD"]))
  if (!r.ok) {
    await sh(["rm", "-rf", tmp.stdout.trim()])
    throw new Error(`git worktree add failed: ${(r.stderr || r.stdout).trim()}`)
  }
  return dir
}

// removeWorktree removes a worktree addWorktree made, and its temporary directory.
export async function removeWorktree(repo, dir) {
  const r = await inTurn(() => sh(["git", "-C", repo, "worktree", "remove", "--force", dir]))
  await sh(["rm", "-rf", dir.slice(0, dir.lastIndexOf("/"))])
  if (!r.ok) await inTurn(() => sh(["git", "-C", repo, "worktree", "prune"]))
  return r.ok
}

// repoRoot is the top of the git repository holding dir, or null outside one.
export async function repoRoot(dir) {
  const r = await sh(["git", "-C", dir, "rev-parse", "--show-toplevel"])
  return r.ok ? r.stdout.trim() : null
}

// judgePrompt asks for {score, why} about one answer.
export function judgePrompt(c, answer) {
  return [
    "You are grading an AI coding agent's answer against a rubric.",
    "",
    "Task given to the agent:",
    c.prompt,
    "",
    "Rubric:",
    c.rubric,
    "",
    "The agent's answer:",
    answer,
    "",
    'Reply with only a JSON object: {"score": <a number from 0 to 1>, "why": "<one sentence>"}.',
  ].join("\n")
}

// judge asks the judge (an engine's headless mode, or "model": the model API) to score a rubric:
// {ok: true, score, why} or, after one retry, {ok: false, why} — never a silent 0.
export async function judge(c, answer, opts = {}) {
  const engine = opts.judge === "model" ? "@api" : opts.judge
  const prompt = judgePrompt(c, answer)
  let why = ""
  for (let attempt = 0; attempt < 2; attempt++) {
    let v
    try {
      v = await ai(prompt, { engine, json: true, timeout: opts.timeout ?? 10 * MINUTE, cwd: opts.cwd })
    } catch (e) {
      why = `the judge failed: ${e.message}`
      continue
    }
    const score = v && typeof v === "object" ? v.score : undefined
    if (typeof score === "number" && score >= 0 && score <= 1 && typeof v.why === "string") {
      return { ok: true, score, why: v.why }
    }
    why = `the judge's reply is not {score: 0..1, why}: ${JSON.stringify(v).slice(0, 200)}`
  }
  return { ok: false, why }
}

// grade scores an answer: the case's assertions (mosh:eval score), then its rubric through the
// judge. {outcome: pass|fail|unscorable, score, results, judge?}.
export async function grade(c, answer, opts = {}) {
  const threshold = opts.threshold ?? 0.8
  const s = await score(c, answer, { cwd: opts.cwd })
  const results = s.results.map((r) => ({
    type: r.type,
    value: r.type === "json-path" ? r.path + ("value" in r ? " = " + JSON.stringify(r.value) : "") : r.value,
    pass: !!r.pass,
    weight: r.weight,
    detail: resultDetail(r),
  }))
  let judged = null
  if (c.rubric !== undefined && (opts.judge ?? "rules") !== "rules") {
    const j = await judge(c, answer, opts)
    if (!j.ok) return { outcome: "unscorable", score: null, results, judge: { score: null, why: j.why } }
    judged = { score: j.score, why: j.why }
    results.push({ type: "rubric", value: c.rubric, pass: j.score >= threshold, weight: 1, detail: j.why, score: j.score })
  }
  if (results.length === 0) {
    return { outcome: "unscorable", score: null, results, judge: { score: null, why: "a rubric-only case needs a judge (--judge ENGINE or model); rules scores assertions only" } }
  }
  const total = results.reduce((n, r) => n + r.weight, 0)
  const got = results.reduce((n, r) => n + r.weight * (r.type === "rubric" ? r.score : r.pass ? 1 : 0), 0)
  const value = total === 0 ? (results.every((r) => r.pass) ? 1 : 0) : got / total
  for (const r of results) delete r.score
  const pass = results.every((r) => r.pass)
  const out = { outcome: pass ? "pass" : "fail", score: value, results }
  if (judged) out.judge = judged
  return out
}

function resultDetail(r) {
  if (r.error) return r.error
  if (r.type === "command") return `exit ${r.code}${r.output ? ": " + r.output.trim().slice(-500) : ""}`
  if (r.type === "json-path" && "got" in r) return `got ${JSON.stringify(r.got)}`
  return r.pass ? "matched" : "no match"
}

// ANSWER_SOURCES are the artifact sources that are the engine's own answer.
const ANSWER_SOURCES = ["hook", "remote"]

// ANSWER_MODES are the values of runRow's opts.answers (eval's --answers).
export const ANSWER_MODES = ["any", "engine"]

// promptKey is the text of s that survives any terminal's rendering of it: letters and digits,
// lower-cased (no spaces, punctuation, box drawing or prompt glyphs like ❯ ›, which wrap and
// chrome change).
const promptKey = (s) => String(s).toLowerCase().replace(/[\s\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u2000-\u2bff]/g, "")

// screenAnswer is the text a turn added to the screen below its typed prompt: text is the screen
// artifact (what appeared since the prompt was typed, the prompt's echo included), and the echo
// and everything above it are dropped, however the terminal wrapped it. When the echo is not
// found whole (its top scrolled away), the leading lines that are pieces of the prompt are
// dropped, and so is any later line that carries the whole prompt among other text (a status bar
// naming the last prompt). "" when the turn printed nothing else (or only glyphs without a letter or digit: a
// shell's next "$", a rule): the prompt is never an answer.
export function screenAnswer(text, prompt) {
  if (typeof text !== "string" || text === "") return ""
  const lines = text.split("\n")
  const needle = promptKey(prompt ?? "")
  let flat = ""
  const lineOf = []
  lines.forEach((l, i) => {
    const k = promptKey(l)
    flat += k
    for (let j = 0; j < k.length; j++) lineOf.push(i)
  })
  let from = 0
  const at = needle === "" ? -1 : flat.indexOf(needle)
  if (at >= 0) {
    from = lineOf[at + needle.length - 1] + 1
  } else {
    while (from < lines.length) {
      const k = promptKey(lines[from])
      if (k !== "" && !needle.includes(k)) break
      from++
    }
  }
  // A line below that carries the prompt among other text (an engine's status bar names the last
  // prompt: Codex's "model · dir · PROMPT") is chrome, not an answer: the prompt never scores
  // itself. A line that is exactly the prompt is kept: an answer may repeat it.
  const again = (l) => {
    const k = promptKey(l)
    return needle.length >= 8 && k !== needle && k.includes(needle)
  }
  const rest = lines
    .slice(from)
    .filter((l) => !again(l))
    .map((l) => l.trimEnd())
  while (rest.length > 0 && rest[0].trim() === "") rest.shift()
  while (rest.length > 0 && rest[rest.length - 1].trim() === "") rest.pop()
  // Only glyphs left (a shell's next "$", a rule, an empty input box): nothing was answered.
  return promptKey(rest.join("")) === "" ? "" : rest.join("\n")
}

// answerOf picks a row's answer from its task's artifact: {answer, source}.
export function answerOf(artifact, prompt) {
  if (artifact && ANSWER_SOURCES.includes(artifact.source) && artifact.text) return { answer: artifact.text, source: artifact.source }
  if (artifact && artifact.source === "screen") {
    const text = screenAnswer(artifact.text, prompt)
    if (text !== "") return { answer: text, source: "screen" }
  }
  return { answer: "", source: "none" }
}

// answerFix is what makes an engine report its own answer.
async function answerFix(engine) {
  const e = engine ? await herdEngine(engine) : null
  if (e && e.hooks) return `mosh herd hooks install ${e.name}`
  return `${engine ? engine + " has no hooks in the engines table" : "this member has no engine with hooks"}: make its turn print the answer, or evaluate an engine with hooks (mosh herd hooks install ENGINE)`
}

// lastLines is what a member left on its screen: its last n non-blank lines.
async function lastLines(name, n = 6) {
  const text = await herdRead(name, { lines: 60 })
  return (text || "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .slice(-n)
    .join("\n")
}

// questionOf is what a blocked member asks: its kind (permission, question…) and the dialog's
// text, the last lines of its screen without blank lines and rules.
async function questionOf(name, kind) {
  const lines = (await herdRead(name, { lines: 24 }))
    .split("\n")
    .map((l) => l.replace(/[│┃|]/g, " ").trim())
    .filter((l) => l !== "" && !/^[─━═╌┄-]+$/.test(l))
  const text = lines.slice(-10).join("\n")
  return kind ? (text ? `${kind}: ${text}` : kind) : text
}

export async function runRow(c, opts = {}) {
  const member = {} // the member's engine and cwd, for its records once it is gone
  const row = await attemptRow(c, opts, member)
  row.cost = await rowCost(row, member)
  return row
}

// rowCost is what the row's task used, read from its engine's own records by herdTaskCost (as
// mosh herd cost reads them), after the member was killed (Claude Code writes its money as it
// exits): {totalTokens, tokens, costUSD, costSource, note}. A value the records do not give is
// null with the note saying why, never 0.
export async function rowCost(row, member = {}) {
  const none = (note) => ({ totalTokens: null, tokens: null, costUSD: null, note })
  if (!row.taskId) return none("no task: the row's prompt was never typed")
  const r = await herdTaskCost(row.taskId, { engine: member.engine, cwd: member.cwd })
  if (!r) return none(`the use of ${row.taskId} could not be read: see mosh herd task ${row.taskId}`)
  const o = { totalTokens: r.totalTokens, tokens: r.tokens, costUSD: r.costUSD }
  if (r.costSource) o.costSource = r.costSource
  if (r.note) o.note = r.note
  return o
}

// costSum is an engine's use over its rows: the tokens of the rows that have them (null when no
// row has), the money when every row with tokens has it (else null), how many rows have no
// tokens, and the first reason something is missing.
export function costSum(rows) {
  const known = rows.filter((r) => r.cost && r.cost.totalTokens !== null)
  const o = { totalTokens: null, tokens: null, costUSD: null, unknown: rows.length - known.length }
  if (known.length > 0) {
    o.tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
    for (const r of known) for (const k of Object.keys(o.tokens)) o.tokens[k] += r.cost.tokens[k] || 0
    o.totalTokens = known.reduce((n, r) => n + r.cost.totalTokens, 0)
    if (known.every((r) => r.cost.costUSD !== null)) o.costUSD = known.reduce((n, r) => n + r.cost.costUSD, 0)
  }
  const why = rows.find((r) => r.cost && r.cost.note && (r.cost.totalTokens === null || r.cost.costUSD === null))
  if (why) o.note = why.cost.note
  return o
}

async function attemptRow(c, opts, member) {
  const started = Date.now()
  const spec = opts.engine
  if (typeof spec !== "string" || spec === "") throw new TypeError("runRow(case, {engine}): missing the engine")
  const fresh = !spec.startsWith("@")
  const timeout = opts.timeout ?? 10 * MINUTE
  const grace = opts.blockedGrace ?? 30000
  const answers = opts.answers ?? "any"
  if (!ANSWER_MODES.includes(answers)) throw new TypeError(`runRow(case, {answers}): answers is ${ANSWER_MODES.join(" or ")}, not ${JSON.stringify(answers)}`)
  const row = { id: c.id, engine: spec, attempt: opts.attempt ?? 1, outcome: "error", score: null, pass: false, answer: "", answerSource: "none", taskId: null, member: null }
  let engineName = fresh ? spec : null
  let cwd = opts.cwd
  let worktree = null
  let name = fresh ? null : spec.slice(1)
  let started_ = false
  const done = (fields) => {
    Object.assign(row, fields)
    row.durationMs = Date.now() - started
    if (!row.results) row.results = []
    return row
  }
  try {
    if (opts.isolated && fresh) {
      try {
        worktree = await addWorktree(opts.repo, opts.name || c.id)
      } catch (e) {
        return done({ error: e.message })
      }
      cwd = worktree
      row.worktree = worktree
    }
    const deadline = Date.now() + timeout
    if (fresh) {
      // temporary: the member is killed however the run ends (Ctrl-C included), unless kept.
      const launch = { name: opts.name, cwd, agent: !!opts.agent, temporary: !opts.keep }
      if (opts.args && opts.args.length > 0) launch.args = opts.args
      const r = await herdStart(spec, launch)
      if (!r.ok) return done({ error: r.error, code: r.code })
      name = r.name
      started_ = true
      row.member = name
      member.engine = r.engine
      member.cwd = r.cwd
      // Ready when its state says so: idle. A member that starts blocked (a trust dialog) gets the
      // grace like any block.
      const ready = await awaitTurn(name, deadline, grace, ["idle", "blocked"])
      if (ready.end === "failed") {
        const lines = await lastLines(name)
        const code = ready.exitCode === null || ready.exitCode === undefined ? "" : ` with code ${ready.exitCode}`
        return done({ outcome: "failed", exitCode: ready.exitCode, startup: true, reason: `${engineName} exited during start-up${code}${lines ? ": " + lines : " (its screen is empty)"}` })
      }
      if (ready.end === "timeout") return done({ outcome: "timeout" })
      if (ready.end === "blocked") return done({ outcome: "blocked", question: await questionOf(name, ready.question) })
    } else {
      row.member = name
      const m = (await herdList()).find((x) => x.name === name)
      if (!cwd && m && m.cwd) cwd = m.cwd
      if (m) engineName = member.engine = m.engine
      if (m) member.cwd = m.cwd
      // Rows run in sequence here: one may have left the member blocked (its question
      // unanswered). This row's prompt would wait behind that question, so the member gets the
      // grace like any block (someone may answer it), then the row is blocked with that question
      // and its prompt is not typed — not queued, not a timeout.
      if (m && m.state === "blocked") {
        const still = await awaitTurn(name, deadline, grace, ["idle", "done", "blocked"], { outcome: "matched", state: "blocked", blockedOn: m.blockedOn })
        if (still.end === "failed") return done({ outcome: "failed", exitCode: still.exitCode })
        if (still.end === "timeout") return done({ outcome: "timeout" })
        if (still.end === "blocked") {
          return done({ outcome: "blocked", question: await questionOf(name, still.question), error: `not typed: ${name} was still blocked on an earlier question` })
        }
      }
    }
    // The prompt and the wait for its own turn in one call: a prompt that waits in a busy
    // member's queue is followed until its task has run.
    const states = ["done", "idle", "blocked"]
    const p = await herdAsk(name, c.prompt, { states, timeout: Math.max(1, deadline - Date.now()) })
    if (p.task) row.taskId = p.task
    if (!p.ok) {
      if (p.code === 3) return done({ outcome: "failed", exitCode: null, error: p.error })
      return done({ error: p.error, code: p.code })
    }
    let turn
    if (p.outcome === "ended" && p.exitCode === undefined && p.taskState === "failed") {
      // The engine said its turn failed (an API error: Claude's StopFailure): the row failed, with
      // the engine's error; never a wrong answer.
      const t = p.task ? await herdTask(p.task) : null
      const why = (t && t.artifact && t.artifact.text) || "no error text"
      return done({ outcome: "failed", exitCode: null, error: `the engine's turn failed: ${why} (see mosh herd task ${p.task})` })
    }
    if (p.outcome === "ended" && p.exitCode === undefined && p.taskState) {
      return done({ error: `the task ended ${p.taskState}, not done (see mosh herd task ${p.task})` })
    }
    turn = await awaitTurn(name, deadline, grace, states, { outcome: p.outcome, state: p.state, exitCode: p.exitCode })
    const task = p.task ? await herdTask(p.task) : null
    // The engine's own final message (a hook's, or a remote agent's reply); else, for a turn that
    // ended, what it printed below the typed prompt (a crashed or unfinished turn's screen is a
    // spinner, not an answer); never the prompt itself.
    let got = answerOf(task && task.artifact, c.prompt)
    if (got.source === "screen" && turn.end !== "done") got = { answer: "", source: "none" }
    row.answer = got.answer
    row.answerSource = got.source
    if (turn.end === "failed") {
      const lines = await lastLines(name)
      return done({ outcome: "failed", exitCode: turn.exitCode, ...(lines ? { reason: `the engine exited mid-row: ${lines}` } : {}) })
    }
    if (turn.end === "timeout") return done({ outcome: "timeout" })
    if (turn.end === "blocked") return done({ outcome: "blocked", question: await questionOf(name, turn.question) })
    if (got.source === "none") {
      return done({
        outcome: "unscorable",
        reason: `no answer: ${engineName || name} reported no final message (its hooks are not installed or did not fire) and the turn printed nothing below the prompt`,
        fix: await answerFix(engineName),
      })
    }
    if (got.source === "screen" && answers === "engine") {
      return done({
        outcome: "unscorable",
        reason: `--answers engine: ${engineName || name} reported no final message (its hooks are not installed or did not fire); the only answer is the screen's`,
        fix: await answerFix(engineName),
      })
    }
    const g = await grade(c, row.answer, { cwd, judge: opts.judge, threshold: opts.threshold, timeout: opts.judgeTimeout })
    const out = { outcome: g.outcome, score: g.score, pass: g.outcome === "pass", results: g.results }
    if (g.judge) out.judge = g.judge
    return done(out)
  } catch (e) {
    return done({ outcome: "error", error: e.message })
  } finally {
    if (fresh && started_ && !opts.keep) await herdKill(name)
    if (worktree && !opts.keep) await removeWorktree(opts.repo, worktree)
  }
}

// ---- reports ---------------------------------------------------------------------------------

export function median(xs) {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : Math.round((s[m - 1] + s[m]) / 2)
}

// consolidate folds a case's attempts (--repeat) into one outcome: pass@k (any attempt passed),
// else the first attempt that was not unscorable, else unscorable. Rows passing some but not all
// attempts are marked flaky (in place).
function consolidate(attempts) {
  const passed = attempts.filter((r) => r.outcome === "pass").length
  if (passed > 0 && passed < attempts.length) for (const r of attempts) r.flaky = true
  if (passed > 0) return "pass"
  const scored = attempts.find((r) => r.outcome !== "unscorable")
  return scored ? scored.outcome : "unscorable"
}

// summarize turns rows into the per-engine summary: score = passed / (total - unscorable),
// pass = score >= threshold. engines lists the specs in order.
export function summarize(rows, engines, threshold = 0.8) {
  return engines.map((engine) => {
    const mine = rows.filter((r) => r.engine === engine)
    const byCase = new Map()
    for (const r of mine) {
      if (!byCase.has(r.id)) byCase.set(r.id, [])
      byCase.get(r.id).push(r)
    }
    const n = { pass: 0, fail: 0, blocked: 0, timeout: 0, failed: 0, unscorable: 0, error: 0 }
    for (const attempts of byCase.values()) n[consolidate(attempts)]++
    const total = byCase.size
    const scorable = total - n.unscorable
    const score = scorable > 0 ? n.pass / scorable : null
    return {
      engine,
      score,
      passed: n.pass,
      failed: n.fail,
      blocked: n.blocked,
      timeouts: n.timeout,
      errors: n.failed + n.error,
      unscorable: n.unscorable,
      total,
      medianMs: median(mine.map((r) => r.durationMs)),
      cost: costSum(mine),
      pass: score !== null && score >= threshold,
    }
  })
}

// xmlEscape makes text safe in XML 1.0 character data and attributes: the five entities, and
// characters XML cannot hold (control characters, lone surrogates) replaced by U+FFFD.
export function xmlEscape(s) {
  return String(s)
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (m, pre) => (pre ?? "") + "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
}

const tail = (s, n) => (s.length > n ? "…" + s.slice(-n) : s)

// junit renders a report as JUnit XML: one testsuite per engine, one testcase per row; fail is a
// <failure>, blocked/timeout/failed/error an <error> (infrastructure), unscorable <skipped>.
export function junit(report) {
  const repeat = report.rows.some((r) => r.attempt > 1)
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>']
  const all = { tests: 0, failures: 0, errors: 0, skipped: 0, time: 0 }
  const suites = []
  for (const e of report.engines) {
    const rows = report.rows.filter((r) => r.engine === e.engine)
    const s = { tests: rows.length, failures: 0, errors: 0, skipped: 0, time: 0, cases: [] }
    for (const r of rows) {
      const t = (r.durationMs || 0) / 1000
      s.time += t
      const name = repeat ? `${r.id} (attempt ${r.attempt})` : r.id
      const open = `    <testcase classname="${xmlEscape(e.engine)}" name="${xmlEscape(name)}" time="${t.toFixed(3)}"`
      const body = []
      const why = rowMessage(r)
      if (r.outcome === "fail") {
        s.failures++
        body.push(`      <failure message="${xmlEscape(why)}" type="fail">${xmlEscape(failedChecks(r))}</failure>`)
      } else if (["blocked", "timeout", "failed", "error"].includes(r.outcome)) {
        s.errors++
        body.push(`      <error message="${xmlEscape(why)}" type="${r.outcome}"></error>`)
      } else if (r.outcome === "unscorable") {
        s.skipped++
        body.push(`      <skipped message="${xmlEscape(why)}"></skipped>`)
      }
      if (r.answer) body.push(`      <system-out>${xmlEscape(tail(r.answer, 2000))}</system-out>`)
      s.cases.push(body.length ? [open + ">", ...body, "    </testcase>"].join("\n") : open + "/>")
    }
    for (const k of ["tests", "failures", "errors", "skipped", "time"]) all[k] += s[k]
    suites.push(
      [
        `  <testsuite name="${xmlEscape(e.engine)}" tests="${s.tests}" failures="${s.failures}" errors="${s.errors}" skipped="${s.skipped}" time="${s.time.toFixed(3)}">`,
        ...s.cases,
        "  </testsuite>",
      ].join("\n"),
    )
  }
  lines.push(
    `<testsuites name="mosh herd eval" tests="${all.tests}" failures="${all.failures}" errors="${all.errors}" skipped="${all.skipped}" time="${all.time.toFixed(3)}">`,
  )
  lines.push(...suites, "</testsuites>", "")
  return lines.join("\n")
}

// rowMessage says in one line why a row is not a pass.
export function rowMessage(r) {
  switch (r.outcome) {
    case "pass":
      return "passed"
    case "fail":
      return `score ${r.score === null ? "-" : Math.round(r.score * 100) / 100}: ${failedChecks(r) || "failed"}`
    case "blocked":
      return `blocked on a question: ${r.question || "(none shown)"}`
    case "timeout":
      return "the turn did not end before --timeout"
    case "failed":
      if (r.reason) return r.reason.replace(/\n/g, " ⏎ ")
      return `the engine exited mid-row${r.exitCode === null || r.exitCode === undefined ? "" : ` with code ${r.exitCode}`}`
    case "unscorable":
      if (r.reason) return `${r.reason}${r.fix ? ` — fix: ${r.fix}` : ""}`
      return (r.judge && r.judge.why) || "unscorable"
    case "error":
      return r.error || "the row could not run"
  }
  return r.outcome
}

function failedChecks(r) {
  return (r.results || [])
    .filter((x) => !x.pass)
    .map((x) => `${x.type} ${JSON.stringify(x.value)}${x.detail ? " (" + x.detail + ")" : ""}`)
    .join("; ")
}
