package top

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mosh-dev/mosh/herd"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/")

// clock is the fixed "now" of the golden screens.
var clock = time.Date(2026, 12, 6, 13, 0, 0, 0, time.UTC)

func ago(d time.Duration) int64 { return clock.Add(-d).UnixMilli() }

// herdFixture: a menu and a permission waiting on the person, a working member with a queue, a
// done one, an idle remote and a gone one.
func herdFixture() SnapshotMsg {
	code := 137
	return SnapshotMsg{
		WaitingMs: (95 * time.Minute).Milliseconds(),
		Members: []herd.Member{
			{Name: "web", Engine: "codex", State: "working", Authority: "hook", Alive: true, StateSinceMs: ago(3 * time.Minute), Queued: 2},
			{Name: "api", Engine: "claude", State: "blocked", BlockedOn: "permission", Authority: "hook", Alive: true, StateSinceMs: ago(12 * time.Minute),
				Question: &herd.Question{Kind: "permission", Text: "Bash command: rm -rf build — Do you want to proceed?", Source: "screen",
					Options: []herd.QuestionOption{{Key: "1", Label: "Yes"}, {Key: "2", Label: "Yes, and don't ask again"}, {Key: "3", Label: "No"}}}},
			{Name: "docs", Engine: "claude", State: "blocked", BlockedOn: "question", Authority: "screen", Alive: true, StateSinceMs: ago(40 * time.Second),
				Question: &herd.Question{Kind: "question", Text: "Which branch should I rebase onto?", Source: "hook"}},
			{Name: "db", Engine: "opencode", State: "done", Authority: "screen", Alive: true, StateSinceMs: ago(2 * time.Hour)},
			{Name: "research", Engine: "a2a", Kind: "remote", State: "idle", Authority: "remote", Alive: true, StateSinceMs: ago(26 * time.Hour)},
			{Name: "old", Engine: "pi", State: "gone", Authority: "runtime", ExitCode: &code, StateSinceMs: ago(5 * time.Minute)},
		},
		Open: []herd.Task{
			{ID: "t-12", Member: "api", Text: "port the auth routes to the new router", Open: true, SubmittedMs: ago(20 * time.Minute)},
			{ID: "t-14", Member: "web", Text: "fix the flaky login test", Open: true, SubmittedMs: ago(4 * time.Minute)},
			{ID: "t-15", Member: "web", Text: "then update the changelog", Open: true, Queued: true, SubmittedMs: ago(time.Minute)},
			{ID: "t-13", Member: "docs", Text: "rebase the docs branch\nand push", Open: true, SubmittedMs: ago(10 * time.Minute)},
		},
	}
}

type call struct{ verb, name, text string }

// fakeActions records what top asked for.
type fakeActions struct {
	mu    sync.Mutex
	calls []call
	err   error
}

func (f *fakeActions) rec(verb, name, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{verb, name, text})
	return f.err
}
func (f *fakeActions) Answer(_ context.Context, name, text string) error {
	return f.rec("answer", name, text)
}
func (f *fakeActions) Prompt(_ context.Context, name, text string) error {
	return f.rec("prompt", name, text)
}
func (f *fakeActions) Interrupt(_ context.Context, name string) error {
	return f.rec("interrupt", name, "")
}
func (f *fakeActions) Kill(_ context.Context, name string) error { return f.rec("kill", name, "") }
func (f *fakeActions) Attach(string) tea.ExecCommand             { return nil }

func newModel(t *testing.T, w, h int) (*Model, *fakeActions) {
	t.Helper()
	fa := &fakeActions{}
	m := New(Options{Actions: fa, NoColor: true, Now: func() time.Time { return clock }, Width: w, Height: h})
	m.Update(herdFixture())
	return m, fa
}

// press sends keys (single characters, or names: enter, esc, up, down) and runs the command
// each returns, feeding its message back (an action's outcome), as the program would.
func press(m *Model, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "up":
			msg = tea.KeyPressMsg{Code: tea.KeyUp}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		_, cmd := m.Update(msg)
		drain(m, cmd)
	}
}

// drain runs an action's command and hands its outcome back (ticks and quits are not run).
func drain(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if out, ok := cmd().(actionMsg); ok {
		m.Update(out)
	}
}

func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func golden(t *testing.T, name string, m *Model) {
	t.Helper()
	got := ansi.Strip(m.Render())
	for i, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > m.width {
			t.Errorf("%s: line %d is %d columns wide, the screen %d: %q", name, i, w, m.width, l)
		}
	}
	if n := strings.Count(got, "\n") + 1; n > m.height {
		t.Errorf("%s: %d lines on a %d-line screen", name, n, m.height)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/mosh/top -update writes it)", err)
	}
	if got+"\n" != string(want) {
		t.Errorf("%s: screen differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

func TestGoldenScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 16}, {50, 10}} {
		m, _ := newModel(t, size[0], size[1])
		golden(t, fmt.Sprintf("herd-%dx%d", size[0], size[1]), m)
	}
	m, _ := newModel(t, 80, 24)
	press(m, "?")
	golden(t, "help-80x24", m)

	m, _ = newModel(t, 80, 24)
	press(m, "a")
	golden(t, "answer-menu-80x24", m)

	m, _ = newModel(t, 80, 24)
	press(m, "down", "down", "K")
	golden(t, "kill-confirm-80x24", m)

	m, _ = newModel(t, 80, 24)
	press(m, "/", "c", "l", "a")
	golden(t, "filter-80x24", m)

	empty := New(Options{NoColor: true, Now: func() time.Time { return clock }, Width: 60, Height: 8})
	golden(t, "loading-60x8", empty)
	empty.Update(SnapshotMsg{WaitingMs: -1})
	golden(t, "empty-60x8", empty)
}

func TestWaitingOnYouFirst(t *testing.T) {
	m, _ := newModel(t, 80, 24)
	want := []string{"api", "docs", "web", "db", "research", "old"}
	if fmt.Sprint(m.order) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v (blocked first, the longest waiting at the top)", m.order, want)
	}
	w := m.waiting()
	if w.Members != 2 || w.LongestMs != (12*time.Minute).Milliseconds() || w.TotalMs != (12*time.Minute+40*time.Second).Milliseconds() {
		t.Fatalf("waiting on you: %+v", w)
	}
	// A member turning blocked moves up on the event alone, before any snapshot.
	m.Update(EventsMsg{{Type: herd.EventState, Name: "db", State: "blocked", BlockedOn: "menu", Authority: "hook", Prev: "done", AtMs: ago(time.Hour)}})
	if m.order[0] != "db" {
		t.Fatalf("db blocked for an hour comes first: %v", m.order)
	}
	if !strings.Contains(ansi.Strip(m.Render()), "blocked/menu") {
		t.Fatalf("the event's state is drawn:\n%s", m.Render())
	}
	// The question comes with the event, or after it on a question event.
	if m.rows["db"].m.Question != nil {
		t.Fatal("no question yet")
	}
	m.Update(EventsMsg{{Type: herd.EventQuestion, Name: "db", State: "blocked", BlockedOn: "menu", Question: &herd.Question{Kind: "menu", Text: "Pick a plan",
		Options: []herd.QuestionOption{{Key: "1", Label: "fast"}, {Key: "2", Label: "careful"}}}}})
	if !strings.Contains(ansi.Strip(m.Render()), "? Pick a plan  [1] fast  [2] careful") {
		t.Fatalf("the question event's question is drawn:\n%s", ansi.Strip(m.Render()))
	}
	// It leaves blocked: its question goes with it.
	m.Update(EventsMsg{{Type: herd.EventState, Name: "api", State: "working", Authority: "hook", Prev: "blocked", AtMs: clock.UnixMilli()}})
	if m.rows["api"].m.Question != nil || strings.Contains(ansi.Strip(m.Render()), "Do you want to proceed") {
		t.Fatal("a member that is no longer blocked shows no question")
	}
	// Removed members go; new ones come from their event.
	m.Update(EventsMsg{{Type: herd.EventRemoved, Name: "old"}, {Type: herd.EventAdded, Name: "new", State: "idle", AtMs: clock.UnixMilli()}})
	if m.rows["old"] != nil || m.rows["new"] == nil {
		t.Fatalf("rows after removed/added: %v", m.order)
	}
}

func TestAnswerOffersTheMenuAndSendsTheKey(t *testing.T) {
	m, fa := newModel(t, 80, 24)
	press(m, "a", "down", "enter")
	if len(fa.calls) != 1 || fa.calls[0] != (call{"answer", "api", "2"}) {
		t.Fatalf("calls %v, want answer api 2", fa.calls)
	}
	// A digit picks directly.
	m, fa = newModel(t, 80, 24)
	press(m, "a", "3")
	if len(fa.calls) != 1 || fa.calls[0] != (call{"answer", "api", "3"}) {
		t.Fatalf("calls %v, want answer api 3", fa.calls)
	}
	// A key that is no option sends nothing; Esc cancels.
	m, fa = newModel(t, 80, 24)
	press(m, "a", "9", "x", "esc")
	if len(fa.calls) != 0 || m.mode != modeNormal {
		t.Fatalf("calls %v mode %d: nothing sent", fa.calls, m.mode)
	}
	// A free-text question takes a line.
	m, fa = newModel(t, 80, 24)
	press(m, "down", "a", "m", "a", "i", "n", "enter")
	if len(fa.calls) != 1 || fa.calls[0] != (call{"answer", "docs", "main"}) {
		t.Fatalf("calls %v, want answer docs main", fa.calls)
	}
	// A member that is not blocked has nothing to answer.
	m, fa = newModel(t, 80, 24)
	press(m, "down", "down", "a")
	if len(fa.calls) != 0 || !strings.Contains(m.status, "not blocked") {
		t.Fatalf("answer to a working member: calls %v status %q", fa.calls, m.status)
	}
	// The member stops being blocked while the menu is open: nothing is typed into it.
	m, fa = newModel(t, 80, 24)
	press(m, "a")
	m.Update(EventsMsg{{Type: herd.EventState, Name: "api", State: "working", Prev: "blocked", AtMs: clock.UnixMilli()}})
	press(m, "1")
	if len(fa.calls) != 0 {
		t.Fatalf("answered a member that moved on: %v", fa.calls)
	}
	// The action's error is shown.
	m, fa = newModel(t, 80, 24)
	fa.err = errors.New("api has exited (code 1)")
	press(m, "a", "1")
	if !m.statusErr || !strings.Contains(m.status, "api has exited") {
		t.Fatalf("status %q", m.status)
	}
}

func TestKillAsksFirst(t *testing.T) {
	m, fa := newModel(t, 80, 24)
	press(m, "K", "n")
	if len(fa.calls) != 0 {
		t.Fatalf("killed without a yes: %v", fa.calls)
	}
	press(m, "K", "y")
	if len(fa.calls) != 1 || fa.calls[0] != (call{"kill", "api", ""}) {
		t.Fatalf("calls %v", fa.calls)
	}
	// The target is the member selected when K was pressed, even if the rows move meanwhile.
	m, fa = newModel(t, 80, 24)
	press(m, "down", "down", "K") // web
	m.Update(EventsMsg{{Type: herd.EventState, Name: "db", State: "blocked", Prev: "done", AtMs: ago(time.Hour)}})
	press(m, "y")
	if len(fa.calls) != 1 || fa.calls[0].name != "web" {
		t.Fatalf("calls %v, want kill web", fa.calls)
	}
}

func TestPromptInterruptFilterQuit(t *testing.T) {
	m, fa := newModel(t, 80, 24)
	press(m, "down", "down", "p", "g", "o", "enter", "x")
	if fmt.Sprint(fa.calls) != fmt.Sprint([]call{{"prompt", "web", "go"}, {"interrupt", "web", ""}}) {
		t.Fatalf("calls %v", fa.calls)
	}
	// Esc cancels a prompt.
	press(m, "p", "n", "o", "esc")
	if len(fa.calls) != 2 {
		t.Fatalf("a cancelled prompt was sent: %v", fa.calls)
	}
	// A gone member takes no prompt and no attach.
	press(m, "G", "p")
	if m.mode != modeNormal || !strings.Contains(m.status, "has exited") {
		t.Fatalf("prompt to a gone member: mode %d status %q", m.mode, m.status)
	}
	press(m, "enter")
	if !strings.Contains(m.status, "nothing to attach") {
		t.Fatalf("attach to a gone member: %q", m.status)
	}
	// The filter narrows; Esc clears it.
	press(m, "/", "o", "p", "e", "n", "enter")
	if fmt.Sprint(m.order) != "[db]" {
		t.Fatalf("filter open: %v", m.order)
	}
	press(m, "esc")
	if len(m.order) != 6 {
		t.Fatalf("Esc clears the filter: %v", m.order)
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if !quits(cmd) {
		t.Fatal("q quits")
	}
	// q typed into a prompt is text, not quit.
	m, _ = newModel(t, 80, 24)
	press(m, "p")
	_, cmd = m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if quits(cmd) || m.input.Value() != "q" {
		t.Fatalf("q in a prompt: value %q", m.input.Value())
	}
}

func TestResizeAndScrollKeepTheSelectionOnScreen(t *testing.T) {
	m, _ := newModel(t, 80, 24)
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 7})
	press(m, "G")
	out := ansi.Strip(m.Render())
	if !strings.Contains(out, "› old") {
		t.Fatalf("the selected last row is on screen:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if ansi.StringWidth(l) > 40 {
			t.Fatalf("line wider than 40: %q", l)
		}
	}
}

func TestNoColorDrawsNoColour(t *testing.T) {
	m, _ := newModel(t, 80, 24)
	if s := m.Render(); strings.Contains(s, "\x1b[3") || strings.Contains(s, "\x1b[9") || strings.Contains(s, ";3") {
		t.Fatalf("NoColor screen has colour: %q", s)
	}
	m.opts.NoColor = false
	if s := m.Render(); !strings.Contains(s, "\x1b[") {
		t.Fatal("with colour on, the states are coloured")
	}
}

// 200 members: one event and a redraw, as top does per batch.
func BenchmarkEventAndRender200(b *testing.B) {
	m := New(Options{NoColor: true, Now: func() time.Time { return clock }, Width: 160, Height: 60})
	s := SnapshotMsg{WaitingMs: -1}
	for i := range 200 {
		s.Members = append(s.Members, herd.Member{Name: fmt.Sprintf("m%03d", i), Engine: "claude", State: "working", Authority: "hook", Alive: true, StateSinceMs: ago(time.Minute)})
	}
	m.Update(s)
	states := []string{"blocked", "working", "done", "idle"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Update(EventsMsg{{Type: herd.EventState, Name: fmt.Sprintf("m%03d", i%200), State: states[i%4], AtMs: clock.UnixMilli()}})
		_ = m.Render()
	}
}

func TestDryRunDoesNothing(t *testing.T) {
	m, fa := newModel(t, 80, 24)
	m.opts.DryRun = true
	press(m, "K", "y")
	if len(fa.calls) != 0 || m.status != "dry run: would kill api (nothing done)" {
		t.Fatalf("calls %v status %q", fa.calls, m.status)
	}
	press(m, "a", "1")
	if len(fa.calls) != 0 || !strings.Contains(m.status, "would answer api") {
		t.Fatalf("calls %v status %q", fa.calls, m.status)
	}
	press(m, "enter")
	if !strings.Contains(m.status, "would attach to api") {
		t.Fatalf("status %q", m.status)
	}
}
