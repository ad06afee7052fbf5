package state

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/screen"
)

// The real screens captured from Claude Code, Codex, OpenCode and pi by
// conformance/engines (see its screens/README.md). conformance/engines checks
// the readings too; here they also pin which marker decided, so a reading
// that is right for the wrong reason (an old marker from an earlier turn)
// fails.
const realScreensDir = "../../conformance/engines/screens"

type realScreen struct {
	name   string // file name without .txt
	engine string
	expect []string
	snap   screen.Snapshot
}

// loadRealScreens parses the fixture format: "# key: value" lines, "# ---",
// then the rows.
func loadRealScreens(t testing.TB) []realScreen {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(realScreensDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no real screens in %s: they are committed with conformance/engines", realScreensDir)
	}
	var out []realScreen
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head, body, ok := strings.Cut(string(data), "# ---\n")
		if !ok {
			t.Fatalf("%s: no \"# ---\" line", f)
		}
		h := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(head), "\n") {
			k, v, _ := strings.Cut(strings.TrimPrefix(l, "# "), ": ")
			h[k] = v
		}
		snap := screen.Snapshot{Lines: strings.Split(strings.TrimSuffix(body, "\n"), "\n"), Title: h["title"]}
		if _, err := fmt.Sscanf(h["size"], "%dx%d", &snap.Cols, &snap.Rows); err != nil {
			t.Fatalf("%s: size %q: %v", f, h["size"], err)
		}
		for len(snap.Lines) < snap.Rows {
			snap.Lines = append(snap.Lines, "")
		}
		engine, _, _ := strings.Cut(h["engine"], " ")
		out = append(out, realScreen{name: strings.TrimSuffix(filepath.Base(f), ".txt"), engine: engine,
			expect: strings.Split(h["expect"], "|"), snap: snap})
	}
	return out
}

// The marker that must decide each real screen whose history holds older,
// contradicting markers: the newest one, just above the input box.
var realScreenRules = map[string]struct{ rule, evidence string }{
	"claude-plain":             {"claude.done.turn", "✻ Brewed for 1s"},
	"claude-perm-approved":     {"claude.done.turn", "✻ Cogitated for 1s"},
	"claude-perm-denied":       {"claude.idle.interrupted", "Interrupted · What should Claude do instead?"},
	"claude-esc-interrupted":   {"claude.idle.interrupted", "Interrupted · What should Claude do instead?"},
	"claude-api-error":         {"claude.done.api_error", "● API Error: 400"},
	"claude-startup":           {"claude.idle.prompt", "❯"},
	"codex-plain":              {"codex.done.turn", "Worked for <1s"},
	"codex-perm-approved":      {"codex.done.turn", "Worked for 10s"},
	"codex-perm-denied":        {"codex.idle.interrupted", "■ Conversation interrupted"},
	"codex-esc-interrupted":    {"codex.idle.interrupted", "■ Conversation interrupted"},
	"codex-api-error":          {"codex.done.error", `■ {"error"`},
	"opencode-esc-interrupted": {"opencode.idle.interrupted", "· interrupted"},
	"opencode-api-error":       {"opencode.done.ended", "▣  Build · GPT Fake"},
	"opencode-perm-denied":     {"opencode.done.ended", "▣  Build · GPT Fake"},
	"pi-api-error":             {"pi.done.error", "Error: 400"},
	"pi-esc-interrupted":       {"pi.idle.aborted", "Operation aborted"},
	// Start-up, captured frame by frame (a fresh member must not read idle before the engine
	// takes a prompt): Codex's header says "loading", then its footer is the bare "? for
	// shortcuts" until its session is configured, and a prompt typed meanwhile is held under
	// "Waiting for startup"; Claude Code's first frame is a blank screen titled "✳ Claude Code"
	// (no rule: unknown), then the box with a bare mode line before "? for shortcuts".
	"codex-start-loading": {"codex.working.loading", "OpenAI Codex"},
	"codex-start-session": {"codex.working.starting", "? for shortcuts"},
	"codex-start-held":    {"codex.working.starting", "Waiting for startup"},
	"codex-start-taken":   {"codex.working.submitted", "› Answer with the word"},
	"codex-start-ready":   {"codex.idle.prompt", "Ask Codex to do anything"},
	"claude-start-blank":  {"", ""},
	"claude-start-box":    {"claude.working.starting", "❯"},
	"claude-start-ready":  {"claude.idle.prompt", "❯"},
}

// startSequences are the start-up frames of a fresh member in the order the real engine drew
// them (conformance/engines/screens/*-start-*.txt): only the last reads idle.
var startSequences = map[string][]string{
	"codex":  {"codex-start-loading", "codex-start-session", "codex-start-held", "codex-start-ready"},
	"claude": {"claude-start-blank", "claude-start-box", "claude-start-ready"},
}

func TestStartSequencesReadIdleOnlyWhenReady(t *testing.T) {
	tab := Load("")
	byName := map[string]realScreen{}
	for _, rs := range loadRealScreens(t) {
		byName[rs.name] = rs
	}
	for engine, seq := range startSequences {
		for i, name := range seq {
			rs, ok := byName[name]
			if !ok {
				t.Fatalf("%s: no captured screen %s.txt in %s", engine, name, realScreensDir)
			}
			rd := tab.Classify(engine, rs.snap)
			if idle := rd.State == Idle || rd.State == Done; idle != (i == len(seq)-1) {
				t.Errorf("%s start-up frame %d (%s) reads %s by %q: only the last frame, when the engine takes input, may read idle",
					engine, i+1, name, Format(rd.State, rd.Kind), rd.Rule)
			}
		}
	}
}

func TestRealScreens(t *testing.T) {
	tab := Load("")
	for _, rs := range loadRealScreens(t) {
		t.Run(rs.name, func(t *testing.T) {
			rd := tab.Classify(rs.engine, rs.snap)
			got := Format(rd.State, rd.Kind)
			if !slices.Contains(rs.expect, got) {
				t.Fatalf("reads %s by %s (%q), want %s", got, rd.Rule, rd.Evidence, strings.Join(rs.expect, "|"))
			}
			if want, ok := realScreenRules[rs.name]; ok && (rd.Rule != want.rule || !strings.Contains(rd.Evidence, want.evidence)) {
				t.Fatalf("decided by %s (%q), want %s on the newest marker %q", rd.Rule, rd.Evidence, want.rule, want.evidence)
			}
		})
	}
}

// BenchmarkClassifyRealScreens: one classification of each real screen in
// turn (35 screens of four engines, 120×40).
func BenchmarkClassifyRealScreens(b *testing.B) {
	tab := Load("")
	screens := loadRealScreens(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rs := screens[i%len(screens)]
		_ = tab.Classify(rs.engine, rs.snap)
	}
}
