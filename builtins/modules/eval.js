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
