package state

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeMosh records each call as one line: its arguments, a tab, its stdin.
const fakeMosh = `#!/bin/sh
payload=$(cat)
printf '%s\t%s\n' "$*" "$payload" >> "$MOSH_TEST_LOG"
`

// reportDriver loads the rendered OpenCode plugin and pi extension the way
// the engines do and feeds them bursts of events. It wraps child_process.spawn
// (the modules' live import binding follows syncBuiltinESMExports) only to
// know when every report process has ended and the module had its chance to
// start the next one, so each phase ends at a settled point without sleeping.
// Phases are marked in the call log; anything on stdout is a failure.
const reportDriver = `import cp from "node:child_process";
import { appendFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

let spawned = 0, settled = 0, waiters = [];
const realSpawn = cp.spawn;
cp.spawn = (...args) => {
  const child = realSpawn(...args);
  spawned++;
  let ended = false;
  const end = () => { if (ended) return; ended = true; settled++; setImmediate(check); };
  child.on("error", end);
  child.on("close", end);
  return child;
};
syncBuiltinESMExports();
function check() {
  if (settled !== spawned) return;
  const w = waiters;
  waiters = [];
  for (const f of w) f();
}
// A turn of the event loop first, in case a module defers its spawn.
const quiet = () => new Promise((resolve) => { waiters.push(resolve); setImmediate(check); });
const mark = (m) => appendFileSync(process.env.MOSH_TEST_LOG, "-- " + m + "\n");

const { MoshHerd } = await import(process.argv[2]);
const plugin = await MoshHerd({});
let n = 0;
const ev = (type, properties) => { plugin.event({ event: { id: "evt_" + ++n, type, properties } }); };
const busy = () => ev("session.status", { sessionID: "ses_1", status: { type: "busy" } });

// A whole turn while the first report is still running (one tick: no child
// can end in between): only its end goes next.
busy(); busy();
ev("permission.asked", { id: "per_1", sessionID: "ses_1", permission: "bash" });
ev("permission.replied", { sessionID: "ses_1", requestID: "per_1", reply: "once" });
busy(); busy();
ev("session.status", { sessionID: "ses_1", status: { type: "idle" } });
ev("session.idle", { sessionID: "ses_1" });
await quiet();
mark("again");
// Nothing running: a repeated session.idle (new id) is not news; the next
// turn's busy is, and its twin in the same tick is not.
ev("session.idle", { sessionID: "ses_1" });
busy(); busy();
await quiet();
mark("outside");
const name = process.env.MOSH_HERD_NAME;
delete process.env.MOSH_HERD_NAME;
busy();
ev("session.idle", { sessionID: "ses_1" });
await quiet();
process.env.MOSH_HERD_NAME = name;
mark("broken");
process.env.MOSH_HERD_BIN = process.argv[4];
ev("session.idle", { sessionID: "ses_1" });
await quiet();
delete process.env.MOSH_HERD_BIN;
ev("session.idle", { sessionID: "ses_1" });
await quiet();
mark("answer");
// With OpenCode's client, session.idle's report carries the session's last
// assistant text, fetched with the v2 call shape (a v1 client's path shape
// is the fallback: this fake refuses it).
const asked = [];
const withClient = await MoshHerd({ client: { session: { messages: async (args) => {
  asked.push(JSON.stringify(args));
  if (!args.sessionID) throw new Error("v1 shape");
  return { data: [
    { info: { role: "user" }, parts: [{ type: "text", text: "q" }] },
    { info: { role: "assistant" }, parts: [{ type: "text", text: "the " }, { type: "reasoning", text: "hm" }, { type: "text", text: "answer" }] },
  ] };
} } } });
withClient.event({ event: { id: "evt_a", type: "session.idle", properties: { sessionID: "ses_2" } } });
await quiet();
// An answer still being fetched when the next turn's busy comes: the done is stale, dropped.
withClient.event({ event: { id: "evt_b", type: "session.idle", properties: { sessionID: "ses_3" } } });
withClient.event({ event: { id: "evt_c", type: "session.status", properties: { sessionID: "ses_3", status: { type: "busy" } } } });
await quiet();
mark("asked " + asked.join(" "));
mark("opencode error");
// A failed turn: the session's last assistant message carries the provider's error; an aborted
// one (Esc) carries MessageAbortedError.
for (const [sid, error] of [["ses_4", { name: "APIError", data: { message: "400 boom", statusCode: 400 } }], ["ses_5", { name: "MessageAbortedError", data: { message: "aborted" } }]]) {
  const failing = await MoshHerd({ client: { session: { messages: async () => ({ data: [
    { info: { role: "user" }, parts: [{ type: "text", text: "q" }] },
    { info: { role: "assistant", error }, parts: [] },
  ] }) } } });
  failing.event({ event: { id: "evt_" + sid, type: "session.idle", properties: { sessionID: sid } } });
  await quiet();
}
mark("pi");

const handlers = {};
(await import(process.argv[3])).default({ on: (event, fn) => { handlers[event] = fn; } });
handlers.agent_start({});
handlers.agent_end({ messages: [{ role: "assistant", content: "first" }] });
handlers.agent_start({});
handlers.agent_end({ messages: [{ role: "user", content: "go" }, { role: "assistant", content: [{ type: "text", text: "second" }] }] });
await quiet();
mark("pi error");
// A turn that stopped on an API error: pi's failure message (stopReason "error").
handlers.agent_end({ messages: [{ role: "assistant", content: [{ type: "text", text: "" }], stopReason: "error", errorMessage: "400 pi boom" }] });
await quiet();
mark("end");
`

// The rendered OpenCode plugin and pi extension, run by node with a fake mosh
// on PATH: reports go one at a time in event order, a report that waited
// while a newer one arrived is dropped, a repeat of the last one sent is
// skipped, a report that could not run does not block its twin, nothing
// happens outside the herd, and nothing is printed.
func TestReportModulesCoalesceInOrder(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the OpenCode plugin and pi extension cannot be run")
	}
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("MOSH_HOME", filepath.Join(dir, "mosh"))
	tab := Load("")
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plan := func(engine string) string {
		e, ok := tab.Lookup(engine)
		if !ok {
			t.Fatalf("no engine %s", engine)
		}
		p, err := e.HookPlan()
		if err != nil || p.Text == "" {
			t.Fatalf("%s: %v", engine, err)
		}
		return p.Text
	}
	// .mjs: node loads the files as ES modules, as OpenCode and pi do.
	plugin := write("plugin.mjs", plan("opencode"), 0o600)
	ext := write("ext.mjs", plan("pi"), 0o600)
	write("mosh", fakeMosh, 0o700)
	driver := write("driver.mjs", reportDriver, 0o600)
	log := filepath.Join(dir, "calls.log")

	cmd := exec.Command(node, driver, plugin, ext, filepath.Join(dir, "no-such-mosh"))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + dir,
		"MOSH_HERD_NAME=worker", "MOSH_TEST_LOG=" + log}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	if stdout.Len() > 0 {
		t.Errorf("the modules must print nothing, got %q", stdout.String())
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.HasPrefix(line, "-- ") {
			got = append(got, line)
			continue
		}
		args, payload, _ := strings.Cut(line, "\t")
		state, ok := strings.CutPrefix(args, "herd report worker ")
		state, ok2 := strings.CutSuffix(state, " --payload -")
		var ev struct {
			Event   string `json:"hook_event_name"`
			ID      string `json:"id"`
			Message string `json:"last_assistant_message"`
		}
		if !ok || !ok2 || json.Unmarshal([]byte(payload), &ev) != nil {
			t.Fatalf("unexpected call %q", line)
		}
		line = strings.Join(strings.Fields(state+" "+ev.Event+" "+ev.ID+" "+ev.Message), " ")
		// The engines table reads a failed turn from what the module sent.
		for _, engine := range []string{"opencode", "pi"} {
			if event, why := tab.TurnFailure(engine, []byte(payload)); event != "" {
				line += " failed(" + engine + "): " + why
			}
		}
		got = append(got, line)
	}
	want := []string{
		"working session.status evt_1", // in flight while the rest of the turn arrives
		"done session.idle evt_8",      // the newest; the busy, blocked and working between are dropped
		"-- again",
		"working session.status evt_10", // evt_9 repeats evt_8; evt_11 repeats evt_10
		"-- outside",
		"-- broken",
		"done session.idle evt_15", // evt_14 could not run, so its twin still goes
		"-- answer",
		"done session.idle evt_a the answer",
		"working session.status evt_c",
		`-- asked {"sessionID":"ses_2"} {"sessionID":"ses_3"}`,
		"-- opencode error",
		"done session.idle evt_ses_4 failed(opencode): 400 boom failed(pi): 400 boom",
		"done session.idle evt_ses_5",
		"-- pi",
		"working agent_start",
		"done agent_end second",
		"-- pi error",
		"done agent_end failed(opencode): 400 pi boom failed(pi): 400 pi boom",
		"-- end",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
