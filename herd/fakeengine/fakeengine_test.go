package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// build compiles this program once per test run.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fakeengine")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "fakeengine")
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(gobin, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build fakeengine: %v", buildErr)
	}
	return binPath
}

// member runs the fake engine under a pty the way the daemon does: the pty
// feeds a screen.Screen, whose settle signal feeds a state.Tracker.
type member struct {
	t       *testing.T
	cmd     *exec.Cmd
	pty     *os.File
	scr     *screen.Screen
	tr      *state.Tracker
	changes chan state.Fused
	log     string
	exited  chan int
	logSeen int
}

const waitLimit = 30 * time.Second // a failsafe against hangs, not a speed assertion

func start(t *testing.T, style string, env []string, extraArgs ...string) *member {
	t.Helper()
	bin := build(t)
	home := t.TempDir()
	log := filepath.Join(home, "hooks.log")
	settings := filepath.Join(home, "settings.json")
	events := []string{"SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
		"PostToolUse", "Stop", "StopFailure", "Notification"}
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []any{map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command",
			"command": `cat >> "$HOOK_LOG"; echo >> "$HOOK_LOG"`, "timeout": 10}}}}
	}
	data, _ := json.Marshal(map[string]any{"hooks": hooks})
	if err := os.WriteFile(settings, data, 0o600); err != nil {
		t.Fatal(err)
	}
	m := &member{t: t, log: log, changes: make(chan state.Fused, 256), exited: make(chan int, 1)}
	m.tr = state.Load("").NewTracker(style, func(f state.Fused) { m.changes <- f })
	m.scr = screen.New(120, 40, screen.Options{
		OnReply:   func(b []byte) { _, _ = m.pty.Write(b) },
		OnSettled: func(s screen.Snapshot) { m.tr.Observe(s) },
	})
	args := append([]string{"--style", style, "--settings", settings}, extraArgs...)
	m.cmd = exec.Command(bin, args...)
	m.cmd.Dir = home
	m.cmd.Env = append(os.Environ(), "HOME="+home, "HOOK_LOG="+log, "FAKEENGINE_TURN=300ms", "FAKEENGINE_SLOW=1h",
		"FAKEENGINE_TICK=50ms", "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0")
	m.cmd.Env = append(m.cmd.Env, env...)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOOK_LOG="); ok {
			m.log = v
		}
	}
	f, err := pty.StartWithSize(m.cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	m.pty = f
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32*1024)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				m.scr.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := m.cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		<-readDone
		m.exited <- code
	}()
	t.Cleanup(func() {
		_ = m.cmd.Process.Kill()
		_ = f.Close()
		m.scr.Close()
		m.tr.Close()
	})
	return m
}

// waitFor waits for the fused state to become want (with kind and, if
// given, authority), draining change events; it never sleeps.
func (m *member) waitFor(want state.State, kind state.Kind, auth state.Authority) state.Fused {
	m.t.Helper()
	deadline := time.After(waitLimit)
	cur := m.tr.Current()
	since := cur.Since
	for !(cur.State == want && cur.Kind == kind && (auth == "" || cur.Authority == auth)) {
		select {
		case f := <-m.changes:
			if f.Since.Before(since) {
				continue // an older change, already reflected in what we saw
			}
			cur = f
		case <-deadline:
			m.t.Fatalf("waiting for %s/%s: still %s/%s (%s)\n%s", state.Format(want, kind), auth,
				state.Format(cur.State, cur.Kind), cur.Authority, cur.Reason, m.scr.Snapshot().Text())
		}
	}
	return cur
}

func (m *member) send(s string) {
	m.t.Helper()
	if _, err := m.pty.Write([]byte(s)); err != nil {
		m.t.Fatal(err)
	}
}

// prompt types text, then Enter as a separate write (as `herd prompt` does).
func (m *member) prompt(text string) {
	m.send(text)
	m.send("\r")
}

type hookEntry struct {
	Event    string          `json:"hook_event_name"`
	Prompt   string          `json:"prompt"`
	Tool     string          `json:"tool_name"`
	Last     string          `json:"last_assistant_message"`
	Session  string          `json:"session_id"`
	Cwd      string          `json:"cwd"`
	Raw      json.RawMessage `json:"-"`
	NotifTyp string          `json:"notification_type"`
}

// hooks returns the hook payloads logged since the last call.
func (m *member) hooks() []hookEntry {
	m.t.Helper()
	f, err := os.Open(m.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		m.t.Fatal(err)
	}
	defer f.Close()
	var all []hookEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var h hookEntry
		if err := json.Unmarshal([]byte(line), &h); err != nil {
			m.t.Fatalf("hook payload is not JSON: %q", line)
		}
		h.Raw = json.RawMessage(line)
		all = append(all, h)
	}
	out := all[m.logSeen:]
	m.logSeen = len(all)
	return out
}

func events(hs []hookEntry) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Event)
	}
	return strings.Join(out, ",")
}

func TestClaudeStyleScreensAndHooks(t *testing.T) {
	m := start(t, "claude", nil)
	m.waitFor(state.Idle, "", state.ScreenAuth)
	if title := m.scr.Snapshot().Title; title != "✳ Claude Code" {
		t.Fatalf("idle title %q", title)
	}
	if h := m.hooks(); events(h) != "SessionStart" || h[0].Session == "" || h[0].Cwd == "" {
		t.Fatalf("start hooks: %+v", h)
	}

	// A plain turn: working, then done with the reply and a done line.
	m.prompt("hello there")
	m.waitFor(state.Working, "", "")
	f := m.waitFor(state.Done, "", state.ScreenAuth)
	if f.Screen.Rule != "claude.done.turn" || !strings.Contains(m.scr.Snapshot().Text(), "● hello there") {
		t.Fatalf("done reading %+v\n%s", f.Screen, m.scr.Snapshot().Text())
	}
	if h := m.hooks(); events(h) != "UserPromptSubmit,Stop" || h[0].Prompt != "hello there" || h[1].Last != "hello there" {
		t.Fatalf("turn hooks: %s %+v", events(h), h)
	}

	// Permission approved.
	m.prompt("perm please")
	m.waitFor(state.Blocked, state.Permission, state.ScreenAuth)
	m.send("1")
	m.waitFor(state.Working, "", "")
	m.waitFor(state.Done, "", "")
	if ev := events(m.hooks()); ev != "UserPromptSubmit,PreToolUse,PermissionRequest,PostToolUse,Stop" {
		t.Fatalf("approve hooks: %s", ev)
	}

	// Permission denied, with the hooks fed to the tracker as the daemon
	// would: the hook says blocked, nothing fires after the deny, and the
	// screen ends the stale state.
	m.prompt("perm again")
	m.waitFor(state.Blocked, state.Permission, state.ScreenAuth)
	for _, h := range m.hooks() {
		_, _ = m.tr.Report(state.HookReport{Payload: h.Raw})
	}
	m.waitFor(state.Blocked, state.Permission, state.Hook)
	m.send("4")
	f = m.waitFor(state.Idle, "", state.ScreenAuth)
	if f.Hook == nil || f.Hook.EndedBy != "claude.idle.interrupted" {
		t.Fatalf("the screen should have ended the hook's blocked: %+v", f.Hook)
	}

	// Question menu.
	m.prompt("ask me")
	m.waitFor(state.Blocked, state.Question, "")
	m.send("2")
	m.waitFor(state.Done, "", "")
	hs := m.hooks()
	if ev := events(hs); ev != "UserPromptSubmit,PreToolUse,PermissionRequest,PostToolUse,Stop" {
		t.Fatalf("ask hooks: %s (nothing may fire after a deny, so the deny left no trace)", ev)
	}
	if hs[2].Tool != "AskUserQuestion" || hs[4].Last != "You picked Blue." {
		t.Fatalf("ask payloads: %+v", hs)
	}

	// Esc while working: interrupted, no hook.
	m.prompt("slow job")
	m.waitFor(state.Working, "", "")
	m.send("\x1b")
	f = m.waitFor(state.Idle, "", "")
	if f.Screen.Rule != "claude.idle.interrupted" {
		t.Fatalf("after Esc: %+v", f.Screen)
	}

	// API error.
	m.prompt("fail now")
	f = m.waitFor(state.Done, "", "")
	if f.Screen.Rule != "claude.done.api_error" {
		t.Fatalf("API error reading: %+v", f.Screen)
	}
	if ev := events(m.hooks()); ev != "UserPromptSubmit,UserPromptSubmit,StopFailure" {
		t.Fatalf("Esc then fail hooks: %s", ev)
	}

	// A bracketed paste with a newline is one prompt; Enter submits it.
	m.send("\x1b[200~first line\nsecond line\x1b[201~")
	m.send("\r")
	m.waitFor(state.Working, "", "")
	m.waitFor(state.Done, "", "")
	if h := m.hooks(); len(h) != 2 || h[0].Prompt != "first line\nsecond line" {
		t.Fatalf("pasted prompt: %+v", h)
	}

	// exit N.
	m.prompt("exit 7")
	code := <-m.exited
	if code != 7 {
		t.Fatalf("exit code %d, want 7", code)
	}
	if ev := events(m.hooks()); ev != "SessionEnd" {
		t.Fatalf("exit hooks: %s", ev)
	}
	if f := m.tr.Exited(code); f.State != state.Done || f.Authority != state.Runtime {
		t.Fatalf("after exit: %+v", f)
	}
}

func TestCodexStyleScreens(t *testing.T) {
	m := start(t, "codex", nil, "--hook-trust")
	m.waitFor(state.Blocked, state.Menu, "")
	if ev := events(m.hooks()); ev != "" {
		t.Fatalf("untrusted hooks ran: %s", ev)
	}
	m.send("2")
	m.waitFor(state.Idle, "", "")

	m.prompt("perm it")
	m.waitFor(state.Working, "", "")
	f := m.waitFor(state.Blocked, state.Permission, "")
	if !strings.Contains(f.Screen.Title, "Action Required") {
		t.Fatalf("permission title %q", f.Screen.Title)
	}
	m.send("y")
	m.waitFor(state.Working, "", "")
	f = m.waitFor(state.Done, "", "")
	if f.Screen.Rule != "codex.done.turn" {
		t.Fatalf("done reading %+v", f.Screen)
	}
	if ev := events(m.hooks()); ev != "UserPromptSubmit,PreToolUse,PermissionRequest,PostToolUse,Stop" {
		t.Fatalf("codex hooks: %s", ev)
	}

	m.prompt("perm denied")
	m.waitFor(state.Blocked, state.Permission, "")
	m.send("\x1b")
	f = m.waitFor(state.Idle, "", "")
	if f.Screen.Rule != "codex.idle.interrupted" {
		t.Fatalf("after deny: %+v", f.Screen)
	}

	m.prompt("ask it")
	m.waitFor(state.Blocked, state.Question, "")
	m.send("1")
	m.waitFor(state.Done, "", "")

	m.prompt("slow one")
	m.waitFor(state.Working, "", "")
	m.send("\x1b")
	m.waitFor(state.Idle, "", "")
	m.send("\x04")
	if code := <-m.exited; code != 0 {
		t.Fatalf("Ctrl-D exit code %d", code)
	}
}

func TestBadFlags(t *testing.T) {
	bin := build(t)
	out, err := exec.Command(bin, "--style", "vim").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "use claude or codex") {
		t.Fatalf("bad style: %v %s", err, out)
	}
}

// Herd members get the real engines' launch, agent and resume flags: the
// fake engine ignores them (with their values) and keeps its own.
func TestIgnoresEngineFlags(t *testing.T) {
	c, err := parseFlags([]string{"--dangerously-skip-permissions", "--no-daemon", "--permission-mode", "default",
		"--style", "codex", "resume", "--last", "--model=gpt-5", "-c", "x=1", "--hook-trust", "--turn", "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if c.style != "codex" || !c.hookTrust || c.turn != 2*time.Second {
		t.Fatalf("own flags lost among the engine's: %+v", c)
	}
	if _, err := parseFlags([]string{"--yolo", "--style", "vim"}); err == nil || !strings.Contains(err.Error(), "use claude or codex") {
		t.Fatalf("a bad value of its own flag must still fail: %v", err)
	}
	// The built program starts and draws its idle screen with them.
	m := start(t, "claude", nil, "--dangerously-skip-permissions", "--permission-mode", "default", "--no-daemon", "--continue")
	m.waitFor(state.Idle, "", "")
	m.send("\x04")
	if code := <-m.exited; code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// Claude's Notifications: permission_prompt while a dialog stays open (a
// real blocked signal) and idle_prompt after a finished turn (not blocked).
// Hook payloads arrive through a FIFO, so the test waits on them without
// polling.
func TestNotifications(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "hooks.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDWR, 0) // read-write: never EOF, never blocks the writers' open
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	payloads := make(chan hookEntry, 64)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			var h hookEntry
			if line == "" || json.Unmarshal([]byte(line), &h) != nil {
				continue
			}
			h.Raw = json.RawMessage(line)
			payloads <- h
		}
	}()
	m := start(t, "claude", []string{"HOOK_LOG=" + fifo, "FAKEENGINE_NOTIFY_AFTER=50ms", "FAKEENGINE_IDLE_NOTIFY=50ms"})
	next := func(event string) hookEntry {
		t.Helper()
		deadline := time.After(waitLimit)
		for {
			select {
			case h := <-payloads:
				if h.Event == event {
					return h
				}
			case <-deadline:
				t.Fatalf("no %s hook", event)
			}
		}
	}
	next("SessionStart")
	m.waitFor(state.Idle, "", "")
	m.prompt("perm x")
	m.waitFor(state.Blocked, state.Permission, state.ScreenAuth)
	h := next("Notification")
	if h.NotifTyp != "permission_prompt" {
		t.Fatalf("dialog notification %q", h.NotifTyp)
	}
	if f, err := m.tr.Report(state.HookReport{Payload: h.Raw}); err != nil || f.Authority != state.Hook || f.Kind != state.Permission {
		t.Fatalf("permission_prompt report: %+v %v", f, err)
	}
	m.send("1")
	m.waitFor(state.Done, "", "")
	h = next("Notification")
	if h.NotifTyp != "idle_prompt" {
		t.Fatalf("idle notification %q", h.NotifTyp)
	}
	if _, err := m.tr.Report(state.HookReport{State: state.Blocked, Payload: h.Raw}); !errors.Is(err, state.ErrIgnored) {
		t.Fatalf("idle_prompt as blocked must be ignored: %v", err)
	}
	if f := m.tr.Current(); f.State != state.Done {
		t.Fatalf("after idle_prompt: %+v", f)
	}
}

func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		m, subject string
		want       bool
	}{{"", "Bash", true}, {"*", "", true}, {"Bash", "Bash", true}, {"Bash", "BashOutput", false},
		{"Edit|Write", "Write", true}, {"permission_prompt|elicitation_dialog", "idle_prompt", false},
		{"permission_prompt|elicitation_dialog", "elicitation_dialog", true}, {"(", "(", false}} {
		if got := matcherMatches(c.m, c.subject); got != c.want {
			t.Errorf("matcher %q on %q = %v", c.m, c.subject, got)
		}
	}
}
