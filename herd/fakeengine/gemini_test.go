package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/state"
)

// geminiSettings writes the hooks file `mosh herd hooks install gemini` writes (the engines
// table's plan: one group per event, with its matcher), each hook logging its payload.
func geminiSettings(t *testing.T, dir, log string) string {
	t.Helper()
	plans, errs := state.Load("").HookPlans()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	hooks := map[string][]any{}
	for _, p := range plans {
		if p.Engine != "gemini" {
			continue
		}
		for _, g := range p.Groups {
			group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": `cat >> "` + log + `"; echo >> "` + log + `"`, "timeout": 10000}}}
			if g.HasMatcher {
				group["matcher"] = g.Matcher
			}
			hooks[g.Event] = append(hooks[g.Event], group)
		}
	}
	if len(hooks) == 0 {
		t.Fatal("the engines table has no gemini hook plan")
	}
	data, _ := json.Marshal(map[string]any{"hooks": hooks})
	file := filepath.Join(dir, "gemini-settings.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// The fake plays Gemini CLI from data alone: its screens from styles.json, its hooks from the
// engines table's gemini entry (BeforeAgent → working, Notification(ToolPermission) →
// blocked:permission, AfterTool → working, AfterAgent → done with prompt_response). The
// engines table's rules classify every screen, its hook spec maps every event, and the final
// message is the answer.
func TestGeminiStylePlaysFromTheTable(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "gemini-hooks.log")
	settings := geminiSettings(t, dir, log)
	m := start(t, "gemini", []string{"HOOK_LOG=" + log}, "--settings", settings)
	f := m.waitFor(state.Idle, "", state.ScreenAuth)
	if f.Screen.Rule != "gemini.idle.prompt" || !strings.HasPrefix(m.scr.Snapshot().Title, "◇  Ready (") {
		t.Fatalf("idle: %+v title %q\n%s", f.Screen, m.scr.Snapshot().Title, m.scr.Snapshot().Text())
	}
	if ev := events(m.hooks()); ev != "" {
		t.Fatalf("gemini's table has no session-start event, yet %s fired", ev)
	}
	tab := state.Load("")

	// A plain turn: the screen reads working, the hooks say working then done, and the done
	// payload's prompt_response is the task's final message.
	m.prompt("hello there")
	f = m.waitFor(state.Working, "", state.ScreenAuth)
	if f.Screen.Rule != "gemini.working.cancel" {
		t.Fatalf("working by %+v", f.Screen)
	}
	m.waitFor(state.Idle, "", state.ScreenAuth)
	hs := m.hooks()
	if events(hs) != "BeforeAgent,AfterAgent" || hs[0].Prompt != "hello there" {
		t.Fatalf("turn hooks: %s %+v", events(hs), hs)
	}
	if got := tab.FinalMessage("gemini", hs[1].Raw); got != "hello there" {
		t.Fatalf("final message %q from %s", got, hs[1].Raw)
	}
	// As the daemon fuses them (a tracker of its own: this member's goes on with the screen).
	tr := tab.NewTracker("gemini", nil)
	for i, want := range []string{"working", "done"} {
		f, err := tr.Report(state.HookReport{Payload: hs[i].Raw})
		if err != nil || f.Authority != state.Hook || state.Format(f.State, f.Kind) != want {
			t.Fatalf("%s reads %s by %s (%v), want %s by hook", hs[i].Event, state.Format(f.State, f.Kind), f.Authority, err, want)
		}
	}
	tr.Close()

	// A shell permission: the dialog reads blocked:permission on the screen, the
	// Notification(ToolPermission) hook says the same; approving runs the tool (AfterTool) and
	// ends the turn (AfterAgent).
	m.prompt("perm please")
	f = m.waitFor(state.Blocked, state.Permission, state.ScreenAuth)
	if f.Screen.Rule != "gemini.blocked.dialog" || !strings.HasPrefix(m.scr.Snapshot().Title, "✋  Action Required") {
		t.Fatalf("dialog: %+v\n%s", f.Screen, m.scr.Snapshot().Text())
	}
	hs = m.hooks()
	if events(hs) != "BeforeAgent,Notification" || hs[1].NotifTyp != "ToolPermission" {
		t.Fatalf("permission hooks: %s %+v", events(hs), hs)
	}
	for _, h := range hs {
		_, _ = m.tr.Report(state.HookReport{Payload: h.Raw})
	}
	m.waitFor(state.Blocked, state.Permission, state.Hook)
	m.send("1")
	m.waitFor(state.Idle, "", state.ScreenAuth)
	hs = m.hooks()
	if events(hs) != "AfterTool,AfterAgent" || tab.FinalMessage("gemini", hs[1].Raw) != "Created the file." {
		t.Fatalf("approve hooks: %s %+v", events(hs), hs)
	}
	if !strings.Contains(m.scr.Snapshot().Text(), "✓  Shell touch gemini-perm.txt") {
		t.Fatalf("the ran tool is not on the screen:\n%s", m.scr.Snapshot().Text())
	}

	// Denied: nothing fires after the dialog (as the real engines), and the screen ends it.
	m.prompt("perm again")
	m.waitFor(state.Blocked, state.Permission, state.ScreenAuth)
	m.send("3")
	m.waitFor(state.Idle, "", state.ScreenAuth)
	if ev := events(m.hooks()); ev != "BeforeAgent,Notification" {
		t.Fatalf("deny hooks: %s", ev)
	}

	// Esc while working: idle again, no hook.
	m.prompt("slow job")
	m.waitFor(state.Working, "", state.ScreenAuth)
	m.send("\x1b")
	m.waitFor(state.Idle, "", state.ScreenAuth)
	if ev := events(m.hooks()); ev != "BeforeAgent" {
		t.Fatalf("Esc hooks: %s", ev)
	}

	m.prompt("exit 3")
	if code := <-m.exited; code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
}

// {fill:C} shares the room of a line between its fills.
func TestFillWidth(t *testing.T) {
	for _, c := range []struct {
		in   string
		cols int
		want string
	}{
		{"╭{fill:─}╮", 6, "╭────╮"},
		{"a{fill: }b{fill: }c", 8, "a   b  c"},
		{"no fill", 3, "no fill"},
		{"too long{fill:.}", 4, "too long."},
	} {
		if got := fillWidth(c.in, c.cols); got != c.want {
			t.Errorf("fillWidth(%q, %d) = %q, want %q", c.in, c.cols, got, c.want)
		}
	}
}
