package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/screen"
	"github.com/mosh-dev/mosh/herd/state"
)

// The real Claude Code and Codex screens conformance/engines captured at each
// step of its script. The fake engine must be read by the same screen rule
// as the real engine at the same step, and must draw the lines that
// identify the step on the real screen.
const realScreensDir = "../../conformance/engines/screens"

func realScreen(t *testing.T, name string) screen.Snapshot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(realScreensDir, name+".txt"))
	if err != nil {
		t.Fatalf("real screen %s: %v (the fixtures are committed with conformance/engines)", name, err)
	}
	head, body, ok := strings.Cut(string(data), "# ---\n")
	if !ok {
		t.Fatalf("%s: no \"# ---\" line", name)
	}
	snap := screen.Snapshot{Lines: strings.Split(strings.TrimSuffix(body, "\n"), "\n")}
	for _, l := range strings.Split(head, "\n") {
		if v, ok := strings.CutPrefix(l, "# title: "); ok {
			snap.Title = v
		}
		if v, ok := strings.CutPrefix(l, "# size: "); ok {
			if _, err := fmt.Sscanf(v, "%dx%d", &snap.Cols, &snap.Rows); err != nil {
				t.Fatalf("%s: size %q", name, v)
			}
		}
	}
	return snap
}

// step is one point of the conformance script: what to do, the state the
// fake must reach, and lines (as the real engine drew them, NBSP included)
// that both screens must show.
type step struct {
	name  string
	do    func(m *member)
	state state.State
	kind  state.Kind
	lines []string
	title string // a substring the title must have on both
}

func runSteps(t *testing.T, style string, steps []step) {
	tab := state.Load("")
	m := start(t, style, nil)
	for _, s := range steps {
		if s.do != nil {
			s.do(m)
		}
		f := m.waitFor(s.state, s.kind, "")
		fake := m.scr.Snapshot()
		real := realScreen(t, style+"-"+s.name)
		want := tab.Classify(style, real)
		if f.Screen == nil || f.Screen.Rule != want.Rule || f.Screen.State != want.State {
			t.Fatalf("%s: the fake reads %+v, the real %s reads %s by %s (%q)\nfake screen:\n%s", s.name, f.Screen,
				style, state.Format(want.State, want.Kind), want.Rule, want.Evidence, fake.Text())
		}
		for _, l := range s.lines {
			if !strings.Contains(strings.Join(real.Lines, "\n"), l) {
				t.Fatalf("%s: the real screen lacks %q: fix the test", s.name, l)
			}
			if !strings.Contains(strings.Join(fake.Lines, "\n"), l) {
				t.Fatalf("%s: the fake screen lacks %q, which the real %s draws\n%s", s.name, l, style, fake.Text())
			}
		}
		if s.title != "" && (!strings.Contains(real.Title, s.title) || !strings.Contains(fake.Title, s.title)) {
			t.Fatalf("%s: titles real %q fake %q, both should contain %q", s.name, real.Title, fake.Title, s.title)
		}
	}
}

func TestClaudeMatchesRealScreens(t *testing.T) {
	const interrupted = "  ⎿ \u00a0Interrupted · What should Claude do instead?"
	runSteps(t, "claude", []step{
		{name: "startup", state: state.Idle, title: "✳ Claude Code",
			lines: []string{"Claude Code v2.1.332", "◐ medium · /effort", "\n❯\u00a0\n", "  ⏸ manual mode on · ? for shortcuts · ← for agents"}},
		{name: "plain", do: func(m *member) { m.prompt("say fake-plain") }, state: state.Done,
			lines: []string{"❯ say fake-plain\n\n● ", " · done "}},
		{name: "perm-asked", do: func(m *member) { m.prompt("create the file fake-perm") }, state: state.Blocked, kind: state.Permission,
			lines: []string{"❯ create the file fake-perm", "● Creating perm.txt", " Bash command",
				` Tip: auto mode handles these prompts for you — choose "switch to auto mode" below`,
				" Create perm.txt", " touch perm.txt", " Do you want to proceed?", " ❯ 1. Yes", "   2. Yes, and always allow access to ",
				"   3. Yes, and switch to auto mode · auto mode handles these prompts for you", "   4. No", " Esc to cancel · Tab to amend"}},
		{name: "perm-approved", do: func(m *member) { m.send("1") }, state: state.Done,
			lines: []string{"  Ran 1 shell command\n\n● "}},
		{name: "perm-denied", do: func(m *member) {
			m.prompt("create it again fake-perm")
			m.waitFor(state.Blocked, state.Permission, "")
			m.send("\x1b")
		}, state: state.Idle, lines: []string{"  Did not run 1 call\n  ⎿ \u00a0$ touch perm.txt\n" + interrupted}},
		{name: "question-asked", do: func(m *member) { m.prompt("ask me fake-question") }, state: state.Blocked, kind: state.Question,
			lines: []string{" ☐ Color", "Which color should the button be?", "❯ 1. Red", "  3. Type something.", "  4. Chat about this",
				"Enter to select · ↑/↓ to navigate · Esc to cancel"}},
		{name: "esc-working", do: func(m *member) {
			m.send("1")
			m.waitFor(state.Done, "", "")
			m.prompt("another long story fake-slow")
		}, state: state.Working, lines: []string{"● slow part 1 of 30.", "  ⎿ \u00a0Tip: ", "  ⏸ manual mode on · esc to interrupt"}},
		{name: "esc-interrupted", do: func(m *member) { m.send("\x1b") }, state: state.Idle,
			lines: []string{"● slow part 1 of 30.", interrupted, "\n❯\u00a0\n"}},
		{name: "api-error", do: func(m *member) { m.prompt("fail please fake-apierror") }, state: state.Done,
			lines: []string{"● API Error: 400 "}},
	})
}

func TestCodexMatchesRealScreens(t *testing.T) {
	const interrupted = "■ Conversation interrupted - use /feedback if something went wrong"
	runSteps(t, "codex", []step{
		{name: "startup", state: state.Idle,
			lines: []string{"  >_ OpenAI Codex (v0.171.0)", "⣀⣤⣤⣤⣀⣀", "› Ask Codex to do anything", "  gpt-fake default · ",
				"  ← for agents · ? for shortcuts", " · f2 to view"}},
		{name: "plain", do: func(m *member) { m.prompt("say fake-plain") }, state: state.Done, title: "say fake-plain | ",
			lines: []string{"› say fake-plain", "\n• ", "  Worked for <1s • ", " · say fake-plain\n"}},
		{name: "slow-working", do: func(m *member) { m.prompt("tell a long story fake-slow") }, state: state.Working,
			title: "say fake-plain | ", lines: []string{"› tell a long story fake-slow", "• slow part 1 of 30."}},
		{name: "esc-interrupted", do: func(m *member) { m.send("\x1b") }, state: state.Idle,
			lines: []string{"• slow part 1 of 30.", interrupted}},
		{name: "perm-asked", do: func(m *member) { m.prompt("create the file fake-perm") }, state: state.Blocked, kind: state.Permission,
			title: "[ . ] Action Required | say fake-plain | ",
			lines: []string{"• Running touch ", "  Would you like to run the following command?", "  Environment: local",
				"  Reason: The fake model wants to create ", "› 1. Yes, proceed (y)",
				"  2. Yes, and don't ask again for commands that start with `touch ",
				"  3. No, and tell Codex what to do differently (esc)", "  Press enter to confirm or esc to cancel"}},
		{name: "perm-approved", do: func(m *member) { m.send("y") }, state: state.Done,
			lines: []string{"✔ You approved codex to run touch ", "• Ran touch ", "  └ (no output)", "  Worked for "}},
		{name: "perm-denied", do: func(m *member) {
			m.prompt("create it again fake-perm")
			m.waitFor(state.Blocked, state.Permission, "")
			m.send("\x1b")
		}, state: state.Idle, lines: []string{"✗ You canceled the request to run touch ", "• Exited (status 1) touch ", interrupted}},
		{name: "api-error", do: func(m *member) { m.prompt("fail please fake-apierror") }, state: state.Done,
			lines: []string{`■ {"error":{"code":null,"message":"fake`, `"param":null,"type":"invalid_request_error"}}`}},
	})
}

// startFrame starts style with a start-up longer than the test and checks the frame it draws
// while starting against the real engine's captured start-up frame: read by the same rule (never
// idle), with the lines that identify it.
func startFrame(t *testing.T, style, real string, lines ...string) {
	tab := state.Load("")
	m := start(t, style, []string{"FAKEENGINE_START=1h"})
	f := m.waitFor(state.Working, "", "")
	want := tab.Classify(style, realScreen(t, real))
	fake := m.scr.Snapshot()
	if f.Screen == nil || f.Screen.Rule != want.Rule || want.State != state.Working {
		t.Fatalf("starting, the fake %s reads %+v; the real %s reads %s by %s\n%s", style, f.Screen, real,
			state.Format(want.State, want.Kind), want.Rule, fake.Text())
	}
	for _, l := range lines {
		if !strings.Contains(strings.Join(realScreen(t, real).Lines, "\n"), l) {
			t.Fatalf("%s lacks %q: fix the test", real, l)
		}
		if !strings.Contains(strings.Join(fake.Lines, "\n"), l) {
			t.Fatalf("the fake %s, starting, lacks %q, which %s shows\n%s", style, l, real, fake.Text())
		}
	}
}

func TestStartUpMatchesRealScreens(t *testing.T) {
	t.Run("codex", func(t *testing.T) {
		startFrame(t, "codex", "codex-start-loading", "  >_ OpenAI Codex (v0.171.0)\n     loading", "› Ask Codex to do anything", "\n  ? for shortcuts")
	})
	t.Run("claude", func(t *testing.T) {
		startFrame(t, "claude", "claude-start-box", "Claude Code v2.1.332", "◐ medium · /effort", "\n❯\u00a0\n", "─\n  ⏸ manual mode on")
	})
}
