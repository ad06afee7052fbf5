package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// What `mosh herd hooks install` writes, derived from the engines table.
//
// An engine's HookSpec (engines.json) names a Format, the user-level File and
// the Events that map to states. The Format decides the layout:
//
//   - "json-hooks" formats (claude-settings, codex-hooks, gemini-settings)
//     extend a JSON settings file: "hooks": {Event: [{matcher, hooks:
//     [{type: "command", command, timeout}]}]}, one matcher group per event,
//     appended after the user's groups.
//   - "file" formats (opencode-plugin, pi-extension) own a whole file: a
//     plugin or extension that spawns the same report command.
//
// Every hook runs `mosh herd report "$MOSH_HERD_NAME" STATE --payload -` with
// the engine's own JSON on stdin. The command is POSIX sh, prints nothing,
// always exits 0 and does nothing outside the herd (MOSH_HERD_NAME unset).
// Which mosh runs is "${MOSH_HERD_BIN:-mosh}": the daemon can hand members
// the path of the binary it runs as, so hooks work without mosh on PATH.
//
// Our entries are found by HookMarker in their command, never by an extra
// key (the engines' schemas have no room for one); our files by FileMarker.

// HookMarker is in every hook command the herd installs, and in no other.
const HookMarker = `herd report "$MOSH_HERD_NAME"`

// FileMarker starts the first line of every plugin/extension file the herd
// installs; a file at our path without it is the user's and is left alone.
const FileMarker = "// mosh-herd:"

// Hook layouts.
const (
	LayoutJSONHooks = "json-hooks"
	LayoutFile      = "file"
)

// HookFormat is how one family of engines keeps its hooks.
type HookFormat struct {
	Layout string `json:"layout"`
	// Timeout is written as each hook's "timeout" field, in TimeoutUnit (the
	// engine kills a hook that runs longer). 0 = the format has no field.
	Timeout     int    `json:"timeout,omitempty"`
	TimeoutUnit string `json:"timeoutUnit,omitempty"`
	// ToolMatcher: tool events get `"matcher": ""` (match every tool), as in
	// the payload validated against Claude Code (facts/engines.md §2.5).
	ToolMatcher bool `json:"toolMatcher,omitempty"`
	// Trust names the step an engine needs before it runs new hooks
	// ("codex": trusted hashes in ~/.codex/config.toml).
	Trust string `json:"trust,omitempty"`
	// FileKind is what a file layout writes ("OpenCode plugin").
	FileKind string `json:"fileKind,omitempty"`

	render func(routes []hookRoute) string
}

// hookFormats: the report must finish before the engine gives up on it; 10 s
// is far above a report's round trip and far below Claude's 600 s default.
var hookFormats = map[string]HookFormat{
	"claude-settings": {Layout: LayoutJSONHooks, Timeout: 10, TimeoutUnit: "s", ToolMatcher: true},
	// Codex reads "timeout" in seconds (codex-rs hooks config), clamps
	// SessionEnd to 3 s, and runs a hook only once its hash is trusted.
	"codex-hooks":     {Layout: LayoutJSONHooks, Timeout: 10, TimeoutUnit: "s", ToolMatcher: true, Trust: "codex"},
	"gemini-settings": {Layout: LayoutJSONHooks, Timeout: 10000, TimeoutUnit: "ms"},
	"opencode-plugin": {Layout: LayoutFile, FileKind: "OpenCode plugin", render: renderOpenCodePlugin},
	"pi-extension":    {Layout: LayoutFile, FileKind: "pi extension", render: renderPiExtension},
}

// toolEvents take a tool-name matcher (Claude and Codex).
var toolEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true, "PermissionRequest": true}

// HookPlan is everything the installer needs for one engine.
type HookPlan struct {
	Engine  string     `json:"engine"`
	Aliases []string   `json:"aliases,omitempty"`
	Format  string     `json:"format"`
	Spec    HookFormat `json:"spec"`
	// File as written in the table: "~/" means $HOME.
	File string `json:"file"`
	// ConfigDir is the engine's own directory (~/.claude, ~/.config/opencode):
	// `install all` skips engines whose directory does not exist.
	ConfigDir string `json:"configDir"`
	Note      string `json:"note,omitempty"`
	Marker    string `json:"marker"`
	// Groups: one per event, in table order (json-hooks layouts; the file
	// layouts list them too, for status rows).
	Groups []HookGroup `json:"groups"`
	// Text is the whole file (file layouts).
	Text string `json:"text,omitempty"`
}

// HookGroup is one matcher group the installer keeps in the settings file.
type HookGroup struct {
	Event string `json:"event"`
	// Matcher is written when HasMatcher (an empty string matches all).
	Matcher    string `json:"matcher"`
	HasMatcher bool   `json:"hasMatcher"`
	// Report is the STATE[:KIND] argument; a blocked report without a kind
	// takes it from the payload (AskUserQuestion → question).
	Report  string `json:"report"`
	Command string `json:"command"`
	// TrustHash is what Codex records as trusted_hash for this group's hook
	// (formats with Trust "codex").
	TrustHash string `json:"trustHash,omitempty"`
}

// HookCommand is the sh command a hook runs to report state (e.g. "working"
// or "blocked:permission").
func HookCommand(report string) string {
	return `[ -n "$MOSH_HERD_NAME" ] && "${MOSH_HERD_BIN:-mosh}" ` + HookMarker + ` ` + report +
		` --payload - >/dev/null 2>&1; exit 0`
}

// HookFormats lists the known formats (for docs and tests).
func HookFormats() map[string]HookFormat {
	out := make(map[string]HookFormat, len(hookFormats))
	for k, v := range hookFormats {
		out[k] = v
	}
	return out
}

// HookPlans returns the plans of every engine with a hook spec, sorted by
// name, and an error per engine whose spec is broken (a user override with
// an unknown format, say).
func (t *Table) HookPlans() ([]HookPlan, []error) {
	var plans []HookPlan
	var errs []error
	for _, name := range t.Names() {
		e := t.engines[name]
		if e.Hooks == nil {
			continue
		}
		p, err := e.HookPlan()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, p)
	}
	return plans, errs
}

// HookPlan derives what to install for this engine.
func (e *Engine) HookPlan() (HookPlan, error) {
	s := e.Hooks
	if s == nil {
		return HookPlan{}, fmt.Errorf("engine %s has no hook spec: its state comes from the screen rules only", e.Name)
	}
	f, ok := hookFormats[s.Format]
	if !ok {
		return HookPlan{}, fmt.Errorf("engine %s: unknown hook format %q: use one of claude-settings, codex-hooks, gemini-settings, opencode-plugin, pi-extension", e.Name, s.Format)
	}
	if !strings.HasPrefix(s.File, "~/") && !strings.HasPrefix(s.File, "/") {
		return HookPlan{}, fmt.Errorf("engine %s: hook file %q must start with ~/ or /", e.Name, s.File)
	}
	p := HookPlan{Engine: e.Name, Aliases: e.Aliases, Format: s.Format, Spec: f, File: s.File, ConfigDir: configDir(s.File),
		Note: s.Note, Marker: HookMarker}
	seen := map[string]bool{}
	var routes []hookRoute
	for _, ev := range s.Events {
		if ev.Event == "" {
			return HookPlan{}, fmt.Errorf("engine %s: a hook event without a name", e.Name)
		}
		if !ev.State.Valid() || ev.State == Unknown || !ev.Kind.Valid() || (ev.Kind != NoKind && ev.State != Blocked) {
			return HookPlan{}, fmt.Errorf("engine %s: event %s maps to %q: use working, blocked[:permission|question|menu], done or idle",
				e.Name, ev.Event, Format(ev.State, ev.Kind))
		}
		if ev.Matcher != "" {
			if _, err := regexp.Compile(ev.Matcher); err != nil {
				return HookPlan{}, fmt.Errorf("engine %s: event %s: matcher %q: %v", e.Name, ev.Event, ev.Matcher, err)
			}
		}
		report := Format(ev.State, ev.Kind)
		if f.Layout == LayoutJSONHooks {
			// One group per event: two groups whose matchers both match would
			// send two reports that race.
			if seen[ev.Event] {
				return HookPlan{}, fmt.Errorf("engine %s: event %s is listed twice: a settings file gets one matcher group per event (let the report read the kind from the payload)", e.Name, ev.Event)
			}
			seen[ev.Event] = true
		}
		g := HookGroup{Event: ev.Event, Matcher: ev.Matcher, Report: report, Command: HookCommand(report)}
		g.HasMatcher = ev.Matcher != "" || (f.ToolMatcher && toolEvents[ev.Event])
		if f.Trust == "codex" {
			g.TrustHash = CodexTrustHash(ev.Event, g.Matcher, g.HasMatcher, g.Command, f.Timeout)
		}
		p.Groups = append(p.Groups, g)
		routes = append(routes, hookRoute{Event: ev.Event, Matcher: ev.Matcher, Report: report})
	}
	if f.render != nil {
		p.Text = f.render(routes)
	}
	return p, nil
}

// configDir is the first directory of file under ~ (two levels under ~/.config).
func configDir(file string) string {
	parts := strings.Split(file, "/")
	n := 2
	if len(parts) > 2 && parts[0] == "~" && parts[1] == ".config" {
		n = 3
	}
	if parts[0] == "" { // an absolute path: its directory
		return file[:strings.LastIndexByte(file, '/')]
	}
	if len(parts) <= n {
		return file[:strings.LastIndexByte(file, '/')]
	}
	return strings.Join(parts[:n], "/")
}

// hookRoute is one event → report line of a plugin or extension file.
type hookRoute struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher"`
	Report  string `json:"report"`
}

func routesJSON(routes []hookRoute) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, r := range routes {
		line, _ := json.Marshal([]string{r.Event, r.Matcher, r.Report})
		b.WriteString("  " + string(line) + ",\n")
	}
	b.WriteString("]")
	return b.String()
}

// reportJS is shared by the OpenCode plugin and the pi extension: plain
// JavaScript that is also valid TypeScript (pi loads .ts without checking
// types). Nothing is ever printed, and outside the herd it does nothing.
//
// One report runs at a time, so the herd hears the events in their order
// (separate processes could arrive out of order). While one runs, only the
// newest waiting report is kept: the ones it replaces describe states the
// engine has already left, and sent late they flip the herd's reading back.
// A report equal to the last one sent — same state, same event, the event's
// own "id" aside — tells the herd nothing and is skipped: OpenCode fires
// session.status busy several times a turn, the last one a few ms before
// session.idle, and one report takes 60–300 ms, so that busy would land after
// the turn's end. Each report is killed after 5 s, so a wedged daemon cannot
// pile processes up.
const reportJS = `import { spawn } from "node:child_process";

let sending = false;
let waiting = null;
let lastSent = "";

function report(state, type, fields) {
  const name = process.env.MOSH_HERD_NAME;
  if (!name) return;
  try {
    waiting = {
      name, state, payload: payloadOf(type, fields),
      key: state + " " + JSON.stringify({ hook_event_name: type, ...fields, id: undefined }),
    };
  } catch {
    return; // an event JSON cannot carry (a cycle) is not worth failing the engine
  }
  if (!sending) sendNext();
}

function sendNext() {
  sending = false;
  while (waiting) {
    const next = waiting;
    waiting = null;
    if (next.key === lastSent) continue;
    let child;
    try {
      child = spawn(process.env.MOSH_HERD_BIN || "mosh", ["herd", "report", next.name, next.state, "--payload", "-"],
        { stdio: ["pipe", "ignore", "ignore"] });
    } catch {
      continue;
    }
    lastSent = next.key;
    sending = true;
    let finished = false;
    const timer = setTimeout(() => { try { child.kill("SIGKILL"); } catch {} }, 5000);
    const finish = (failed) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      // A report that never ran proves nothing: its twin may go next time.
      if (failed === true) lastSent = "";
      sendNext();
    };
    child.on("error", () => finish(true));
    child.on("close", () => finish(false));
    if (child.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(next.payload);
    }
    return;
  }
}

function matches(matcher, subject) {
  if (matcher === "") return true;
  try { return new RegExp("^(?:" + matcher + ")$").test(subject); } catch { return false; }
}

// The report carries the event's own JSON; past 256 KiB only its name.
function payloadOf(type, fields) {
  const text = JSON.stringify({ hook_event_name: type, ...fields });
  return text.length > 262144 ? JSON.stringify({ hook_event_name: type }) : text;
}
`

func renderOpenCodePlugin(routes []hookRoute) string {
	return FileMarker + ` reports this OpenCode session's state to the mosh herd.
// Installed by "mosh herd hooks install opencode"; "mosh herd hooks remove opencode" deletes it.
// Outside the herd (MOSH_HERD_NAME unset) it does nothing.
` + reportJS + `
// [event type, matcher on the status type (session.status), report]
const ROUTES = ` + routesJSON(routes) + `;

// The turn's answer: session.idle carries only the session's id, so the
// report asks OpenCode's own server (the plugin's client) for the session's
// messages and takes the last assistant message's text parts. Both SDK call
// shapes are tried (sessionID in the v2 client OpenCode 1.18 uses itself,
// path:{id} in v1); any failure leaves the answer out, never the report.
// The message's error, when it has one (an API error, an abort), goes along:
// the engines table reads a failed turn from it.
async function lastAssistant(client, event) {
  const id = event && event.properties && event.properties.sessionID;
  if (!id || !client || !client.session || typeof client.session.messages !== "function") return undefined;
  let list = null;
  for (const args of [{ sessionID: id }, { path: { id } }]) {
    try {
      const res = await client.session.messages(args);
      const data = Array.isArray(res) ? res : res && Array.isArray(res.data) ? res.data : null;
      if (data) { list = data; break; }
    } catch {}
  }
  if (!list) return undefined;
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    const info = (m && m.info) || m;
    if (!info || info.role !== "assistant") continue;
    const parts = Array.isArray(m.parts) ? m.parts : [];
    const text = parts.filter((p) => p && p.type === "text" && !p.synthetic).map((p) => p.text || "").join("");
    return { text: text || undefined, error: info.error || undefined };
  }
  return undefined;
}

// routed counts the events routed to a report: a done whose answer was
// still being fetched when a newer event came describes a state the engine
// has left, and is dropped like any report a newer one replaces.
let routed = 0;

export const MoshHerd = async ({ client } = {}) => ({
  event: async ({ event }) => {
    const type = event && event.type;
    const subject = (event && event.properties && event.properties.status && event.properties.status.type) || "";
    for (const [name, matcher, state] of ROUTES) {
      if (name === type && matches(matcher, subject)) {
        const seq = ++routed;
        let fields = event;
        if (state === "done" && client) {
          const answer = await lastAssistant(client, event);
          if (seq !== routed) return;
          if (answer) fields = { ...event, last_assistant_message: answer.text, error: answer.error };
        }
        report(state, type, fields);
        return;
      }
    }
  },
});
`
}

func renderPiExtension(routes []hookRoute) string {
	return FileMarker + ` reports this pi session's state to the mosh herd.
// Installed by "mosh herd hooks install pi"; "mosh herd hooks remove pi" deletes it.
// Outside the herd (MOSH_HERD_NAME unset) it does nothing.
` + reportJS + `
// [event, matcher (unused by pi's events), report]
const ROUTES = ` + routesJSON(routes) + `;

// agent_end carries the whole conversation: the report takes only the last
// assistant message's text, which the ledger keeps as the turn's result, and
// how it stopped: "error" (with pi's errorMessage) is a failed turn.
function lastAssistant(event) {
  const messages = event && Array.isArray(event.messages) ? event.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m && m.role === "assistant") return m;
  }
  return undefined;
}

function textOf(m) {
  if (!m) return undefined;
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content.filter((p) => p && p.type === "text").map((p) => p.text).join("");
  }
  return undefined;
}

export default function (pi) {
  for (const [name, , state] of ROUTES) {
    pi.on(name, async (event) => {
      const m = lastAssistant(event);
      report(state, name, { last_assistant_message: textOf(m), stop_reason: m && m.stopReason, error_message: m && m.errorMessage });
    });
  }
}
`
}

// CodexTrustHash is the hash Codex compares with the trusted_hash it keeps in
// ~/.codex/config.toml under [hooks.state."<hooks.json path>:<event_snake>:<group>:<index>"]:
// the SHA-256 of the hook's normalized identity — event_name (snake case), the
// group's matcher (tool events only), and the one command handler with its
// defaults filled in (async false, timeout in seconds, SessionEnd clamped to 3)
// — as JSON with sorted keys and no spaces. Checked against `codex app-server`
// hooks/list of Codex 0.171.0 (its currentHash for each of our hooks); a later
// Codex that hashes differently asks for trust again, and status says so.
func CodexTrustHash(event, matcher string, hasMatcher bool, command string, timeoutSec int) string {
	if event == "SessionEnd" && timeoutSec > 3 {
		timeoutSec = 3
	}
	if timeoutSec <= 0 {
		timeoutSec = 600
	}
	// Field names are already in sorted order; encoding/json sorts map keys.
	identity := map[string]any{
		"event_name": snakeCase(event),
		"hooks": []map[string]any{{
			"async": false, "command": command, "timeout": timeoutSec, "type": "command",
		}},
	}
	if hasMatcher {
		identity["matcher"] = matcher
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // serde_json leaves <, > and & alone
	_ = enc.Encode(identity)
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// snakeCase is Codex's event label: PermissionRequest → permission_request.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
