package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// askerScript: an idle prompt; after each line a [y/n] question (blocked:permission for the
// shared screen rules); after the answer the prompt again.
const askerScript = `stty -echo; printf 'ready> '; while read l; do printf '\033[H\033[2Jgot:%s\nAllow? [y/n] ' "$l"; read a; printf '\033[H\033[2Janswer:%s\nready> ' "$a"; done`

// asker is /bin/sh under a name the engines table does not know, so the shared rules (which see
// [y/n] questions as blocked) classify it.
func asker(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "asker")
	if err := os.Symlink("/bin/sh", p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHerdTaskVerbs(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "tk", "--", asker(t), "-c", askerScript)
	e.ok("wait", "tk", "--state", "idle")

	var pr herd.PromptResult
	if err := json.Unmarshal([]byte(e.ok("herd", "prompt", "tk", "port the routes", "--json")), &pr); err != nil || pr.Task == "" {
		t.Fatalf("prompt --json: %+v %v", pr, err)
	}
	e.ok("wait", "tk", "--state", "blocked")
	e.ok("herd", "send-keys", "tk", "y", "Enter")
	var wr herd.WaitResult
	if err := json.Unmarshal([]byte(e.ok("wait", "tk", "--state", "idle", "--json")), &wr); err != nil {
		t.Fatal(err)
	}
	if len(wr.TasksEnded) != 1 || wr.TasksEnded[0] != pr.Task {
		t.Fatalf("wait --json names the task it saw end: %+v", wr)
	}

	// tasks: JSON, and tab-separated rows with fixed columns off a terminal.
	var ts []herd.Task
	if err := json.Unmarshal([]byte(e.ok("herd", "tasks", "tk", "--json")), &ts); err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].ID != pr.Task || ts[0].Text != "port the routes" || ts[0].State != herd.StateIdle || ts[0].Open {
		t.Fatalf("tasks --json: %+v", ts)
	}
	row := strings.Split(strings.TrimSpace(e.ok("herd", "tasks")), "\t")
	if len(row) != 6 || row[0] != pr.Task || row[2] != "tk" || row[3] != "idle" || row[5] != "port the routes" {
		t.Fatalf("tasks TSV row: %q", row)
	}
	if _, err := time.Parse(time.RFC3339, row[1]); err != nil {
		t.Fatalf("tasks TSV time %q: %v", row[1], err)
	}
	if out := e.ok("herd", "tasks", "tk", "--state", "open"); out != "" {
		t.Fatalf("no open task: %q", out)
	}
	if out := e.ok("herd", "tasks", "--since", "1h", "--limit", "5", "--json"); !strings.Contains(out, pr.Task) {
		t.Fatalf("tasks --since 1h: %s", out)
	}
	if out := e.ok("herd", "tasks", "--since", "2099-01-01T00:00:00Z", "--json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("tasks since the future: %s", out)
	}
	e.expect(1, "herd", "tasks", "--since", "last tuesday")
	e.expect(1, "herd", "tasks", "--state", "finished")
	e.expect(3, "herd", "tasks", "nobody")

	// task: JSON with transitions and artifact; the plain form ends with the answer.
	var task herd.Task
	if err := json.Unmarshal([]byte(e.ok("herd", "task", pr.Task, "--json")), &task); err != nil {
		t.Fatal(err)
	}
	blocked := false
	for _, tr := range task.Transitions {
		blocked = blocked || (tr.State == herd.StateBlocked && tr.BlockedOn == "permission")
	}
	if !blocked || task.Artifact == nil || !strings.Contains(task.Artifact.Text, "answer:y") {
		t.Fatalf("task --json: %+v", task)
	}
	plain := e.ok("herd", "task", pr.Task)
	if !strings.Contains(plain, "id\t"+pr.Task) || !strings.Contains(plain, "blocked:permission") ||
		!strings.Contains(plain, "artifact\tscreen") || !strings.Contains(plain, "answer:y") || strings.Contains(plain, "\x1b[") {
		t.Fatalf("task (off a terminal):\n%s", plain)
	}
	_, errs := e.expect(3, "herd", "task", "t-999")
	if !strings.Contains(errs, "no task t-999") || !strings.Contains(errs, "mosh herd tasks") {
		t.Fatalf("unknown id: %q", errs)
	}
	e.expect(1, "herd", "task", "12")

	// log and stats.
	var lg herd.LogResult
	if err := json.Unmarshal([]byte(e.ok("herd", "log", "tk", "--json")), &lg); err != nil || len(lg.Transitions) < 3 {
		t.Fatalf("log --json: %+v %v", lg, err)
	}
	if out := e.ok("herd", "log", "tk", "--since", "1h"); !strings.Contains(out, "blocked:permission\t") || !strings.Contains(out, pr.Task) {
		t.Fatalf("log TSV:\n%s", out)
	}
	e.expect(3, "herd", "log", "nobody")
	var st herd.StatsResult
	if err := json.Unmarshal([]byte(e.ok("herd", "stats", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Total == nil || st.Total.Tasks != 1 || len(st.Members) != 1 || st.Members[0].Name != "tk" || st.Members[0].BlockedSpells != 1 {
		t.Fatalf("stats --json: %+v", st)
	}
	if out := e.ok("herd", "stats", "tk"); !strings.HasPrefix(out, "tk\t1\t") {
		t.Fatalf("stats TSV: %q", out)
	}

	// The script builtins: herdPrompt returns the task, herdTask/herdTasks read it back; failures
	// are null / [], misuse throws with the usage.
	out := e.ok("-e", `
const r = await herdPrompt("tk", "second job");
await herdWait("tk", {states: ["blocked"]});
await herdSendKeys("tk", "n", "Enter");
await herdWait("tk", {states: ["idle"]});
const t = await herdTask(r.task);
const all = await herdTasks("tk");
console.log(JSON.stringify({ok: r.ok, same: t.id === r.task, text: t.text, n: all.length, last: all[all.length-1].id === r.task,
  answer: t.artifact.text.includes("answer:n"), missing: await herdTask("t-999"), none: await herdTasks("nobody")}));
`)
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	want := `{"answer":true,"last":true,"missing":null,"n":2,"none":[],"ok":true,"same":true,"text":"second job"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("builtins: %s\nwant %s", b, want)
	}
	_, errs = e.expect(6, "-e", `await herdTask()`)
	if !strings.Contains(errs, "herdTask(id)") {
		t.Fatalf("misuse names the usage: %q", errs)
	}
}

// On a terminal: headers, human durations, the human-latency label.
func TestTaskTablesOnATerminal(t *testing.T) {
	var out bytes.Buffer
	h := &herdCLI{stdout: &out, stderr: &out, stdoutTTY: true, getenv: func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}}
	now := time.Now().UnixMilli()
	ts := []herd.Task{{ID: "t-1", Member: "api", Text: "port the\nroutes", SubmittedMs: now - 65_000, State: "done", DurationMs: 61_000},
		{ID: "t-2", Member: "api", Text: "next", SubmittedMs: now - 1000, State: "blocked", BlockedOn: "question", Open: true, DurationMs: 1000}}
	if err := h.writeTasks(ts, false); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"ID", "SUBMITTED", "DURATION", `"port the routes"`, "1m01s", "blocked:question …", "1 still open"} {
		if !strings.Contains(s, want) {
			t.Fatalf("tasks table lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "MEMBER") {
		t.Fatalf("one member's tasks need no member column:\n%s", s)
	}
	out.Reset()
	st := &herd.StatsResult{Members: []herd.MemberStats{{Name: "api", Tasks: 3, MedianDurationMs: 90_000,
		TotalsMs: map[string]int64{"working": 3_600_000, "blocked": 600_000}, HumanLatencyMs: 600_000, BlockedSpells: 2}}}
	if err := h.writeStats(st); err != nil {
		t.Fatal(err)
	}
	s = out.String()
	for _, want := range []string{"WAITING ON YOU", "1h00m", "10m00s", "1m30s", "waiting on you: 10m00s over 2 blocked spell(s)"} {
		if !strings.Contains(s, want) {
			t.Fatalf("stats table lacks %q:\n%s", want, s)
		}
	}
	// The herd: each member's waiting-on-you time and the herd's sum.
	out.Reset()
	web := herd.MemberStats{Name: "web", TotalsMs: map[string]int64{"blocked": 120_000}, HumanLatencyMs: 120_000, BlockedSpells: 1}
	total := herd.MemberStats{TotalsMs: map[string]int64{"blocked": 720_000}, HumanLatencyMs: 720_000, BlockedSpells: 3}
	st = &herd.StatsResult{Members: []herd.MemberStats{st.Members[0], web}, Total: &total}
	if err := h.writeStats(st); err != nil {
		t.Fatal(err)
	}
	s = out.String()
	for _, want := range []string{"(herd)", "waiting on you: 12m00s over 3 blocked spell(s) (api 10m00s, web 2m00s)"} {
		if !strings.Contains(s, want) {
			t.Fatalf("herd stats lack %q:\n%s", want, s)
		}
	}
}

func TestParseSinceAndDurations(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"2h":                   now.Add(-2 * time.Hour),
		"90":                   now.Add(-90 * time.Second),
		"2026-04-30T09:00:00Z": time.Date(2026, 4, 30, 9, 0, 0, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	if got, err := parseSince("2026-04-30", now); err != nil || got.Day() != 30 {
		t.Errorf("date: %v %v", got, err)
	}
	for _, bad := range []string{"yesterday", "-5m"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
	for ms, want := range map[int64]string{850: "850ms", 42_000: "42s", 252_000: "4m12s", 11_100_000: "3h05m", 190_800_000: "2d05h"} {
		if got := fmtDur(ms); got != want {
			t.Errorf("fmtDur(%d) = %q, want %q", ms, got, want)
		}
	}
}

// Issue 11: tasks' text is printed escaped off a terminal too, so control characters that
// reached the ledger (an ESC, a Ctrl-C) never drive the reader's terminal.
func TestTaskTextControlCharactersPrintEscaped(t *testing.T) {
	now := time.Now().UnixMilli()
	evil := "stop\x03 \x1b[2Jnow\x07"
	ts := []herd.Task{{ID: "t-1", Member: "api", Text: evil, SubmittedMs: now - 1000, State: "done", DurationMs: 900,
		Note: "note\x1b]0;title\x07", Artifact: &herd.TaskArtifact{Text: "line1\n\x1b[31mred\x1b[0m\tok", Chars: 20, Source: "screen"},
		Transitions: []herd.TaskTransition{{AtMs: now - 900, State: "done", Note: "\x1b[1mbold"}}}}
	lr := &herd.LogResult{Name: "api", Transitions: []herd.TaskTransition{{AtMs: now - 900, State: "done", Note: "x\x1by", Task: "t-1"}}}
	for _, tty := range []bool{false, true} {
		var out bytes.Buffer
		h := &herdCLI{stdout: &out, stderr: &out, stdoutTTY: tty, getenv: func(k string) string {
			if k == "NO_COLOR" {
				return "1"
			}
			return ""
		}}
		if err := h.writeTasks(ts, true); err != nil {
			t.Fatal(err)
		}
		task := ts[0]
		if err := h.writeTask(&task); err != nil {
			t.Fatal(err)
		}
		if err := h.writeLog(lr); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		for _, c := range []string{"\x03", "\x1b", "\x07"} {
			if strings.Contains(s, c) {
				t.Errorf("tty=%v: a raw %q reached the output:\n%q", tty, c, s)
			}
		}
		for _, want := range []string{`\x03`, `\x1b[2J`, `\x1b]0;title\x07`, `\x1b[31mred`, `x\x1by`} {
			if !strings.Contains(s, want) {
				t.Errorf("tty=%v: output lacks the escaped %q:\n%s", tty, want, s)
			}
		}
		if !strings.Contains(s, "line1\n") || !strings.Contains(s, "\tok") {
			t.Errorf("tty=%v: the answer lost its lines or tabs:\n%q", tty, s)
		}
	}
}
