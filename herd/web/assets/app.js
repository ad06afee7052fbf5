// The herd dashboard. Every datum reaches the page through textContent or a text node, never as
// markup; the page's own structure is built with createElement. No inline script: the CSP
// (script-src 'self') would refuse it.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
const main = document.getElementById("main");
const conn = document.getElementById("conn");

// el builds an element: attrs are set with setAttribute (never on* handlers), children are
// nodes or strings (text nodes).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function memberHref(name) { return "/ui/m/" + encodeURIComponent(name); }

function ago(ms) {
  const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  return Math.floor(s / 3600) + "h" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
}

function dur(ms) {
  if (ms === undefined || ms === null) return "";
  if (ms < 1000) return ms + "ms";
  return ago(Date.now() - ms);
}

// post sends an action with the session's CSRF token; it resolves to {ok, body}.
async function post(path, body) {
  const r = await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify(body || {}),
  });
  let data = {};
  try { data = await r.json(); } catch (e) { /* empty */ }
  if (r.status === 401) location.assign("/ui/signin");
  return { ok: r.ok, body: data };
}

function say(target, res) {
  target.textContent = res.ok ? describe(res.body) : (res.body.error || "refused");
  target.className = res.ok ? "dim" : "error";
}

function describe(b) {
  if (b.queued || b.position) return "queued" + (b.behind ? " behind " + b.behind : "") + (b.position ? " (position " + b.position + ")" : "");
  if (b.task) return "sent (task " + b.task + ")";
  return "done";
}

function stateCell(m) {
  const s = m.state + (m.blockedOn ? " · " + m.blockedOn : "");
  return el("span", { class: "state-" + m.state, "data-role": "state" }, s);
}

// answerControls fits the question: a button per option of a menu, yes / no / always for a
// permission without readable options, a text box for a question.
function answerControls(name, q, blockedOn, status) {
  const box = el("div", { class: "answer", "data-role": "answer" });
  const send = async (text) => say(status, await post("/ui/api/members/" + encodeURIComponent(name) + "/answer", { text }));
  if (q && q.text) box.append(el("div", { class: "question", "data-role": "question" }, q.text));
  const opts = el("div", { class: "options" });
  if (q && q.options && q.options.length) {
    for (const o of q.options) {
      const b = el("button", { type: "button", "data-key": o.key, "data-role": "option" }, o.key + ". " + o.label);
      b.addEventListener("click", () => send(o.key));
      opts.append(b);
    }
  } else if ((q && q.kind === "permission") || blockedOn === "permission") {
    for (const [label, key] of [["yes", "yes"], ["no", "no"], ["always", "always"]]) {
      const b = el("button", { type: "button", "data-key": key, "data-role": "option" }, label);
      b.addEventListener("click", () => send(key));
      opts.append(b);
    }
  }
  box.append(opts);
  if (!(q && q.options && q.options.length) || (q && q.kind === "question")) {
    const input = el("input", { type: "text", placeholder: "answer", "data-role": "answer-text" });
    const b = el("button", { type: "button", "data-role": "answer-send" }, "answer");
    b.addEventListener("click", () => { if (input.value.trim()) send(input.value); });
    box.append(el("div", { class: "options" }, input, b));
  }
  box.append(status);
  return box;
}

// streamLost: a stream the browser retries says so; one it gave up on (an answer other than 200,
// such as 401 once the session ended) sends the page to the sign-in when the session is gone.
async function streamLost(src) {
  conn.textContent = "reconnecting…";
  if (src.readyState !== EventSource.CLOSED) return;
  const r = await fetch("/ui/api/roster", { credentials: "same-origin" });
  if (r.status === 401) location.assign("/ui/signin");
  else conn.textContent = "disconnected: reload the page";
}

// ---- roster -------------------------------------------------------------------------------------

let rosterSource = null;

function showRoster() {
  document.title = "mosh herd";
  const table = el("table", { id: "roster" },
    el("thead", {}, el("tr", {}, ...["member", "state", "authority", "in state", "task", "queue", "question"].map((h) => el("th", {}, h)))),
    el("tbody", {}));
  const err = el("p", { class: "error", id: "roster-error" });
  main.replaceChildren(err, table);
  const tbody = table.tBodies[0];
  const keep = new Map(); // name → status line, kept across updates while an answer is pending
  rosterSource = new EventSource("/ui/api/events");
  rosterSource.addEventListener("open", () => { conn.textContent = "live"; });
  rosterSource.addEventListener("error", () => streamLost(rosterSource));
  rosterSource.addEventListener("roster", (ev) => {
    const msg = JSON.parse(ev.data);
    err.textContent = msg.error || "";
    const rows = msg.members.map((m) => {
      const since = el("td", { "data-since": m.sinceMs }, ago(m.sinceMs));
      let q = el("td", {});
      if (m.state === "blocked") {
        if (!keep.has(m.name)) keep.set(m.name, el("span", {}));
        q = el("td", {}, m.actionable ? answerControls(m.name, m.question, m.blockedOn, keep.get(m.name))
          : el("span", { class: "dim" }, (m.question && m.question.text) || "read-only (autonomous)"));
      }
      return el("tr", { "data-member": m.name, "data-state": m.state },
        el("td", {}, el("a", { href: memberHref(m.name) }, m.name), " ", el("span", { class: "dim" }, m.engine + (m.autonomous ? " · autonomous" : ""))),
        el("td", {}, stateCell(m)),
        el("td", { class: "dim" }, m.authority),
        since,
        el("td", {}, m.task || ""),
        el("td", {}, m.queued ? String(m.queued) : ""),
        q);
    });
    tbody.replaceChildren(...rows);
    if (msg.members.length === 0) tbody.append(el("tr", {}, el("td", { colspan: 7, class: "dim" }, "no members: mosh herd start claude")));
  });
}

setInterval(() => {
  for (const td of document.querySelectorAll("td[data-since]")) td.textContent = ago(Number(td.getAttribute("data-since")));
}, 1000);

// ---- a member -----------------------------------------------------------------------------------

// drawScreen renders a snapshot.Grid: one row per line, one span per run with its colours and
// attributes, wide characters two columns wide, the cursor as an outlined cell.
function drawScreen(pre, g) {
  const rows = [];
  for (let y = 0; y < g.rows; y++) {
    const line = g.lines[y] || [];
    const row = el("div", { class: "row" });
    let col = 0;
    let cursorDrawn = g.cursorHidden || g.cursorY !== y;
    for (const run of line) {
      const chars = Array.from(run.t);
      const width = run.w ? 2 : chars.length;
      if (!cursorDrawn && g.cursorX >= col && g.cursorX < col + width && !run.w) {
        const i = g.cursorX - col;
        if (i > 0) row.append(span(run, chars.slice(0, i).join("")));
        row.append(span(run, chars[i], "cursor"));
        if (i + 1 < chars.length) row.append(span(run, chars.slice(i + 1).join("")));
        cursorDrawn = true;
      } else {
        row.append(span(run, run.t, cursorDrawn || g.cursorX !== col ? "" : "cursor"));
        if (!cursorDrawn && g.cursorX === col) cursorDrawn = true;
      }
      col += width;
    }
    if (!cursorDrawn) {
      if (g.cursorX > col) row.append(document.createTextNode(" ".repeat(g.cursorX - col)));
      row.append(el("span", { class: "cursor" }, " "));
    }
    rows.push(row);
  }
  pre.replaceChildren(...rows);
}

function span(run, text, extra) {
  const cls = [run.b && "b", run.f && "f", run.i && "i", run.u && "u", run.s && "s", run.w && "w", extra].filter(Boolean).join(" ");
  const s = el("span", cls ? { class: cls } : {}, text);
  let fg = run.fg, bg = run.bg;
  if (run.r) { [fg, bg] = [bg || "#e5e5e5", fg || "#000000"]; }
  if (fg) s.style.color = fg;
  if (bg) s.style.backgroundColor = bg;
  return s;
}

function timeline(t) {
  const bar = el("div", { class: "bar" });
  const tr = t.transitions || [];
  const start = t.submittedMs, end = t.endedMs || Date.now();
  const total = Math.max(1, end - start);
  let blockedMs = 0;
  const steps = [];
  for (let i = 0; i < tr.length; i++) {
    const from = tr[i].atMs, to = i + 1 < tr.length ? tr[i + 1].atMs : end;
    const seg = Math.max(0, to - from);
    if (tr[i].state === "blocked") blockedMs += seg;
    steps.push(tr[i].state + (tr[i].blockedOn ? "·" + tr[i].blockedOn : "") + (tr[i].authority ? " (" + tr[i].authority + ")" : "") +
      (i + 1 < tr.length || t.open ? " " + (seg < 1000 ? seg + "ms" : Math.round(seg / 100) / 10 + "s") : "") + (tr[i].note ? " — " + tr[i].note : ""));
    const known = ["working", "blocked", "done", "idle"].includes(tr[i].state);
    const d = el("div", { class: "seg-" + (known ? tr[i].state : "other"), title: tr[i].state + " " + dur(seg) });
    d.style.width = (100 * seg / total) + "%";
    bar.append(d);
  }
  return { bar, blockedMs, steps: el("div", { class: "dim steps", "data-role": "transitions" }, steps.join(" → ")) };
}

let screenSource = null;

async function showMember(name) {
  document.title = name + " · mosh herd";
  const status = el("span", { "data-role": "status" });
  const head = el("div", { class: "member-head" }, el("h2", { id: "member-name" }, name), el("span", { id: "member-state" }));
  const acts = el("div", { class: "acts", id: "acts" });
  const pre = el("div", { class: "screen", id: "screen" });
  const tasks = el("div", { id: "tasks" });
  main.replaceChildren(head, acts, el("div", { class: "cols" }, pre, tasks));

  screenSource = new EventSource("/ui/api/members/" + encodeURIComponent(name) + "/screen");
  screenSource.addEventListener("open", () => { conn.textContent = "live"; });
  screenSource.addEventListener("error", () => streamLost(screenSource));
  screenSource.addEventListener("screen", (ev) => drawScreen(pre, JSON.parse(ev.data)));
  screenSource.addEventListener("gone", () => { screenSource.close(); conn.textContent = name + " is gone"; });

  let lastState = "";
  const refresh = async () => {
    const r = await fetch("/ui/api/members/" + encodeURIComponent(name), { credentials: "same-origin" });
    if (r.status === 401) { location.assign("/ui/signin"); return; }
    if (!r.ok) { head.querySelector("#member-state").textContent = "no such member"; return; }
    const v = await r.json();
    const m = v.member;
    head.querySelector("#member-state").replaceChildren(stateCell(m), " ",
      el("span", { class: "dim" }, m.engine + " · " + m.authority + (m.autonomous ? " · autonomous" : "") + (m.queued ? " · " + m.queued + " queued" : "")));
    const key = m.state + "/" + JSON.stringify(m.question || null) + "/" + v.actionable;
    if (key !== lastState) {
      lastState = key;
      drawActs(acts, name, m, v.actionable, status);
    }
    drawTasks(tasks, v.tasks);
  };
  await refresh();
  // The roster stream says when this member changed; the page then re-reads it.
  let lastRow = "";
  rosterSource = new EventSource("/ui/api/events");
  rosterSource.addEventListener("error", () => streamLost(rosterSource));
  rosterSource.addEventListener("roster", (ev) => {
    const row = JSON.stringify(JSON.parse(ev.data).members.find((m) => m.name === name) || null);
    if (row !== lastRow) { lastRow = row; refresh(); }
  });
}

function drawActs(acts, name, m, actionable, status) {
  if (!actionable) {
    acts.replaceChildren(el("span", { class: "dim" }, "read-only: launched autonomous (mosh herd serve --expose-autonomous to act on it)"));
    return;
  }
  const parts = [];
  if (m.state === "blocked") parts.push(answerControls(name, m.question, m.blockedOn, status));
  const text = el("textarea", { id: "prompt-text", placeholder: "prompt (queued while it works)" });
  const send = el("button", { type: "button", id: "prompt-send" }, "prompt");
  send.addEventListener("click", async () => {
    if (!text.value.trim()) return;
    const res = await post("/ui/api/members/" + encodeURIComponent(name) + "/prompt", { text: text.value });
    say(status, res);
    if (res.ok) text.value = "";
  });
  const intr = el("button", { type: "button", id: "interrupt" }, "interrupt");
  intr.addEventListener("click", async () => say(status, await post("/ui/api/members/" + encodeURIComponent(name) + "/interrupt", {})));
  const killBox = el("span", {});
  const kill = el("button", { type: "button", class: "danger", id: "kill" }, "kill…");
  kill.addEventListener("click", () => {
    const confirmText = el("input", { type: "text", id: "kill-confirm", placeholder: "type " + name + " to kill" });
    const go = el("button", { type: "button", class: "danger", id: "kill-go" }, "kill " + name);
    go.addEventListener("click", async () => say(status, await post("/ui/api/members/" + encodeURIComponent(name) + "/kill", { confirm: confirmText.value })));
    killBox.replaceChildren(confirmText, go);
  });
  parts.push(el("div", { class: "acts" }, text, send, intr, kill, killBox));
  if (m.state !== "blocked") parts.push(status);
  acts.replaceChildren(...parts);
}

function drawTasks(box, list) {
  const queued = list.filter((t) => t.queued);
  const rest = list.filter((t) => !t.queued).reverse();
  const out = [];
  if (queued.length) {
    out.push(el("h3", {}, "queued"));
    out.push(el("ol", { id: "queued" }, ...queued.map((t) => el("li", {}, t.id + " ", el("span", { class: "dim" }, t.text)))));
  }
  out.push(el("h3", {}, "tasks"));
  for (const t of rest) {
    const { bar, blockedMs, steps } = timeline(t);
    const art = t.artifact ? el("div", { class: "artifact", "data-role": "artifact" }, t.artifact.text) : null;
    out.push(el("div", { class: "task", "data-task": t.id },
      el("div", {}, el("b", {}, t.id), " ", el("span", { class: "state-" + t.state }, t.state), " ",
        el("span", { class: "dim" }, dur(t.durationMs) + (blockedMs ? " · waited on you " + dur(blockedMs) : ""))),
      el("div", { class: "dim", "data-role": "prompt" }, t.text),
      bar, steps, art));
  }
  box.replaceChildren(...out);
}

// ---- evals --------------------------------------------------------------------------------------

async function showEvals() {
  document.title = "evals · mosh herd";
  const r = await fetch("/ui/api/evals", { credentials: "same-origin" });
  if (r.status === 401) { location.assign("/ui/signin"); return; }
  const v = await r.json();
  const out = [el("h2", {}, "eval runs"), el("p", { class: "dim" }, "kept in " + v.dir)];
  if (!v.runs.length) out.push(el("p", { class: "dim" }, "no runs yet: mosh herd eval --dataset FILE --engines claude"));
  for (const run of v.runs) {
    const rep = run.report;
    out.push(el("h3", {}, (rep.dataset || run.file) + " · " + (rep.startedAt || ""), " ",
      el("span", { class: rep.pass ? "pass" : "fail" }, rep.pass ? "pass" : "fail")));
    out.push(el("table", { class: "engines" },
      el("thead", {}, el("tr", {}, ...["engine", "score", "passed", "failed", "blocked", "timeouts", "errors"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...(rep.engines || []).map((e) => el("tr", {},
        el("td", {}, e.engine), el("td", {}, e.score === null ? "-" : Math.round(e.score * 1000) / 10 + "%"),
        el("td", {}, e.passed + "/" + e.total), el("td", {}, String(e.failed)), el("td", {}, String(e.blocked)),
        el("td", {}, String(e.timeouts)), el("td", {}, String(e.errors)))))));
    out.push(el("table", { class: "rows" },
      el("thead", {}, el("tr", {}, ...["row", "engine", "outcome", "score", "answer", "source", "assertions"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...(rep.rows || []).map((x) => el("tr", {},
        el("td", {}, x.id + (x.attempt > 1 ? " #" + x.attempt : "")), el("td", {}, x.engine),
        el("td", { class: x.pass ? "pass" : "fail" }, x.outcome), el("td", {}, x.score === null || x.score === undefined ? "-" : String(x.score)),
        el("td", { class: "question" }, x.answer || ""), el("td", { class: "dim" }, x.answerSource || ""),
        el("td", { class: "dim" }, (x.results || []).map((a) => (a.pass ? "✓ " : "✗ ") + (a.name || a.type || JSON.stringify(a))).join("\n")))))));
  }
  main.replaceChildren(...out);
}

// ---- routing ------------------------------------------------------------------------------------

const path = location.pathname;
if (path.startsWith("/ui/m/")) showMember(decodeURIComponent(path.slice("/ui/m/".length)));
else if (path === "/ui/evals") showEvals();
else showRoster();
