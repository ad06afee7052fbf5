package builtins

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// slowDaemon is a stand-in herd daemon on a MOSH_HOME's socket that holds every request until
// the script sends keys to the member "release" on the same connection (or, as a safety net on
// broken code, until heldFor passes). It records whether each held request was released by the
// script, i.e. whether the script's loop ran while the request was outstanding.
type slowDaemon struct {
	home string
	ln   net.Listener

	mu       sync.Mutex
	released map[string]bool // method → answered because the script sent "release"
}

// heldFor bounds how long the stand-in holds a request when no release comes: only code that
// blocks the loop waits this out (and then fails the test).
const heldFor = 10 * time.Second

func newSlowDaemon(t *testing.T) *slowDaemon {
	t.Helper()
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ln := herdtest.Listen(t, home)
	d := &slowDaemon{home: home, ln: ln, released: map[string]bool{}}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.serve(conn)
			}()
		}
	}()
	return d
}

type slowReq struct {
	ID     int64           `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (d *slowDaemon) serve(conn net.Conn) {
	defer conn.Close()
	var wmu sync.Mutex
	write := func(line string) {
		wmu.Lock()
		defer wmu.Unlock()
		_, _ = conn.Write([]byte(line + "\n"))
	}
	answer := func(r slowReq) string {
		switch r.Method {
		case herd.MethodList:
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"members":[]}}`, r.ID)
		case herd.MethodSendKeys:
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"name":"x","bytes":1}}`, r.ID)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"held, then refused","data":{"exitCode":5}}}`, r.ID)
	}
	var held []slowReq
	release := make(chan struct{})
	var once sync.Once
	timer := time.AfterFunc(heldFor, func() { once.Do(func() { close(release) }) })
	defer timer.Stop()
	var hmu sync.Mutex
	go func() {
		<-release
		hmu.Lock()
		defer hmu.Unlock()
		for _, r := range held {
			write(answer(r))
		}
		held = nil
	}()
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var r slowReq
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		if r.Method == herd.MethodSendKeys && strings.Contains(string(r.Params), `"name":"release"`) {
			hmu.Lock()
			if len(held) == 0 {
				// Nothing to release yet (the script's call has not arrived): say so, and the
				// script asks again.
				hmu.Unlock()
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"name":"release","bytes":0}}`, r.ID))
				continue
			}
			write(answer(r))
			for _, h := range held {
				d.mu.Lock()
				d.released[h.Method] = true
				d.mu.Unlock()
			}
			hmu.Unlock()
			once.Do(func() { close(release) })
			continue
		}
		hmu.Lock()
		select {
		case <-release:
			hmu.Unlock()
			write(answer(r))
			continue
		default:
		}
		d.mu.Lock()
		if _, seen := d.released[r.Method]; !seen {
			d.released[r.Method] = false
		}
		d.mu.Unlock()
		held = append(held, r)
		hmu.Unlock()
	}
}

func (d *slowDaemon) wasReleased(method string) (released, seen bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	released, seen = d.released[method]
	return released, seen
}

// Every herd builtin hands the daemon's answer to JS on the loop and never blocks it: against a
// daemon that holds the call until the script itself sends a second request, a timer fires
// while the call is outstanding, and the call settles after it (issue 16: herdList, herdRead,
// herdPrompt… blocked the loop on socket I/O, so the timer could not run until the daemon gave
// up).
func TestHerdBuiltinsNeverBlockTheLoop(t *testing.T) {
	calls := []struct{ verb, method, call string }{
		{"herdList", herd.MethodList, `herdList()`},
		{"herdRead", herd.MethodRead, `herdRead("api")`},
		{"herdPrompt", herd.MethodPrompt, `herdPrompt("api", "hi")`},
		{"herdAsk", herd.MethodPrompt, `herdAsk("api", "hi")`},
		{"herdStart", herd.MethodStart, `herdStart("claude", {name: "api"})`},
		{"herdRun", herd.MethodRun, `herdRun("cat", {name: "api"})`},
		{"herdKill", herd.MethodKill, `herdKill("api")`},
		{"herdSendKeys", herd.MethodSendKeys, `herdSendKeys("api", "Enter")`},
		{"herdWait", herd.MethodWait, `herdWait("api", {nothrow: true})`},
		{"herdTasks", herd.MethodTasks, `herdTasks("api")`},
		{"herdTask", herd.MethodTask, `herdTask("t-1")`},
		{"herdTaskCost", herd.MethodTask, `herdTaskCost("t-1", {engine: "claude", cwd: "/tmp"})`},
		{"herdRemoteAdd", herd.MethodRemoteAdd, `herdRemoteAdd("far", "http://127.0.0.1:9/", {force: true})`},
		{"herdRemoteRemove", herd.MethodRemoteRemove, `herdRemoteRemove("far")`},
		{"notify", herd.MethodNotifySend, `notify("hi")`},
		{"ask", herd.MethodAsk, `ask("ok?", {timeout: "1h"})`},
	}
	// herdHookPlans and herdEngine read the engines table, no daemon (see TestHerdRuleHoldsForEveryHerdVerb).
	covered := map[string]bool{"herdHookPlans": true, "herdEngine": true}
	for _, c := range calls {
		covered[c.verb] = true
	}
	for _, info := range List() {
		if info.Group == "herd" && !covered[info.Name] {
			t.Errorf("herd builtin %s is not covered by this test: add its call", info.Name)
		}
	}
	for _, c := range calls {
		t.Run(c.verb, func(t *testing.T) {
			d := newSlowDaemon(t)
			env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": d.home, "MOSH_HOME": d.home, "MOSH_REMOTE_FAR_TOKEN": "tok"}
			r := runCtx(t, context.Background(), `
const order = []
let settled = false
const p = Promise.resolve(`+c.call+`).then(() => { settled = true; order.push("settled") }, () => { settled = true; order.push("settled") })
// A timer releases the held call: it asks until the daemon holds the call (bytes 1).
const release = async () => {
  if (settled) return
  if (!order.includes("timer")) order.push("timer")
  const r = await herdSendKeys("release", "Enter")
  if (r.bytes === 0) setTimeout(release, 1)
}
setTimeout(release, 0)
await p
console.log(order.join(","))
`, Config{Env: env}, time.Minute)
			if r.err != nil {
				t.Fatalf("script failed: %v\nstderr: %s", r.err, r.stderr)
			}
			if got := strings.TrimSpace(r.stdout); got != "timer,settled" {
				t.Errorf("%s: order %q, want timer,settled: the call blocked the event loop\nstderr: %s", c.call, got, r.stderr)
			}
			released, seen := d.wasReleased(c.method)
			if !seen || !released {
				t.Errorf("%s: the daemon saw %s=%v, released by the script=%v: the timer could not run while it was outstanding", c.call, c.method, seen, released)
			}
		})
	}
}

// One rule for the herd vocabulary: Register refuses a herd verb that is neither async nor a
// promise, and every registered herd verb returns a promise.
func TestHerdRuleHoldsForEveryHerdVerb(t *testing.T) {
	n := 0
	for _, info := range List() {
		if info.Group != "herd" {
			continue
		}
		n++
		if !info.Async {
			t.Errorf("%s is a herd verb that does not return a promise", info.Name)
		}
	}
	if n < 12 {
		t.Fatalf("only %d herd verbs listed", n)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "returns a promise") {
			t.Fatalf("Register accepted a synchronous herd verb (panic %v)", r)
		}
	}()
	Register(&Verb{Name: "herdSyncProbe", Group: "herd", Bind: func(*Call) (Action, error) { return Action{}, nil }})
}

// herdList tells "no daemon" from an empty herd: [] for a herd with no members, a rejection
// naming `mosh herd doctor` (exit code 5 when uncaught) when no daemon answers and none can be
// started (here $MOSH_HOME is a file). It resolved [] for both before.
func TestHerdListNoDaemonIsNotAnEmptyHerd(t *testing.T) {
	d := newSlowDaemon(t)
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": d.home, "MOSH_HOME": d.home}
	r := runCtx(t, context.Background(), `
const release = async () => { if ((await herdSendKeys("release", "Enter")).bytes === 0) setTimeout(release, 1) }
setTimeout(release, 0)
console.log(JSON.stringify(await herdList()))
`, Config{Env: env}, time.Minute)
	expectOut(t, r, "[]\n")

	dir := t.TempDir()
	file := filepath.Join(dir, "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir, "MOSH_HOME": file}
	r = runCtx(t, context.Background(), `
try {
  const l = await herdList()
  console.log("resolved", JSON.stringify(l))
} catch (e) {
  console.log("rejected", e.message.includes("mosh herd doctor"), e.message.startsWith("herdList: no herd daemon"))
}
await herdList()
`, Config{Env: env}, time.Minute)
	if !strings.HasPrefix(r.stdout, "rejected true true\n") {
		t.Fatalf("herdList with no daemon: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if r.err == nil || !strings.Contains(r.err.Error(), "mosh herd doctor") {
		t.Fatalf("an uncaught herdList rejection ends the script naming the fix: %v", r.err)
	}
	if code := exitcode.Of(r.err); code != exitcode.Infra {
		t.Fatalf("exit code %d, want 5 (infrastructure)", code)
	}
}
