package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
)

// topTerm is `mosh herd top` on a real pty, its output drawn by the same VT emulator the daemon
// uses (which also answers the terminal queries Bubble Tea sends), so a test reads the screen a
// person would see. Waits are on the emulator's output, never on a clock.
type topTerm struct {
	cmd  *exec.Cmd
	f    *os.File
	scr  *screen.Screen
	mu   sync.Mutex
	wake chan struct{} // closed and replaced on every output chunk
	eof  chan struct{}
	raw  []byte // every byte top wrote
}

func (e *herdEnv) startTop(extraEnv ...string) *topTerm {
	e.t.Helper()
	cmd := exec.Command(e.mosh, "herd", "top")
	cmd.Env = append(append([]string{}, e.env...), extraEnv...)
	cmd.Dir = e.home
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
	if err != nil {
		e.t.Fatal(err)
	}
	tt := &topTerm{cmd: cmd, f: f, wake: make(chan struct{}), eof: make(chan struct{})}
	tt.scr = screen.New(100, 30, screen.Options{OnReply: func(b []byte) { _, _ = f.Write(b) }})
	go func() {
		defer close(tt.eof)
		b := make([]byte, 32<<10)
		for {
			n, err := f.Read(b)
			if n > 0 {
				tt.scr.Write(b[:n])
				tt.mu.Lock()
				tt.raw = append(tt.raw, b[:n]...)
				close(tt.wake)
				tt.wake = make(chan struct{})
				tt.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	e.t.Cleanup(func() { f.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return tt
}

// text is the visible screen.
func (tt *topTerm) text() string { return tt.scr.Snapshot().Text() }

// waitScreen waits, output chunk by output chunk, until cond holds on the screen (bounded: 20 s
// without it fails the test).
func (tt *topTerm) waitScreen(t testing.TB, what string, cond func(string) bool) string {
	t.Helper()
	limit := time.NewTimer(20 * time.Second)
	defer limit.Stop()
	for {
		tt.mu.Lock()
		wake := tt.wake
		tt.mu.Unlock()
		if s := tt.text(); cond(s) {
			return s
		}
		select {
		case <-wake:
		case <-tt.eof:
			if s := tt.text(); cond(s) {
				return s
			}
			t.Fatalf("%s: top ended first; screen:\n%s", what, tt.text())
		case <-limit.C:
			t.Fatalf("%s: not on the screen; it shows:\n%s", what, tt.text())
		}
	}
}

func (tt *topTerm) key(s string) { _, _ = tt.f.Write([]byte(s)) }

// rowOf is the screen line of member name's row ("" when it is not shown).
func rowOf(s, name string) string {
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "›"))
		if len(f) > 0 && f[0] == name {
			return l
		}
	}
	return ""
}

func (e *herdEnv) client(ctx context.Context) *herd.Client {
	e.t.Helper()
	c, err := herd.NewClient(ctx, herd.Options{Home: e.home, NoStart: true, Env: e.env})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// waitEvent reads sub until an event for name in state arrives.
func waitEvent(t testing.TB, sub *herd.Subscription, name, state string) herd.Event {
	t.Helper()
	limit := time.NewTimer(20 * time.Second)
	defer limit.Stop()
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			if ev.Name == name && ev.State == state {
				return ev
			}
		case <-limit.C:
			t.Fatalf("no %s event for %s", state, name)
		}
	}
}

func TestHerdTopThroughPty(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "m", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "zed", "--", "/bin/sh", "-c", "exec cat")
	ctx := context.Background()
	c := e.client(ctx)
	sub, err := c.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	tt := e.startTop()
	tt.waitScreen(t, "both members listed", func(s string) bool {
		return rowOf(s, "m") != "" && rowOf(s, "zed") != "" && strings.Contains(s, "waiting on you: nobody")
	})

	// A member turning blocked appears on the event, first, with the footer counting it.
	if _, err := c.Report(ctx, "m", "blocked", "permission", 5*time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, sub, "m", "blocked")
	s := tt.waitScreen(t, "m blocked/permission", func(s string) bool {
		return strings.Contains(rowOf(s, "m"), "blocked/permission") && strings.Contains(s, "waiting on you: 1 now")
	})
	if i, j := strings.Index(s, rowOf(s, "m")), strings.Index(s, rowOf(s, "zed")); i > j {
		t.Fatalf("the blocked member comes first:\n%s", s)
	}

	// a answers the selected (blocked) member: typed into it.
	tt.key("a")
	tt.waitScreen(t, "the answer line", func(s string) bool { return strings.Contains(s, "answer m (Enter sends") })
	tt.key("yes-from-top\r")
	tt.waitScreen(t, "answer done", func(s string) bool { return strings.Contains(s, "answer m: done") })
	eventually(t, "the answer reached the member", func() (bool, string) {
		out := e.ok("herd", "read", "m")
		return strings.Contains(out, "yes-from-top"), out
	})

	// K asks first; n keeps the member, y kills it.
	tt.key("/zed\r") // the filter leaves zed alone, selected
	tt.waitScreen(t, "filtered", func(s string) bool { return rowOf(s, "m") == "" && strings.Contains(rowOf(s, "zed"), "› zed") })
	tt.key("K")
	tt.waitScreen(t, "kill confirmation", func(s string) bool { return strings.Contains(s, "kill zed? ") })
	tt.key("n")
	tt.waitScreen(t, "not killed", func(s string) bool { return strings.Contains(s, "kill zed: not killed") })
	if m := findMember(e.ps(), "zed"); m == nil || !m.Alive {
		t.Fatalf("n killed zed: %+v", m)
	}
	tt.key("K")
	tt.waitScreen(t, "kill confirmation again", func(s string) bool { return strings.Contains(s, "kill zed? ") })
	tt.key("y")
	tt.waitScreen(t, "zed gone from top", func(s string) bool {
		return strings.Contains(s, "kill zed: done") && !strings.Contains(rowOf(s, "zed"), "idle")
	})
	if m := findMember(e.ps(), "zed"); m != nil && m.Alive {
		t.Fatalf("y did not kill zed: %+v", m)
	}

	// A member that ends on its own reads gone with its exit code.
	tt.key("\x1b") // clear the filter
	e.ok("herd", "send-keys", "m", "C-d")
	tt.waitScreen(t, "m gone", func(s string) bool { return strings.Contains(rowOf(s, "m"), "gone (0)") })

	// The daemon stops under top: top says so and stays until q.
	e.ok("herd", "daemon", "stop", "--yes")
	tt.waitScreen(t, "the stream's end", func(s string) bool {
		return strings.Contains(s, "event stream ended") && strings.Contains(s, "q quits")
	})

	// q quits with 0 and gives the terminal back (the alternate screen is left).
	tt.key("q")
	done := make(chan error, 1)
	go func() { done <- tt.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("q: %v\n%s", err, tt.text())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("q did not quit:\n%s", tt.text())
	}
	<-tt.eof
	if tt.scr.Snapshot().AltScreen {
		t.Fatal("top left the terminal on the alternate screen")
	}
}

func TestHerdTopOffATerminal(t *testing.T) {
	e := newHerdEnv(t)
	_, errs := e.expect(1, "herd", "top")
	if !strings.Contains(errs, "needs a terminal") || !strings.Contains(errs, "--json") {
		t.Fatalf("top off a terminal names the way out: %q", errs)
	}
	e.expect(1, "herd", "top", "extra")
	e.ok("herd", "run", "--name", "a", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "b", "--", "/bin/sh", "-c", "exec cat")
	e.expect(0, "wait", "a", "--state", "idle", "--timeout", "30s")
	before := time.Now().UnixMilli()
	e.ok("herd", "report", "b", "blocked:question", "--ttl", "5m")
	// ps --json carries when each state began: b's at the report, a's before it.
	if a, b := findMember(e.ps(), "a"), findMember(e.ps(), "b"); a == nil || b == nil || b.StateSinceMs < before || a.StateSinceMs == 0 || a.StateSinceMs > before {
		t.Fatalf("stateSinceMs: a %+v b %+v (report at %d)", a, b, before)
	}
	var r struct {
		Members []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			InStateMs int64  `json:"inStateMs"`
		} `json:"members"`
		WaitingOnYou struct {
			Members int `json:"members"`
		} `json:"waitingOnYou"`
	}
	out := e.ok("herd", "top", "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Members) != 2 || r.Members[0].Name != "b" || r.WaitingOnYou.Members != 1 {
		t.Fatalf("top --json: %v\n%s", err, out)
	}
}

// BenchmarkHerdTopEventToFrame prints how long a state event takes to reach top's screen: from
// the moment a subscriber (this benchmark) receives a member's blocked event to the moment the
// VT emulator fed by top's pty shows the member's row as blocked. Figures, not assertions:
//
//	go test ./cmd/mosh -run '^$' -bench HerdTopEventToFrame -benchtime 50x
func BenchmarkHerdTopEventToFrame(b *testing.B) {
	e := newHerdEnvTB(b)
	e.ok("herd", "run", "--name", "m", "--", "/bin/sh", "-c", "exec cat")
	ctx := context.Background()
	c := e.client(ctx)
	sub, err := c.Subscribe(ctx, "m")
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	tt := e.startTop()
	tt.waitScreen(b, "m listed", func(s string) bool { return rowOf(s, "m") != "" })
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		state, kind := "blocked", "permission"
		if i%2 == 1 {
			state, kind = "working", ""
		}
		if _, err := c.Report(ctx, "m", state, kind, 5*time.Minute, nil); err != nil {
			b.Fatal(err)
		}
		waitEvent(b, sub, "m", state)
		t0 := time.Now()
		want := state
		if kind != "" {
			want += "/" + kind
		}
		tt.waitScreen(b, "m "+want, func(s string) bool { return strings.Contains(rowOf(s, "m"), " "+want+" ") })
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.5), "ms-p50")
	b.ReportMetric(p(0.99), "ms-p99")
	b.ReportMetric(0, "ns/op")
	tt.key("q")
}

// The fake engine's permission dialog: top shows the daemon's question with its options, a
// offers them, and a digit answers it; the member leaves blocked.
func TestHerdTopAnswersAMenu(t *testing.T) {
	e := newHerdEnv(t)
	e.env = append(e.env, "FAKEENGINE_TURN=200ms", "FAKEENGINE_TICK=50ms")
	e.ok("herd", "run", "--name", "fe", "--engine", "claude", "--", e.fake)
	e.expect(0, "wait", "fe", "--state", "idle", "--timeout", "30s")
	ctx := context.Background()
	sub, err := e.client(ctx).Subscribe(ctx, "fe")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	tt := e.startTop()
	tt.waitScreen(t, "fe listed", func(s string) bool { return rowOf(s, "fe") != "" })
	e.ok("herd", "prompt", "fe", "perm run the tests")
	waitEvent(t, sub, "fe", "blocked")
	tt.waitScreen(t, "the question with its options", func(s string) bool {
		return strings.Contains(rowOf(s, "fe"), "blocked/permission") && strings.Contains(s, "? ") && strings.Contains(s, "[1] ")
	})
	tt.key("a")
	tt.waitScreen(t, "the options offered", func(s string) bool { return strings.Contains(s, "answer fe (key, or") })
	tt.key("1")
	tt.waitScreen(t, "answered", func(s string) bool { return strings.Contains(s, "answer fe: done") })
	ev := waitEvent(t, sub, "fe", "working")
	if ev.Prev != "blocked" {
		t.Fatalf("after the answer: %+v", ev)
	}
	tt.key("q")
}

// Enter attaches to the selected member (the terminal is the member's), Ctrl-] comes back to top,
// and the keys typed after that are top's again: q quits.
func TestHerdTopAttachAndBack(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "sh", "--", "/bin/sh")
	e.expect(0, "wait", "sh", "--state", "idle", "--timeout", "30s")
	tt := e.startTop()
	tt.waitScreen(t, "sh listed", func(s string) bool { return strings.Contains(rowOf(s, "sh"), "idle") })
	tt.key("\r")
	tt.waitScreen(t, "top gave the terminal to sh", func(s string) bool { return !strings.Contains(s, "mosh herd top") })
	tt.key("echo attached-$((6*7))\r")
	tt.waitScreen(t, "the member's own output", func(s string) bool { return strings.Contains(s, "attached-42") })
	tt.key("\x1d")
	tt.waitScreen(t, "back in top", func(s string) bool {
		return strings.Contains(s, "mosh herd top") && strings.Contains(s, "detached from sh")
	})
	// Again, and this time the member ends while attached: top comes back and says so, and no
	// read left on the terminal by the attach takes top's next key.
	tt.key("\r")
	tt.waitScreen(t, "attached again", func(s string) bool { return !strings.Contains(s, "mosh herd top") })
	tt.key("exit\r")
	tt.waitScreen(t, "back after the member ended", func(s string) bool {
		return strings.Contains(s, "mosh herd top") && strings.Contains(s, "sh exited (code 0)")
	})
	tt.key("q")
	done := make(chan error, 1)
	go func() { done <- tt.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("q after detach: %v\n%s", err, tt.text())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("q after detach did not quit (a key went elsewhere?):\n%s", tt.text())
	}
}

// NO_COLOR: top writes no colour at all (bold and reverse video only); a resize redraws the rows
// at the new width.
func TestHerdTopNoColorAndResize(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "m", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "n", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "report", "m", "blocked:permission", "--ttl", "5m")
	e.ok("herd", "report", "n", "blocked:question", "--ttl", "5m") // not selected: drawn in its state's colour, if any
	tt := e.startTop("NO_COLOR=1")
	tt.waitScreen(t, "m and n blocked", func(s string) bool {
		return strings.Contains(rowOf(s, "m"), "blocked/permission") && strings.Contains(rowOf(s, "n"), "blocked/question")
	})
	tt.mu.Lock()
	raw := string(tt.raw)
	tt.mu.Unlock()
	if c := colourSGR(raw); c != "" {
		t.Fatalf("NO_COLOR: top wrote colour %q:\n%q", c, raw)
	}
	if err := pty.Setsize(tt.f, &pty.Winsize{Cols: 60, Rows: 12}); err != nil {
		t.Fatal(err)
	}
	tt.scr.Resize(60, 12)
	_ = tt.cmd.Process.Signal(syscall.SIGWINCH)
	tt.waitScreen(t, "redrawn at 60 columns", func(s string) bool {
		l := rowOf(s, "m")
		return strings.Contains(l, "blocked/permission") && strings.Contains(s, "waiting on you: 2 now") && !strings.Contains(s, "ENGINE") // the engine column goes first when narrow
	})
	tt.key("q")
	_ = tt.cmd.Wait()
}

var sgrRE = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourSGR is the first SGR sequence in s that sets a colour (foreground or background: 30–38,
// 40–48, 90–97, 100–107), "" when none does.
func colourSGR(s string) string {
	for _, m := range sgrRE.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, err := strconv.Atoi(p)
			if err == nil && (n >= 30 && n <= 38 || n >= 40 && n <= 48 || n >= 90 && n <= 97 || n >= 100 && n <= 107) {
				return m[0]
			}
		}
	}
	return ""
}

func TestColourSGR(t *testing.T) {
	for s, want := range map[string]string{"\x1b[31;1m": "\x1b[31;1m", "\x1b[1m\x1b[7m\x1b[m": "", "\x1b[38;5;1m": "\x1b[38;5;1m", "\x1b[2m": ""} {
		if got := colourSGR(s); got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}
