package builtins

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/herdd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

// herdDaemon runs a herd daemon inside the test process on its own MOSH_HOME (a short path:
// the socket lives inside) and returns the script env that reaches it. The daemon stops when
// the test ends.
func herdDaemon(t testing.TB) map[string]string {
	t.Helper()
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- herdd.Serve(ctx, home) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	// Safety net for a daemon that never listens, not a claim about its speed.
	giveUp := time.Now().Add(30 * time.Second)
	for {
		c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-served:
			t.Fatalf("herd daemon ended before listening: %v", err)
		default:
		}
		if time.Now().After(giveUp) {
			t.Fatalf("herd daemon in %s never listened: %v", home, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return map[string]string{"PATH": os.Getenv("PATH"), "HOME": home, "MOSH_HOME": home}
}

// herdWait is the daemon's wait with the script's options: {timeout: 0} never expires (the wait
// outlives a timer that kills the member and sees it end), a sub-millisecond timeout expires, and
// a timeout rejects with code 2 carrying the daemon's per-member results.
func TestHerdWaitAgainstADaemon(t *testing.T) {
	env := herdDaemon(t)
	r := runCtx(t, context.Background(), `
const r = await herdRun(["/bin/sh", "-c", "exec cat"], {name: "c1"})
if (!r.ok) throw new Error("herdRun: " + r.error)
setTimeout(() => herdKill("c1"), 300)
try {
  const ended = await herdWait("c1", {states: ["done"], timeout: 0})
  console.log("never: a killed member resolved", ended)
} catch (e) {
  console.log("never", e.code, e.outcome)
}

// A member whose process dies: herdWait rejects with code 3 and the exit code, never "done".
const q = await herdRun(["/bin/sh", "-c", "read x; exit 7"], {name: "crash"})
if (!q.ok) throw new Error("herdRun: " + q.error)
setTimeout(() => herdSendKeys("crash", "Enter"), 100)
try {
  const st = await herdWait("crash", {states: ["done"], timeout: 0})
  console.log("crash: resolved", st)
} catch (e) {
  console.log("crash", e.code, e.outcome, e.exitCode)
}
const [entry] = await herdWait(["crash"], {states: ["done"], nothrow: true})
console.log("crash nothrow", entry.state, entry.outcome, entry.exitCode)

await herdRun(["/bin/sh", "-c", "exec cat"], {name: "c2"})
try {
  await herdWait("c2", {states: ["done"], timeout: 0.5})
  console.log("tiny: no timeout?")
} catch (e) {
  console.log("tiny", e.code, e.outcome)
}
try {
  await herdWait(["c2"], {states: ["done"], timeout: 50})
  console.log("list: no timeout?")
} catch (e) {
  console.log("list", e.code, e.outcome, e.results.map(x => x.name + ":" + x.outcome).join(","), JSON.stringify(e.names))
}
const now = await herdWait("c2", {states: ["done"], timeout: 50, nothrow: true})
console.log("nothrow", typeof now, now != "done")
await herdKill("c2")
`, Config{Env: env}, time.Minute)
	want := []string{
		"never 3 ended",
		"crash 3 ended 7",
		"crash nothrow gone ended 7",
		"tiny 2 timeout",
		`list 2 timeout c2:timeout ["c2"]`,
		"nothrow string true",
	}
	if r.err != nil {
		t.Fatalf("script failed: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	if got := strings.Split(strings.TrimSpace(r.stdout), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr: %s", r.stdout, strings.Join(want, "\n"), r.stderr)
	}
}

// A script registers remote members and drives them with the same builtins as local ones; the
// token comes from the script's environment.
func TestHerdRemoteBuiltins(t *testing.T) {
	env := herdDaemon(t)
	fn := remotetest.NewRun(t, remotetest.Options{Token: "tok-123"})
	slow := remotetest.NewA2A(t, remotetest.Options{Delay: time.Minute})
	env["MOSH_REMOTE_FN_TOKEN"] = "tok-123"
	r := runCtx(t, context.Background(), `
const bad = await herdRemoteAdd("nope", "`+fn.URL+`", {kind: "run"})
console.log("no token", bad.ok, bad.code, bad.error.includes("MOSH_REMOTE_NOPE_TOKEN"))
const a = await herdRemoteAdd("fn", "`+fn.URL+`", {kind: "run", timeout: "5s"})
console.log("add", a.ok, a.member.kind, a.member.remote.kind, a.member.remote.token)
const p = await herdPrompt("fn", "summarise")
console.log("prompt", p.ok)
console.log("wait", await herdWait("fn"))
console.log("read", await herdRead("fn"))
const t = await herdTask(p.task)
console.log("task", t.state, t.artifact.source)

await herdRemoteAdd("far", "`+slow.URL+`")
await herdPrompt("far", "a long one")
const k = await herdKill("far")
console.log("kill", k.ok, JSON.stringify(k.killed), JSON.stringify(k.canceled))
const rm = await herdRemoteRemove("far")
console.log("remove", rm.ok, rm.removed)
console.log("list", (await herdList()).map(m => m.name).join(","))
`, Config{Env: env}, time.Minute)
	want := []string{
		"no token false 1 true",
		"add true remote run true",
		"prompt true",
		"wait done",
		"read echo: summarise",
		"task done remote",
		`kill true [] ["far"]`,
		"remove true far",
		"list fn",
	}
	if r.err != nil {
		t.Fatalf("script failed: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	if got := strings.Split(strings.TrimSpace(r.stdout), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr: %s", r.stdout, strings.Join(want, "\n"), r.stderr)
	}
}

// TestInterruptMidStartKillsTheMember: Ctrl-C that lands while herdStart({temporary}) is on its
// way to the daemon (the seam cancels the run right before the request is sent) still leaves no
// member behind: the start goes through, the member is killed as soon as it exists, and the run
// returns (130) only after the kill, so a process exiting right after cuts nothing short.
func TestInterruptMidStartKillsTheMember(t *testing.T) {
	env := herdDaemon(t)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env["PATH"] = bin + ":" + env["PATH"]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failsafe, not a speed claim
	defer cancel()
	cl, err := herd.Connect(ctx, herd.ConnectOptions{Home: env["MOSH_HOME"], NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sub, err := cl.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	runCtx2, interrupt := context.WithCancel(ctx)
	launches := 0
	cfg := Config{Env: env, beforeLaunch: func(launch context.Context) {
		if launches++; launches == 1 {
			return // temp0 starts as usual
		}
		interrupt() // Ctrl-C, with temp1's start request not sent yet
		<-launch.Done()
	}}
	r := runCtx(t, runCtx2, `
const r0 = await herdStart("claude", {name: "temp0", temporary: true})
if (!r0.ok) throw new Error(r0.error)
await herdStart("claude", {name: "temp1", temporary: true})
console.log("never: the run was interrupted")
`, cfg, 0)
	if exitcode.Of(r.err) != exitcode.Interrupted {
		t.Fatalf("run: %v (want 130)\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	// The daemon started the member (the request was sent after the interrupt)…
	for added := false; !added; {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("event stream ended: %v", sub.Err())
			}
			added = ev.Name == "temp1" && ev.Type == herd.EventAdded
		case <-ctx.Done():
			t.Fatal("the start never reached the daemon")
		}
	}
	// …and by the time the run returned it was killed, as was temp0, started before.
	list, err := cl.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.Alive {
			t.Fatalf("%s is still running after the interrupted run returned: %+v", m.Name, m)
		}
	}
}

// A name that is not on the roster (a typo) rejects with code 3 in every verb that names one
// member, read verbs included: a script never goes on with {ok:false}, "gone" or "" and exits 0.
// A member that existed and ended still resolves with its outcome.
func TestHerdVerbsRejectANameNotOnTheRoster(t *testing.T) {
	env := herdDaemon(t)
	r := runCtx(t, context.Background(), `
for (const [name, f] of [
  ["herdPrompt", () => herdPrompt("ghost", "hi")],
  ["herdKill", () => herdKill("ghost")],
  ["herdKill list", () => herdKill(["ghost", "phantom"])],
  ["herdSendKeys", () => herdSendKeys("ghost", "Enter")],
  ["herdRead", () => herdRead("ghost")],
  ["herdWait", () => herdWait("ghost", {timeout: 0})],
  ["herdWait list", () => herdWait(["ghost"], {timeout: 0})],
  ["herdWait any", () => herdWait(["ghost", "phantom"], {any: true, timeout: 0})],
  ["herdAsk", () => herdAsk("ghost", "hi")],
]) {
  try {
    console.log(name, "resolved", JSON.stringify(await f()))
  } catch (e) {
    console.log(name, "rejected", e.code, /no member named (ghost|phantom)/.test(e.message))
  }
}
console.log("gone wanted", await herdWait("ghost", {states: ["gone"]}))

const d = await herdRun(["/bin/sh", "-c", "exit 4"], {name: "dead"})
if (!d.ok) throw new Error(d.error)
await herdWait("dead", {states: ["gone"], timeout: 0})
const p = await herdPrompt("dead", "hi")
console.log("dead prompt", p.ok, p.code)
const k = await herdSendKeys("dead", "Enter")
console.log("dead keys", k.ok, k.code)
console.log("dead read", typeof (await herdRead("dead")))
const a = await herdAsk("dead", "hi")
console.log("dead ask", a.ok, a.code)
const [w] = await herdWait(["dead"], {nothrow: true})
console.log("dead wait", w.outcome, w.exitCode)
const kk = await herdKill("dead")
console.log("dead kill", kk.ok, JSON.stringify(kk.killed))
`, Config{Env: env}, time.Minute)
	want := []string{
		"herdPrompt rejected 3 true",
		"herdKill rejected 3 true",
		"herdKill list rejected 3 true",
		"herdSendKeys rejected 3 true",
		"herdRead rejected 3 true",
		"herdWait rejected 3 true",
		"herdWait list rejected 3 true",
		"herdWait any rejected 3 true",
		"herdAsk rejected 3 true",
		"gone wanted gone",
		"dead prompt false 3",
		"dead keys false 3",
		"dead read string",
		"dead ask false 3",
		"dead wait ended 4",
		`dead kill true ["dead"]`,
	}
	if r.err != nil {
		t.Fatalf("script failed: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	if got := strings.Split(strings.TrimSpace(r.stdout), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr: %s", r.stdout, strings.Join(want, "\n"), r.stderr)
	}
	// Uncaught, the typo ends the script with exit code 3.
	r = runCtx(t, context.Background(), `await herdPrompt("ghost", "hi"); console.log("never")`, Config{Env: env}, time.Minute)
	if exitcode.Of(r.err) != exitcode.Gone || r.stdout != "" || !strings.Contains(r.err.Error(), "no member named ghost") {
		t.Fatalf("uncaught: %v (code %d)\nstdout: %s", r.err, exitcode.Of(r.err), r.stdout)
	}
}

// herdWait with no states after herdPrompt waits for that turn's end, whatever state it leaves:
// a shell's turn ends idle (its screen then shows the answer), an engine's done.
func TestHerdWaitDefaultIsTheTurnsEnd(t *testing.T) {
	env := herdDaemon(t)
	r := runCtx(t, context.Background(), `
const r = await herdRun(["/bin/sh", "-c", "stty -echo; printf 'ready> '; while read l; do sleep 0.2; printf 'got:%s\\nready> ' \"$l\"; done"], {name: "repl"})
if (!r.ok) throw new Error(r.error)
await herdWait("repl", {states: ["idle"]})
const p = await herdPrompt("repl", "hello")
console.log(await herdWait("repl"), (await herdRead("repl")).includes("got:hello"))
console.log(await herdWait("repl"))
`, Config{Env: env}, time.Minute)
	expectOut(t, r, "idle true\nidle\n")
}
