package scripts

// Tests of `mosh herd hooks` (hooks.mosh): through the real binary for the CLI contract, and
// in-process (runtime.Run with the builtins) for the property test, which runs the same script.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/builtins"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/runtime"
)

var bins struct {
	mosh, fakeengine string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mhk")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.mosh = filepath.Join(dir, "mosh")
	bins.fakeengine = filepath.Join(dir, "fakeengine")
	for _, b := range [][2]string{{bins.mosh, "../cmd/mosh"}, {bins.fakeengine, "../herd/fakeengine"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", b[1], err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hk is one hermetic home for the hooks verb.
type hk struct {
	t    *testing.T
	home string
	env  []string
}

func newHK(t *testing.T) *hk {
	t.Helper()
	home, err := os.MkdirTemp("", "mh") // short: the e2e tests put a socket under it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	h := &hk{t: t, home: home}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "MOSH_HOME" || strings.HasPrefix(k, "MOSH_HERD_") || k == "CODEX_HOME" || k == "TERM" {
			continue
		}
		h.env = append(h.env, kv)
	}
	h.env = append(h.env, "HOME="+home, "MOSH_HOME="+home, "TERM=xterm-256color")
	return h
}

func (h *hk) path(rel string) string { return filepath.Join(h.home, rel) }

func (h *hk) run(args ...string) (string, string, int) {
	h.t.Helper()
	cmd := exec.Command(bins.mosh, args...)
	cmd.Env = h.env
	cmd.Dir = h.home
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatalf("mosh %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func (h *hk) expect(code int, args ...string) (string, string) {
	h.t.Helper()
	out, errs, got := h.run(args...)
	if got != code {
		h.t.Fatalf("mosh %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errs)
	}
	return out, errs
}

func (h *hk) write(rel, text string, mode fs.FileMode) {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // WriteFile's mode is subject to the umask
		h.t.Fatal(err)
	}
}

func (h *hk) read(rel string) string {
	h.t.Helper()
	b, err := os.ReadFile(h.path(rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *hk) mode(rel string) fs.FileMode {
	h.t.Helper()
	fi, err := os.Stat(h.path(rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return fi.Mode().Perm()
}

type statusRow struct {
	Engine string `json:"engine"`
	Status string `json:"status"`
	File   string `json:"file"`
	Path   string `json:"path"`
	Fix    string `json:"fix"`
	Stale  []string
	Events []struct {
		Event     string `json:"event"`
		Report    string `json:"report"`
		Installed bool   `json:"installed"`
		Current   bool   `json:"current"`
		Trust     string `json:"trust"`
	} `json:"events"`
}

func (h *hk) status(engine string) statusRow {
	h.t.Helper()
	out, _ := h.expect(0, "herd", "hooks", "status", engine, "--json")
	var rows []statusRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		h.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return rows[0]
}

type changeResult struct {
	Engine  string `json:"engine"`
	OK      bool   `json:"ok"`
	Result  string `json:"result"`
	Error   string `json:"error"`
	Diff    string `json:"diff"`
	Trust   string `json:"trust"`
	Changes []struct {
		Event  string `json:"event"`
		Change string `json:"change"`
	} `json:"changes"`
}

func (h *hk) change(code int, args ...string) []changeResult {
	h.t.Helper()
	out, _ := h.expect(code, append(append([]string{"herd", "hooks"}, args...), "--json")...)
	var res []changeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		h.t.Fatalf("%v --json: %v\n%s", args, err, out)
	}
	return res
}

var engineFiles = map[string]string{
	"claude":   ".claude/settings.json",
	"codex":    ".codex/hooks.json",
	"gemini":   ".gemini/settings.json",
	"opencode": ".config/opencode/plugins/mosh-herd.js",
	"pi":       ".pi/agent/extensions/mosh-herd.ts",
}

// plan is the engine table's install plan, as the script sees it.
func plan(t *testing.T, engine string) state.HookPlan {
	t.Helper()
	plans, errs := state.Load("").HookPlans()
	if len(errs) > 0 {
		t.Fatalf("hook specs: %v", errs)
	}
	for _, p := range plans {
		if p.Engine == engine {
			return p
		}
	}
	t.Fatalf("no hook plan for %s", engine)
	return state.HookPlan{}
}

func TestInstallStatusRemoveEveryEngine(t *testing.T) {
	for engine, rel := range engineFiles {
		t.Run(engine, func(t *testing.T) {
			h := newHK(t)
			p := plan(t, engine)
			if st := h.status(engine); st.Status != "absent" || len(st.Events) != len(p.Groups) {
				t.Fatalf("fresh home: %+v", st)
			}
			res := h.change(0, "install", engine)
			if len(res) != 1 || !res[0].OK || res[0].Result != "added" {
				t.Fatalf("install: %+v", res)
			}
			for _, c := range res[0].Changes {
				if c.Change != "added" {
					t.Errorf("install into a new file: %s %s", c.Event, c.Change)
				}
			}
			if m := h.mode(rel); m != 0o600 {
				t.Errorf("new file mode %o, want 600", m)
			}
			if m := h.mode(filepath.Dir(rel)); m != 0o700 {
				t.Errorf("new directory mode %o, want 700", m)
			}
			installed := h.read(rel)
			want := "installed"
			if engine == "codex" && !strings.Contains(res[0].Trust, "trusted for codex in ~/.codex/config.toml") {
				t.Errorf("codex install trusts its hooks: %q", res[0].Trust)
			}
			st := h.status(engine)
			if st.Status != want {
				t.Fatalf("after install: %s, want %s (%+v)", st.Status, want, st)
			}
			for _, ev := range st.Events {
				if !ev.Installed || !ev.Current {
					t.Errorf("after install, %s is not current: %+v", ev.Event, ev)
				}
			}
			// Install twice: nothing changes, not even the bytes.
			if res := h.change(0, "install", engine); res[0].Result != "unchanged" {
				t.Fatalf("second install: %+v", res)
			}
			if h.read(rel) != installed {
				t.Fatal("second install rewrote the file")
			}
			if p.Spec.Layout == state.LayoutJSONHooks {
				checkInstalledJSON(t, p, installed)
			} else if installed != p.Text {
				t.Fatalf("%s: file differs from the plan's text", engine)
			}
			res = h.change(0, "remove", engine)
			if res[0].Result != "removed" {
				t.Fatalf("remove: %+v", res)
			}
			if st := h.status(engine); st.Status != "absent" {
				t.Fatalf("after remove: %+v", st)
			}
			if p.Spec.Layout == state.LayoutFile {
				if _, err := os.Stat(h.path(rel)); !os.IsNotExist(err) {
					t.Fatalf("remove leaves the %s file: %v", engine, err)
				}
			} else if got := h.read(rel); got != "{}\n" {
				// The settings file itself is the user's: it stays, emptied of ours.
				t.Fatalf("after remove: %q", got)
			}
			if res := h.change(0, "remove", engine); res[0].Result != "absent" {
				t.Fatalf("second remove: %+v", res)
			}
		})
	}
}

// checkInstalledJSON checks the written groups: one per event, matcher, command, timeout.
func checkInstalledJSON(t *testing.T, p state.HookPlan, text string) {
	t.Helper()
	var doc struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Hooks) != len(p.Groups) {
		t.Fatalf("%d events written, want %d", len(doc.Hooks), len(p.Groups))
	}
	for _, g := range p.Groups {
		groups := doc.Hooks[g.Event]
		if len(groups) != 1 {
			t.Fatalf("%s: %d groups", g.Event, len(groups))
		}
		m, has := groups[0]["matcher"]
		if has != g.HasMatcher || (has && m != g.Matcher) {
			t.Errorf("%s: matcher %v (present %v), want %q (present %v)", g.Event, m, has, g.Matcher, g.HasMatcher)
		}
		hooks := groups[0]["hooks"].([]any)
		hook := hooks[0].(map[string]any)
		if hook["type"] != "command" || hook["command"] != state.HookCommand(g.Report) || hook["timeout"] != float64(p.Spec.Timeout) {
			t.Errorf("%s: hook %v", g.Event, hook)
		}
	}
	for _, banned := range []string{"MessageDisplay", "PreToolUse", "idle_prompt"} {
		if strings.Contains(text, banned) {
			t.Errorf("installed hooks mention %s", banned)
		}
	}
}

func TestMappingsFollowTheIssue(t *testing.T) {
	want := map[string]map[string]string{
		"claude": {"UserPromptSubmit": "working", "PostToolUse": "working", "PostToolUseFailure": "working",
			"PermissionRequest": "blocked", "Notification[permission_prompt|elicitation_dialog]": "blocked",
			"Stop": "done", "StopFailure": "done", "SessionEnd": "idle"},
		"codex": {"UserPromptSubmit": "working", "PostToolUse": "working", "PermissionRequest": "blocked:permission",
			"Stop": "done", "SessionEnd": "idle"},
		"opencode": {"session.status[busy]": "working", "permission.asked": "blocked:permission",
			"permission.replied": "working", "session.idle": "done"},
		"pi":     {"agent_start": "working", "agent_end": "done"},
		"gemini": {"BeforeAgent": "working", "Notification[ToolPermission]": "blocked:permission", "AfterTool": "working", "AfterAgent": "done"},
	}
	for engine, events := range want {
		got := map[string]string{}
		for _, g := range plan(t, engine).Groups {
			key := g.Event
			if g.Matcher != "" {
				key += "[" + g.Matcher + "]"
			}
			got[key] = g.Report
		}
		if !reflect.DeepEqual(got, events) {
			t.Errorf("%s:\n got %v\nwant %v", engine, got, events)
		}
	}
}

// The tracker maps Claude's payloads through the same spec the hooks come from.
func TestClaudePayloadsToStates(t *testing.T) {
	table := state.Load("")
	cases := []struct{ report, payload, want string }{
		{"blocked", `{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion"}`, "blocked:question"},
		{"blocked", `{"hook_event_name":"PermissionRequest","tool_name":"Bash"}`, "blocked:permission"},
		{"blocked", `{"hook_event_name":"Notification","notification_type":"permission_prompt"}`, "blocked:permission"},
		{"blocked", `{"hook_event_name":"Notification","notification_type":"elicitation_dialog"}`, "blocked:question"},
		{"done", `{"hook_event_name":"Stop","last_assistant_message":"hi"}`, "done"},
	}
	for _, c := range cases {
		tr := table.NewTracker("claude", nil)
		st, kind, _ := strings.Cut(c.report, ":")
		f, err := tr.Report(state.HookReport{State: state.State(st), Kind: state.Kind(kind), Payload: json.RawMessage(c.payload)})
		tr.Close()
		if err != nil || state.Format(f.State, f.Kind) != c.want || f.Authority != state.Hook {
			t.Errorf("%s %s → %s by %s (%v), want %s by hook", c.report, c.payload, state.Format(f.State, f.Kind), f.Authority, err, c.want)
		}
	}
}

// Every hook command: POSIX sh (dash), silent, exit 0, a no-op outside the herd, the payload
// passed on stdin, "${MOSH_HERD_BIN:-mosh}".
func TestHookCommandContract(t *testing.T) {
	dir := t.TempDir()
	logf := filepath.Join(dir, "log")
	fake := filepath.Join(dir, "fake-mosh")
	// The stand-in logs its argv and stdin, prints to both streams and fails: none of it may
	// leak out of the hook.
	script := "#!/bin/sh\nprintf '%s|' \"$@\" >> " + logf + "\ncat >> " + logf + "\necho >> " + logf + "\necho noise; echo noise >&2; exit 7\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	shells := []string{"/bin/sh"}
	if p, err := exec.LookPath("dash"); err == nil {
		shells = append(shells, p)
	}
	for _, sh := range shells {
		for _, report := range []string{"working", "blocked", "blocked:permission", "done", "idle"} {
			command := state.HookCommand(report)
			if !strings.Contains(command, state.HookMarker) {
				t.Fatalf("command lacks the marker: %s", command)
			}
			run := func(env ...string) (string, int) {
				cmd := exec.Command(sh, "-c", command)
				cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
				cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop","last_assistant_message":"hi"}`)
				out, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				return string(out), code
			}
			os.Remove(logf)
			if out, code := run("MOSH_HERD_BIN=" + fake); out != "" || code != 0 {
				t.Fatalf("%s outside the herd: %q exit %d", sh, out, code)
			}
			if _, err := os.Stat(logf); !os.IsNotExist(err) {
				t.Fatalf("%s: the report ran without MOSH_HERD_NAME", sh)
			}
			if out, code := run("MOSH_HERD_NAME=m1", "MOSH_HERD_BIN="+fake); out != "" || code != 0 {
				t.Fatalf("%s in the herd: %q exit %d", sh, out, code)
			}
			logged, _ := os.ReadFile(logf)
			want := "herd|report|m1|" + report + "|--payload|-|" + `{"hook_event_name":"Stop","last_assistant_message":"hi"}` + "\n"
			if string(logged) != want {
				t.Fatalf("%s: report ran as %q, want %q", sh, logged, want)
			}
			// No mosh at all (neither MOSH_HERD_BIN nor on PATH): still silent, still 0.
			if out, code := run("MOSH_HERD_NAME=m1"); out != "" || code != 0 {
				t.Fatalf("%s without mosh: %q exit %d", sh, out, code)
			}
		}
	}
}

// The real report command gives up at once when no daemon runs (a hook must never hang).
func TestReportWithoutDaemonIsQuickAndSilent(t *testing.T) {
	h := newHK(t)
	cmd := exec.Command("/bin/sh", "-c", state.HookCommand("done"))
	cmd.Env = append(h.env, "MOSH_HERD_NAME=m1", "MOSH_HERD_BIN="+bins.mosh)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a deadlock guard, not a timing assertion
		cmd.Process.Kill()
		t.Fatal("the report hung with no daemon")
	}
	if err != nil || len(out) != 0 {
		t.Fatalf("no daemon: %v %q", err, out)
	}
	if _, err := os.Stat(h.path("herd/mosh.sock")); err == nil {
		t.Fatal("a hook report started a daemon")
	}
}

const userClaudeSettings = `{
  "model": "opus",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "audit.sh",
            "timeout": 5
          }
        ],
        "x-note": "kept"
      }
    ]
  },
  "permissions": {
    "allow": [
      "Bash(ls)"
    ]
  },
  "zeta": 1
}
`

func TestInstallKeepsTheUsersSettings(t *testing.T) {
	h := newHK(t)
	h.write(".claude/settings.json", userClaudeSettings, 0o640)
	h.change(0, "install", "claude")
	text := h.read(".claude/settings.json")
	if h.mode(".claude/settings.json") != 0o640 {
		t.Errorf("mode changed to %o", h.mode(".claude/settings.json"))
	}
	// Key order kept at every level the user wrote; ours come after theirs.
	order := []string{`"model"`, `"hooks"`, `"Stop"`, `notify-send done`, `herd report`, `"PreToolUse"`, `audit.sh`, `"x-note"`, `"UserPromptSubmit"`, `"permissions"`, `"zeta"`}
	at := 0
	for _, s := range order {
		i := strings.Index(text[at:], s)
		if i < 0 {
			t.Fatalf("%s missing or out of order in:\n%s", s, text)
		}
		at += i
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	stop := doc["hooks"].(map[string]any)["Stop"].([]any)
	if len(stop) != 2 {
		t.Fatalf("Stop groups: %v", stop)
	}
	h.change(0, "remove", "claude")
	if got := h.read(".claude/settings.json"); got != userClaudeSettings {
		t.Fatalf("install + remove changed the file:\n%s", got)
	}
}

func TestOursInTheUsersGroupAndStaleEvents(t *testing.T) {
	h := newHK(t)
	ours := state.HookCommand("done")
	h.write(".claude/settings.json", fmt.Sprintf(`{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "mine.sh"
          },
          {
            "type": "command",
            "command": %q
          }
        ]
      }
    ],
    "MessageDisplay": [
      {
        "hooks": [
          {
            "type": "command",
            "command": %q
          }
        ]
      }
    ]
  }
}
`, ours, ours), 0o600)
	st := h.status("claude")
	if st.Status != "partial" || len(st.Stale) != 1 || st.Stale[0] != "MessageDisplay" {
		t.Fatalf("status with ours in the wrong places: %+v", st)
	}
	h.change(0, "install", "claude")
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(h.read(".claude/settings.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Hooks["MessageDisplay"]; ok {
		t.Error("install keeps our MessageDisplay hook")
	}
	stop := doc.Hooks["Stop"]
	if len(stop) != 2 || len(stop[0].Hooks) != 1 || stop[0].Hooks[0].Command != "mine.sh" || stop[1].Hooks[0].Command != ours {
		t.Fatalf("Stop after install: %+v", stop)
	}
	if st := h.status("claude"); st.Status != "installed" {
		t.Fatalf("after install: %+v", st)
	}
	h.change(0, "remove", "claude")
	if got := h.read(".claude/settings.json"); !strings.Contains(got, "mine.sh") || strings.Contains(got, "herd report") {
		t.Fatalf("after remove:\n%s", got)
	}
}

func TestDryRunPrintsADiffAndWritesNothing(t *testing.T) {
	h := newHK(t)
	h.write(".claude/settings.json", userClaudeSettings, 0o640)
	before, _ := os.Stat(h.path(".claude/settings.json"))
	out, _ := h.expect(0, "herd", "hooks", "install", "claude", "--dry-run")
	if !strings.HasPrefix(out, "--- ~/.claude/settings.json\n+++ ~/.claude/settings.json\n@@ -") {
		t.Fatalf("dry run output:\n%s", out)
	}
	if h.read(".claude/settings.json") != userClaudeSettings {
		t.Fatal("dry run wrote the file")
	}
	after, _ := os.Stat(h.path(".claude/settings.json"))
	if !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("dry run touched the file")
	}
	h.change(0, "install", "claude")
	// The diff is a real one: patch(1) turns the old file into what install writes.
	if _, err := exec.LookPath("patch"); err == nil {
		patched := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(patched, []byte(userClaudeSettings), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("patch", "-s", patched)
		cmd.Stdin = strings.NewReader(out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch: %v %s", err, b)
		}
		if b, _ := os.ReadFile(patched); string(b) != h.read(".claude/settings.json") {
			t.Fatalf("the dry-run diff does not produce the installed file:\n%s", b)
		}
	}
	// A missing file: the diff comes from /dev/null, and nothing is created.
	out, _ = h.expect(0, "herd", "hooks", "install", "pi", "--dry-run")
	if !strings.HasPrefix(out, "--- /dev/null\n+++ ~/.pi/agent/extensions/mosh-herd.ts\n@@ -0,0 +1,") {
		t.Fatalf("dry run of a new file:\n%s", out)
	}
	if _, err := os.Stat(h.path(".pi")); !os.IsNotExist(err) {
		t.Fatal("dry run created ~/.pi")
	}
	// Removal too.
	out, _ = h.expect(0, "herd", "hooks", "remove", "claude", "--dry-run")
	if !strings.Contains(out, "\n-") || strings.Contains(out, "\n+        \"command\": \"[ -n") {
		t.Fatalf("dry-run remove:\n%s", out)
	}
	if !strings.Contains(h.read(".claude/settings.json"), "herd report") {
		t.Fatal("dry-run remove wrote the file")
	}
	h.expect(1, "herd", "hooks", "status", "--dry-run")
}

func TestUnparseableFileIsRefused(t *testing.T) {
	h := newHK(t)
	bad := "{\n  \"model\": \"opus\",\n  \"hooks\": {,\n}\n"
	h.write(".claude/settings.json", bad, 0o644)
	h.write(".codex/hooks.json", "", 0o644) // empty counts as {}
	_, errs := h.expect(1, "herd", "hooks", "install", "claude")
	if !strings.Contains(errs, "~/.claude/settings.json is not valid JSON (line 3, column 13:") ||
		!strings.Contains(errs, "fix it or move it aside, then re-run") {
		t.Fatalf("refusal: %q", errs)
	}
	if h.read(".claude/settings.json") != bad {
		t.Fatal("the unparseable file was written")
	}
	entries, _ := os.ReadDir(h.path(".claude"))
	if len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
	// With all: the other engines are still installed, and the exit is still 1.
	res := h.change(1, "install", "all")
	for _, r := range res {
		switch r.Engine {
		case "claude":
			if r.OK {
				t.Errorf("claude: %+v", r)
			}
		case "codex":
			if !r.OK || r.Result != "updated" {
				t.Errorf("codex: %+v", r)
			}
		default:
			if r.Result != "skipped" { // their directories do not exist
				t.Errorf("%s: %+v", r.Engine, r)
			}
		}
	}
	if st := h.status("claude"); st.Status != "invalid" || !strings.Contains(st.Fix, "not valid JSON") {
		t.Fatalf("status of the broken file: %+v", st)
	}
	h.expect(1, "herd", "hooks", "remove", "claude")
	for _, notObject := range []string{"[1, 2]", `{"hooks": [1]}`, `{"hooks": {"Stop": {}}}`} {
		h.write(".claude/settings.json", notObject, 0o644)
		_, errs := h.expect(1, "herd", "hooks", "install", "claude")
		if !strings.Contains(errs, "fix it") {
			t.Errorf("%s: %q", notObject, errs)
		}
		if h.read(".claude/settings.json") != notObject {
			t.Errorf("%s was written", notObject)
		}
	}
}

func TestForeignPluginFileIsLeftAlone(t *testing.T) {
	h := newHK(t)
	rel := engineFiles["opencode"]
	h.write(rel, "export const Mine = async () => ({})\n", 0o644)
	_, errs := h.expect(1, "herd", "hooks", "install", "opencode")
	if !strings.Contains(errs, "was not written by mosh — move it aside") {
		t.Fatalf("refusal: %q", errs)
	}
	if res := h.change(0, "remove", "opencode"); res[0].Result != "absent" {
		t.Fatalf("remove of a foreign file: %+v", res)
	}
	if h.read(rel) != "export const Mine = async () => ({})\n" {
		t.Fatal("the foreign plugin was touched")
	}
	// An outdated file of ours is partial and updated in place, keeping its mode.
	h.write(rel, state.FileMarker+" old version\n", 0o640)
	if st := h.status("opencode"); st.Status != "partial" {
		t.Fatalf("old plugin: %+v", st)
	}
	if res := h.change(0, "install", "opencode"); res[0].Result != "updated" {
		t.Fatalf("update: %+v", res)
	}
	if h.mode(rel) != 0o640 {
		t.Fatalf("mode %o", h.mode(rel))
	}
}

func TestUsageErrors(t *testing.T) {
	h := newHK(t)
	for _, args := range [][]string{{}, {"instal"}, {"install", "claude", "extra"}, {"install", "aider"}, {"status", "nosuch"}} {
		_, errs := h.expect(1, append([]string{"herd", "hooks"}, args...)...)
		if !strings.Contains(errs, "mosh herd hooks:") {
			t.Errorf("%v: %q", args, errs)
		}
	}
	// Aliases work.
	if res := h.change(0, "install", "cc"); res[0].Engine != "claude" {
		t.Fatalf("alias: %+v", res)
	}
}

func TestCodexTrust(t *testing.T) {
	h := newHK(t)
	userConfig := "model = \"gpt\"\n\n[projects.\"/x\"]\ntrust_level = \"trusted\"\n"
	h.write(".codex/config.toml", userConfig, 0o640)
	h.change(0, "install", "codex")
	cfg := h.read(".codex/config.toml")
	hooksPath := h.path(".codex/hooks.json")
	p := plan(t, "codex")
	for _, g := range p.Groups {
		table := fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = %q\n", hooksPath+":"+snake(g.Event)+":0:0", g.TrustHash)
		if !strings.Contains(cfg, table) {
			t.Fatalf("config.toml lacks\n%s\nin\n%s", table, cfg)
		}
	}
	if !strings.HasPrefix(cfg, userConfig) || h.mode(".codex/config.toml") != 0o640 {
		t.Fatalf("the user's config.toml changed:\n%s", cfg)
	}
	if st := h.status("codex"); st.Status != "installed" {
		t.Fatalf("trusted: %+v", st)
	}

	// A hash recorded for another version of the hook: codex would ask again.
	stale := strings.Replace(cfg, p.Groups[0].TrustHash, "sha256:"+strings.Repeat("0", 64), 1)
	h.write(".codex/config.toml", stale, 0o640)
	st := h.status("codex")
	if st.Status != "awaiting trust" || st.Events[0].Trust != "modified" || !strings.Contains(st.Fix, `"2. Trust all and continue"`) || !strings.Contains(st.Fix, "/hooks") {
		t.Fatalf("stale hash: %+v", st)
	}
	h.change(0, "install", "codex") // brings it up to date
	if h.read(".codex/config.toml") != cfg {
		t.Fatalf("re-trust:\n%s", h.read(".codex/config.toml"))
	}

	// The user disabled one of ours: rejected, and install leaves that decision alone.
	disabled := cfg + "enabled = false\n" // the last table is SessionEnd's
	h.write(".codex/config.toml", disabled, 0o640)
	if st := h.status("codex"); st.Status != "rejected" || !strings.Contains(st.Fix, "/hooks") {
		t.Fatalf("disabled: %+v", st)
	}
	h.change(0, "install", "codex")
	if h.read(".codex/config.toml") != disabled {
		t.Fatal("install re-enabled a hook the user disabled")
	}

	// remove takes the trust out with the hooks: the user's config comes back byte for byte.
	h.write(".codex/config.toml", cfg, 0o640)
	h.change(0, "remove", "codex")
	if got := h.read(".codex/config.toml"); got != userConfig {
		t.Fatalf("after remove:\n%s", got)
	}

	// A key written in a form this reader does not edit is left to Codex's own review.
	h.write(".codex/config.toml", "[hooks.state]\n\""+hooksPath+":stop:0:0\" = { trusted_hash = \"x\" }\n", 0o600)
	res := h.change(0, "install", "codex")
	if !strings.Contains(res[0].Trust, "Trust all and continue") {
		t.Fatalf("unreadable trust form: %+v", res)
	}
	if st := h.status("codex"); st.Status != "awaiting trust" {
		t.Fatalf("status: %+v", st)
	}
}

func snake(event string) string {
	return strings.ToLower(regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(event, "${1}_${2}"))
}

// With a real Codex at hand (MOSH_CODEX_BIN, or the conformance cache), Codex itself lists the
// installed hooks as trusted.
func TestCodexItselfTrustsTheInstalledHooks(t *testing.T) {
	bin := os.Getenv("MOSH_CODEX_BIN")
	if bin == "" {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, ".cache/mosh-engines/_openai_codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("no codex binary (set MOSH_CODEX_BIN)")
	}
	h := newHK(t)
	h.change(0, "install", "codex")
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"mosh-test","version":"0"}}}
{"jsonrpc":"2.0","method":"initialized"}
{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":[` + fmt.Sprintf("%q", h.home) + `]}}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Env = append(h.env, "CODEX_HOME="+h.path(".codex"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	if _, err := stdin.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(stdout)
	for {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []struct {
						Key, Command, TrustStatus, CurrentHash string
					} `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
		}
		if err := dec.Decode(&msg); err != nil {
			t.Fatalf("codex app-server: %v", err)
		}
		if msg.ID != 2 {
			continue
		}
		ours := 0
		for _, d := range msg.Result.Data {
			for _, hk := range d.Hooks {
				if strings.Contains(hk.Command, state.HookMarker) {
					ours++
					if hk.TrustStatus != "trusted" {
						t.Errorf("%s: %s (codex hash %s)", hk.Key, hk.TrustStatus, hk.CurrentHash)
					}
				}
			}
		}
		if ours != len(plan(t, "codex").Groups) {
			t.Fatalf("codex lists %d of our hooks", ours)
		}
		return
	}
}

// ---- end to end: the fake engine, a herd member, reporting through the installed hooks ----

func TestEndToEndHooksReportThroughTheHerd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a herd daemon")
	}
	// The control: the same turn without hooks is read from the screen.
	t.Run("without-hooks", func(t *testing.T) {
		h := newHK(t)
		h.env = append(h.env, "MOSH_HERD_BIN="+bins.mosh, "FAKEENGINE_TURN=300ms", "FAKEENGINE_IDLE_NOTIFY=0", "FAKEENGINE_NOTIFY_AFTER=0")
		t.Cleanup(func() { h.run("herd", "daemon", "stop", "--yes") })
		h.expect(0, "herd", "run", "--name", "fe", "--engine", "claude", "--", bins.fakeengine)
		h.expect(0, "herd", "wait", "fe", "--state", "idle", "--timeout", "30s")
		h.expect(0, "herd", "prompt", "fe", "hello", "--wait", "--state", "done", "--timeout", "30s")
		if ex := h.explain("fe"); ex.Authority != "screen" || ex.Detail.Hook != nil {
			t.Fatalf("no hooks installed, yet: %+v", ex)
		}
	})
	for _, style := range []string{"claude", "codex"} {
		t.Run(style, func(t *testing.T) {
			h := newHK(t)
			h.env = append(h.env, "MOSH_HERD_BIN="+bins.mosh, "FAKEENGINE_TURN=300ms", "FAKEENGINE_IDLE_NOTIFY=0", "FAKEENGINE_NOTIFY_AFTER=0")
			t.Cleanup(func() { h.run("herd", "daemon", "stop", "--yes") })
			h.expect(0, "herd", "hooks", "install", style)
			h.expect(0, "herd", "run", "--name", "fe", "--engine", style, "--", bins.fakeengine, "--style", style)
			h.expect(0, "herd", "wait", "fe", "--state", "idle", "--timeout", "30s")

			h.expect(0, "herd", "prompt", "fe", "hello from the hooks", "--wait", "--state", "done", "--timeout", "30s")
			ex := h.explain("fe")
			if ex.State != "done" || ex.Authority != "hook" || ex.Detail.Hook == nil || ex.Detail.Hook.Event != "Stop" {
				t.Fatalf("after a turn: %+v", ex)
			}
			var stop struct {
				Last string `json:"last_assistant_message"`
			}
			if err := json.Unmarshal(ex.Detail.Hook.Payload, &stop); err != nil || stop.Last != "hello from the hooks" {
				t.Fatalf("Stop payload: %v %s", err, ex.Detail.Hook.Payload)
			}

			h.expect(0, "herd", "prompt", "fe", "perm please", "--wait", "--state", "blocked", "--timeout", "30s")
			ex = h.explain("fe")
			if ex.State != "blocked" || ex.BlockedOn != "permission" || ex.Authority != "hook" || ex.Detail.Hook.Event != "PermissionRequest" {
				t.Fatalf("permission: %+v", ex)
			}
			h.expect(0, "herd", "send-keys", "fe", "1")
			h.expect(0, "herd", "wait", "fe", "--state", "done", "--timeout", "30s")
			if ex = h.explain("fe"); ex.Authority != "hook" || ex.Detail.Hook.Event != "Stop" {
				t.Fatalf("after approving: %+v", ex)
			}
			if style == "claude" {
				h.expect(0, "herd", "prompt", "fe", "ask me", "--wait", "--state", "blocked", "--timeout", "30s")
				ex = h.explain("fe")
				if ex.BlockedOn != "question" || ex.Authority != "hook" {
					t.Fatalf("question: %+v", ex)
				}
			}
		})
	}
}

type explainOut struct {
	State     string `json:"state"`
	BlockedOn string `json:"blockedOn"`
	Authority string `json:"authority"`
	Decided   string `json:"decided"`
	Detail    struct {
		Hook *struct {
			State   string          `json:"state"`
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		} `json:"hook"`
	} `json:"detail"`
}

func (h *hk) explain(name string) explainOut {
	h.t.Helper()
	out, _ := h.expect(0, "herd", "explain", name, "--json")
	var ex explainOut
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		h.t.Fatalf("explain --json: %v\n%s", err, out)
	}
	return ex
}

// ---- property test: random user settings, through the script itself --------------------------

// runHooks runs hooks.mosh in-process with the real builtins, as `mosh herd hooks` does.
func runHooks(t *testing.T, homeDir string, args ...string) (string, error) {
	t.Helper()
	src, err := fs.ReadFile(Verbs, "hooks.mosh")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": homeDir, "MOSH_HOME": filepath.Join(homeDir, ".mosh")}
	flags := map[string]any{"dry-run": false, "json": true}
	cfg := builtins.Config{Args: args, Env: env, Flags: flags, Stdout: &out, Stderr: &errb}
	err = runtime.Run(context.Background(), runtime.Script{Name: "scripts/hooks.mosh", Source: src}, runtime.Options{
		Args: args, Env: env, Stdout: &out, Stderr: &errb,
		Install: func(vu runtime.VU) error { return builtins.Install(vu, cfg) },
	})
	if err != nil {
		return out.String(), fmt.Errorf("%w (exit %d): %s", err, exitcode.Of(err), errb.String())
	}
	return out.String(), nil
}

// ordered is a JSON value whose objects keep their key order, rendered exactly as
// JSON.stringify(v, null, 2) renders it.
type ordered struct {
	keys []string
	vals []any
}

func render(v any, indent string) string {
	switch x := v.(type) {
	case *ordered:
		if len(x.keys) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{\n")
		for i, k := range x.keys {
			kb, _ := json.Marshal(k)
			b.WriteString(indent + "  " + string(kb) + ": " + render(x.vals[i], indent+"  "))
			if i < len(x.keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		return b.String() + indent + "}"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		var b strings.Builder
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(indent + "  " + render(e, indent+"  "))
			if i < len(x)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		return b.String() + indent + "]"
	case string:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x)
		return strings.TrimSuffix(buf.String(), "\n")
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

type gen struct {
	r      *rand.Rand
	events []string
}

func (g *gen) word() string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-"
	n := 1 + g.r.IntN(8)
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[g.r.IntN(len(letters))]
	}
	return "k" + string(b) // never an integer-like key (JS would move it first)
}

func (g *gen) text() string {
	pool := []string{"", "plain", `quote " and \ slash`, "tab\tnewline\n", "ünïcode ✓", "<>&", "$HOME && rm -rf /tmp/x", "herd report other"}
	return pool[g.r.IntN(len(pool))]
}

func (g *gen) scalar() any {
	switch g.r.IntN(5) {
	case 0:
		return g.r.IntN(2000) - 1000
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return nil
	case 3:
		return float64(g.r.IntN(100)) + 0.5
	}
	return g.text()
}

func (g *gen) value(depth int) any {
	if depth > 2 || g.r.IntN(3) > 0 {
		return g.scalar()
	}
	if g.r.IntN(2) == 0 {
		o := &ordered{}
		for range g.r.IntN(4) {
			o.add(g.word(), g.value(depth+1))
		}
		return o
	}
	var a []any
	for range g.r.IntN(4) {
		a = append(a, g.value(depth+1))
	}
	if a == nil {
		a = []any{}
	}
	return a
}

func (o *ordered) add(k string, v any) {
	for _, have := range o.keys {
		if have == k {
			return
		}
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (g *gen) foreignHook() any {
	h := &ordered{}
	h.add("type", "command")
	h.add("command", "user-"+g.word()+" "+g.text())
	if g.r.IntN(2) == 0 {
		h.add("timeout", g.r.IntN(60))
	}
	if g.r.IntN(4) == 0 {
		h.add(g.word(), g.value(1))
	}
	return h
}

func (g *gen) group() any {
	grp := &ordered{}
	if g.r.IntN(2) == 0 {
		grp.add("matcher", []string{"", "Bash", "Edit|Write", "*"}[g.r.IntN(4)])
	}
	var hooks []any
	for range g.r.IntN(3) + 1 {
		hooks = append(hooks, g.foreignHook())
	}
	if g.r.IntN(5) == 0 {
		grp.add("x-"+g.word(), g.value(1))
	}
	grp.add("hooks", hooks)
	return grp
}

// settings makes random user settings. Not generated: an empty "hooks" object or an empty list
// under an event the plan installs — after install + remove those read as absent (documented).
func (g *gen) settings(withHooks bool) *ordered {
	doc := &ordered{}
	n := g.r.IntN(4)
	hooksAt := g.r.IntN(n + 1)
	for i := 0; i <= n; i++ {
		if i == hooksAt && withHooks {
			hooks := &ordered{}
			for range 1 + g.r.IntN(5) {
				ev := g.events[g.r.IntN(len(g.events))]
				var groups []any
				for range 1 + g.r.IntN(3) {
					groups = append(groups, g.group())
				}
				hooks.add(ev, groups)
			}
			doc.add("hooks", hooks)
			continue
		}
		if i < n {
			doc.add(g.word(), g.value(0))
		}
	}
	return doc
}

func TestPropertyInstallRemoveRoundTrip(t *testing.T) {
	iterations := 100
	if testing.Short() {
		iterations = 25
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	for _, engine := range []string{"claude", "codex", "gemini"} {
		p := plan(t, engine)
		events := []string{"PreToolUse", "MessageDisplay", "SessionStart", "Custom"}
		for _, gr := range p.Groups {
			events = append(events, gr.Event)
		}
		g := &gen{r: r, events: events}
		rel := engineFiles[engine]
		for i := range iterations {
			homeDir := t.TempDir()
			path := filepath.Join(homeDir, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			orig := render(g.settings(r.IntN(4) > 0), "") + "\n"
			if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			fail := func(what string, args ...any) {
				t.Helper()
				t.Fatalf("%s #%d (seed %d): %s\noriginal:\n%s", engine, i, seed, fmt.Sprintf(what, args...), orig)
			}
			if _, err := runHooks(t, homeDir, "install", engine); err != nil {
				fail("install: %v", err)
			}
			once, _ := os.ReadFile(path)
			if _, err := runHooks(t, homeDir, "install", engine); err != nil {
				fail("second install: %v", err)
			}
			twice, _ := os.ReadFile(path)
			if !bytes.Equal(once, twice) {
				fail("install twice differs from once:\n%s\n---\n%s", once, twice)
			}
			checkMerged(t, p, orig, string(once), fail)
			if _, err := runHooks(t, homeDir, "remove", engine); err != nil {
				fail("remove: %v", err)
			}
			back, _ := os.ReadFile(path)
			if string(back) != orig {
				fail("install + remove changed the file:\n%s", back)
			}
		}
	}
}

// checkMerged: the installed file holds the original (as a subsequence of every list and
// object), plus exactly one group of ours per planned event.
func checkMerged(t *testing.T, p state.HookPlan, orig, installed string, fail func(string, ...any)) {
	t.Helper()
	var before, after map[string]any
	if err := json.Unmarshal([]byte(orig), &before); err != nil {
		fail("original: %v", err)
	}
	if err := json.Unmarshal([]byte(installed), &after); err != nil {
		fail("installed file is not JSON: %v", err)
	}
	for k, v := range before {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(after[k], v) {
			fail("key %s changed", k)
		}
	}
	hooks, _ := after["hooks"].(map[string]any)
	for _, g := range p.Groups {
		var mine int
		for _, grp := range hooks[g.Event].([]any) {
			for _, h := range grp.(map[string]any)["hooks"].([]any) {
				if strings.Contains(h.(map[string]any)["command"].(string), state.HookMarker) {
					mine++
				}
			}
		}
		if mine != 1 {
			fail("%s has %d hooks of ours", g.Event, mine)
		}
	}
	if bh, ok := before["hooks"].(map[string]any); ok {
		for ev, groups := range bh {
			got := hooks[ev].([]any)
			if !reflect.DeepEqual(got[:len(groups.([]any))], groups) {
				fail("the user's %s groups changed", ev)
			}
		}
	}
}

// Ours sprinkled into random settings (own groups, inside the user's groups, new events) are
// all taken out by remove, and nothing else is.
func TestPropertyRemoveTakesOnlyOurs(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	p := plan(t, "claude")
	g := &gen{r: r, events: []string{"Stop", "PreToolUse", "Notification", "UserPromptSubmit", "Custom"}}
	n := 100
	if testing.Short() {
		n = 20
	}
	for i := range n {
		user := g.settings(true)
		orig := render(user, "") + "\n"
		ourHook := func() any {
			h := &ordered{}
			h.add("type", "command")
			h.add("command", p.Groups[r.IntN(len(p.Groups))].Command)
			return h
		}
		hooks := user.vals[indexOf(user.keys, "hooks")].(*ordered)
		for range 1 + r.IntN(4) {
			switch r.IntN(3) {
			case 0: // our own group in an existing event
				k := r.IntN(len(hooks.keys))
				grp := &ordered{}
				grp.add("hooks", []any{ourHook()})
				list := hooks.vals[k].([]any)
				at := r.IntN(len(list) + 1)
				hooks.vals[k] = append(list[:at:at], append([]any{grp}, list[at:]...)...)
			case 1: // inside one of the user's groups
				list := hooks.vals[r.IntN(len(hooks.keys))].([]any)
				grp := list[r.IntN(len(list))].(*ordered)
				hi := indexOf(grp.keys, "hooks")
				hs := grp.vals[hi].([]any)
				at := r.IntN(len(hs) + 1)
				grp.vals[hi] = append(hs[:at:at], append([]any{ourHook()}, hs[at:]...)...)
			case 2: // an event of its own
				grp := &ordered{}
				grp.add("hooks", []any{ourHook()})
				hooks.add("Only"+g.word(), []any{grp})
			}
		}
		homeDir := t.TempDir()
		path := filepath.Join(homeDir, ".claude", "settings.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(render(user, "")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := runHooks(t, homeDir, "remove", "claude"); err != nil {
			t.Fatalf("#%d (seed %d): %v", i, seed, err)
		}
		if back, _ := os.ReadFile(path); string(back) != orig {
			t.Fatalf("#%d (seed %d): remove left\n%s\nwant\n%s", i, seed, back, orig)
		}
	}
}

func indexOf(keys []string, k string) int {
	for i, have := range keys {
		if have == k {
			return i
		}
	}
	return -1
}

// setPath replaces the PATH of the hk's runs.
func (h *hk) setPath(path string) {
	for i, kv := range h.env {
		if strings.HasPrefix(kv, "PATH=") {
			h.env[i] = "PATH=" + path
			return
		}
	}
	h.env = append(h.env, "PATH="+path)
}

// `hooks install` with no mosh on PATH (the Quick start's ./bin/mosh) says so and what it means:
// members get MOSH_HERD_BIN from the daemon, so their hooks report, as long as this binary stays
// where it is; with a mosh on PATH it says nothing of the kind. --json carries the same.
func TestInstallSaysWhenMoshIsNotOnPath(t *testing.T) {
	self, err := filepath.EvalSymlinks(bins.mosh)
	if err != nil {
		t.Fatal(err)
	}
	h := newHK(t)
	h.setPath("/usr/bin:/bin")
	out, errs := h.expect(0, "herd", "hooks", "install", "claude")
	for _, want := range []string{"no `mosh` on PATH", "MOSH_HERD_BIN", self, "ln -s " + self} {
		if !strings.Contains(errs, want) {
			t.Errorf("install without mosh on PATH: stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "✓ claude") {
		t.Errorf("install: stdout %q", out)
	}
	jout, _ := h.expect(0, "herd", "hooks", "install", "codex", "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(jout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("--json: %v %s", err, jout)
	}
	if w, _ := rows[0]["warning"].(string); !strings.Contains(w, "no `mosh` on PATH") {
		t.Errorf("--json row without the PATH warning: %v", rows[0])
	}

	h2 := newHK(t)
	bin := h2.path("bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bins.mosh, filepath.Join(bin, "mosh")); err != nil {
		t.Fatal(err)
	}
	h2.setPath(bin + ":/usr/bin:/bin")
	_, errs = h2.expect(0, "herd", "hooks", "install", "claude")
	if strings.Contains(errs, "on PATH") {
		t.Errorf("install with mosh on PATH warns: %s", errs)
	}
}
