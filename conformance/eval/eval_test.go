package evalconf

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"

	"github.com/mosh-dev/mosh/conformance/engines"
	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
)

// report is `mosh herd eval --json`, schemaVersion 1 (README, "mosh herd eval").
type report struct {
	SchemaVersion int             `json:"schemaVersion"`
	Dataset       string          `json:"dataset"`
	Threshold     float64         `json:"threshold"`
	Judge         string          `json:"judge"`
	StartedAt     json.RawMessage `json:"startedAt"`
	DurationMs    float64         `json:"durationMs"`
	Pass          bool            `json:"pass"`
	Engines       []engineSummary `json:"engines"`
	Rows          []row           `json:"rows"`
}

type engineSummary struct {
	Engine     string  `json:"engine"`
	Score      float64 `json:"score"`
	Passed     int     `json:"passed"`
	Failed     int     `json:"failed"`
	Blocked    int     `json:"blocked"`
	Timeouts   int     `json:"timeouts"`
	Errors     int     `json:"errors"`
	Unscorable int     `json:"unscorable"`
	Total      int     `json:"total"`
	MedianMs   float64 `json:"medianMs"`
	Pass       bool    `json:"pass"`
}

type row struct {
	ID         string            `json:"id"`
	Engine     string            `json:"engine"`
	Attempt    int               `json:"attempt"`
	Outcome    string            `json:"outcome"`
	Score      float64           `json:"score"`
	Pass       bool              `json:"pass"`
	Answer     string            `json:"answer"`
	TaskID     string            `json:"taskId"`
	Member     string            `json:"member"`
	ExitCode   *int              `json:"exitCode"`
	Question   string            `json:"question"`
	DurationMs float64           `json:"durationMs"`
	Results    []assertionResult `json:"results"`
	Flaky      bool              `json:"flaky"`
	Error      string            `json:"error"`
}

// assertionResult is one assertion's outcome in a row.
type assertionResult struct {
	Type   string  `json:"type"`
	Value  any     `json:"value"`
	Pass   bool    `json:"pass"`
	Weight float64 `json:"weight"`
	Detail string  `json:"detail"`
}

// rowIDs are testdata/rows.jsonl's rows, in order.
var rowIDs = []string{"capital", "arith", "pong", "perm", "write"}

// agentRowIDs are testdata/agent.jsonl's.
var agentRowIDs = []string{"perm", "write"}

// expectOutcome is the outcome row id must have on engine e; agent: e runs with its autonomous
// flag (--agent). The fake model answers capital right and arith wrong; perm and write call the
// shell tool, which Claude Code, Codex and OpenCode ask about first (blocked) unless --agent,
// and pi runs at once.
func expectOutcome(e *engines.Engine, id string, agent bool) string {
	switch id {
	case "arith":
		return "fail"
	case "perm", "write":
		if e.HasPermissionPrompt && !agent {
			return "blocked"
		}
	}
	return "pass"
}

// expectAnswer is the engine's final message for a row that ran to its end: the fake model's
// text exactly, never screen chrome around it.
func expectAnswer(id string) string {
	switch id {
	case "capital":
		return fakeapi.EchoPrefix + "Paris"
	case "arith":
		return fakeapi.EchoPrefix + "41"
	case "pong":
		return fakeapi.PlainText
	}
	return fakeapi.FinalText // perm, write: the answer after the tool ran
}

// member is one `mosh ps --json` row, as far as these tests read it.
type member struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Alive bool   `json:"alive"`
}

// TestEvalRealEngines: one `mosh herd eval` over the engines named in MOSH_EVAL_ENGINES and a remote
// member, then one with --agent; see doc.go for the dataset and what each engine must score.
func TestEvalRealEngines(t *testing.T) {
	list := engineList(t)
	started := time.Now()
	w := newWorld(t, list, true)
	w.warm()
	t.Logf("set-up (build, configure, hooks, two herds, remote member %s, warm-up): %s", w.remoteEngine.Name, time.Since(started).Round(time.Second))

	t.Run("dataset", func(t *testing.T) {
		w := w.on(t)
		specs := []string{}
		want := map[string]map[string]string{}
		for _, e := range w.engines {
			specs = append(specs, e.Name)
			want[e.Name] = map[string]string{}
			for _, id := range rowIDs {
				want[e.Name][id] = expectOutcome(e, id, false)
			}
		}
		// The remote member runs its engine without --agent (herd serve hides autonomous
		// members): pi runs tools without asking; an engine that asks stays blocked on perm, and
		// the write row after it finds it blocked still: blocked with that question, its prompt
		// not typed.
		specs = append(specs, "@far")
		want["@far"] = map[string]string{}
		for _, id := range rowIDs {
			want["@far"][id] = expectOutcome(w.remoteEngine, id, false)
		}
		began := time.Now()
		w.evalAndCheck("rows", "testdata/rows.jsonl", specs, false, 0.5, want)
		t.Logf("eval of %d rows × %d engines (remote @far included): %s", len(rowIDs), len(specs), time.Since(began).Round(time.Second))

		// @far's rows went over A2A to the other herd: its member api got every prompt, in order.
		var tasks []struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(w.must(w.remote, nil, "herd", "tasks", "api", "--json")), &tasks); err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, tk := range tasks {
			texts = append(texts, tk.Text)
		}
		prompts := datasetPrompts(t, "testdata/rows.jsonl")
		if w.remoteEngine.HasPermissionPrompt {
			prompts = prompts[:len(prompts)-1] // write: not typed into a member blocked on perm
		}
		if got, want := strings.Join(texts, "\n"), strings.Join(prompts, "\n"); got != want {
			t.Errorf("the remote herd's member api was given:\n%s\nwant the dataset's prompts in order:\n%s", got, want)
		}
	})

	t.Run("agent", func(t *testing.T) {
		w := w.on(t)
		specs := []string{}
		want := map[string]map[string]string{}
		for _, e := range w.engines {
			specs = append(specs, e.Name)
			want[e.Name] = map[string]string{}
			for _, id := range agentRowIDs {
				want[e.Name][id] = expectOutcome(e, id, true)
			}
		}
		began := time.Now()
		w.evalAndCheck("agent", "testdata/agent.jsonl", specs, true, 1, want)
		t.Logf("eval --agent of %d rows × %d engines: %s", len(agentRowIDs), len(specs), time.Since(began).Round(time.Second))
	})
	t.Logf("whole suite: %s", time.Since(started).Round(time.Second))
}

// datasetPrompts reads a jsonl dataset's prompts, in order.
func datasetPrompts(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c.Prompt)
	}
	return out
}

// on is the same world reporting to t (a subtest fails its own test).
func (w *world) on(t *testing.T) *world {
	c := *w
	c.t = t
	return &c
}

// warm starts OpenCode once and waits for its prompt, so its first start in the fresh HOME (an npm
// install into ~/.config/opencode) is not raced by rows starting at once. The remote member's
// start did it already when it runs OpenCode.
func (w *world) warm() {
	for _, e := range w.engines {
		if e.Name != "opencode" || w.remoteEngine == e {
			continue
		}
		w.must(w.local, nil, append([]string{"herd", "start", e.Name, "--name", "warm-" + e.Name}, dashArgs(w.args[e.Name])...)...)
		w.must(w.local, nil, "herd", "wait", "warm-"+e.Name, "--state", "idle", "--timeout", fmt.Sprint(int((e.StartTimeout + time.Minute).Seconds())))
		w.must(w.local, nil, "herd", "kill", "warm-"+e.Name)
	}
}

// evalAndCheck runs one eval in the project (a git repo, --isolated) and checks its exit code,
// its JSON report against want (engine spec → row id → outcome), the JUnit file through a real
// JUnit consumer, that no row's worktree is left and that no row's member is left running.
func (w *world) evalAndCheck(label, dataset string, specs []string, agent bool, threshold float64, want map[string]map[string]string) {
	t := w.t
	ds, err := filepath.Abs(dataset)
	if err != nil {
		t.Fatal(err)
	}
	junitFile := filepath.Join(w.out, label+".junit.xml")
	args := []string{"herd", "eval", "--dataset", ds, "--engines", strings.Join(specs, ","),
		"--threshold", fmt.Sprint(threshold), "--concurrency", "4", "--timeout", "4m", "--blocked-grace", "5s",
		"--isolated", "--json", "--junit", junitFile}
	if agent {
		args = append(args, "--agent")
	}
	args = append(args, w.engineArgs(agent)...)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res := w.run(ctx, w.local, nil, args...)
	_ = os.WriteFile(filepath.Join(w.out, label+".json"), []byte(res.stdout), 0o644)
	_ = os.WriteFile(filepath.Join(w.out, label+".stderr"), []byte(res.stderr), 0o644)

	var rep report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("the --json report is not JSON (%v):\n%s", err, res)
	}
	if rep.SchemaVersion != 1 {
		t.Errorf("schemaVersion %d, want 1", rep.SchemaVersion)
	}
	if rep.Threshold != threshold {
		t.Errorf("threshold %v, want %v", rep.Threshold, threshold)
	}

	// Rows: one per (engine, row), each with the outcome the fake model scripted.
	got := map[string]map[string]row{}
	for _, r := range rep.Rows {
		if got[r.Engine] == nil {
			got[r.Engine] = map[string]row{}
		}
		if _, dup := got[r.Engine][r.ID]; dup {
			t.Errorf("%s row %s reported twice", r.Engine, r.ID)
		}
		got[r.Engine][r.ID] = r
	}
	wantExit, anyBelow := 0, false
	for _, spec := range specs {
		passed, failed, blocked := 0, 0, 0
		for id, outcome := range want[spec] {
			r, ok := got[spec][id]
			if !ok {
				t.Errorf("%s: no row %s in the report", spec, id)
				continue
			}
			w.checkRow(spec, r, outcome)
			switch outcome {
			case "pass":
				passed++
			case "fail":
				failed++
			case "blocked":
				blocked++
			}
		}
		total := len(want[spec])
		score := float64(passed) / float64(total)
		s, ok := summary(rep, spec)
		if !ok {
			t.Errorf("%s: no engine summary in the report", spec)
			continue
		}
		wantSum := engineSummary{Engine: spec, Score: s.Score, Passed: passed, Failed: failed, Blocked: blocked, Total: total,
			MedianMs: s.MedianMs, Pass: score >= threshold}
		if s != wantSum || math.Abs(s.Score-score) > 1e-9 {
			t.Errorf("%s: summary %+v, want score %.3f and %+v", spec, s, score, wantSum)
		}
		if score < threshold {
			anyBelow = true
		}
	}
	if anyBelow {
		wantExit = 4
	}
	if res.code != wantExit || rep.Pass != !anyBelow {
		t.Errorf("exit %d with pass=%t, want exit %d (some engine below %v: %t)\nstderr:\n%s", res.code, rep.Pass, wantExit, threshold, anyBelow, res.stderr)
	}
	if len(rep.Engines) != len(specs) {
		t.Errorf("%d engine summaries, want %d (%v)", len(rep.Engines), len(specs), specs)
	}

	w.checkJUnit(junitFile, rep, specs)

	// --isolated without --keep: every row's worktree is gone.
	if wt := strings.Count(w.git(w.local.Project, "worktree", "list", "--porcelain"), "worktree "); wt != 1 {
		t.Errorf("after the eval the project has %d worktrees, want 1 (every row's removed):\n%s", wt, w.git(w.local.Project, "worktree", "list"))
	}
	// No row's member is left running: only the remote "far" is alive.
	var ps []member
	if err := json.Unmarshal([]byte(w.must(w.local, nil, "ps", "--json")), &ps); err != nil {
		t.Fatal(err)
	}
	for _, m := range ps {
		if m.Alive && m.Name != "far" {
			t.Errorf("member %s (%s) is still running after the eval: rows' members are killed unless --keep", m.Name, m.Kind)
		}
	}
	if t.Failed() {
		t.Logf("eval stderr:\n%s", clip(res.stderr, 20000))
	}
}

func summary(rep report, spec string) (engineSummary, bool) {
	for _, s := range rep.Engines {
		if s.Engine == spec {
			return s, true
		}
	}
	return engineSummary{}, false
}

// checkRow checks one row against its scripted outcome.
func (w *world) checkRow(spec string, r row, outcome string) {
	t := w.t
	if r.Outcome != outcome {
		t.Errorf("%s row %s: outcome %s, want %s (answer %q, question %q, results %+v)", spec, r.ID, r.Outcome, outcome, clip(r.Answer, 300), r.Question, r.Results)
		return
	}
	if r.TaskID == "" && !(outcome == "blocked" && strings.HasPrefix(spec, "@") && strings.HasPrefix(r.Error, "not typed")) {
		t.Errorf("%s row %s: no taskId (mosh herd task t-N must show what happened)", spec, r.ID)
	}
	if r.Attempt != 1 || r.Flaky {
		t.Errorf("%s row %s: attempt %d flaky %t, want attempt 1 and not flaky without --repeat", spec, r.ID, r.Attempt, r.Flaky)
	}
	switch outcome {
	case "pass", "fail":
		if got, want := strings.TrimSpace(r.Answer), expectAnswer(r.ID); got != want {
			t.Errorf("%s row %s: answer %q, want the engine's final message %q exactly", spec, r.ID, clip(got, 300), want)
		}
		if r.Pass != (outcome == "pass") {
			t.Errorf("%s row %s: pass %t with outcome %s", spec, r.ID, r.Pass, outcome)
		}
		for _, a := range r.Results {
			if a.Pass != (outcome == "pass") {
				t.Errorf("%s row %s: assertion %s %v passed=%t (%s), want %t", spec, r.ID, a.Type, a.Value, a.Pass, a.Detail, outcome == "pass")
			}
		}
		if r.ID == "write" && !hasType(r.Results, "command") {
			t.Errorf("%s row write: no command assertion among %+v", spec, r.Results)
		}
	case "blocked":
		if strings.TrimSpace(r.Question) == "" {
			t.Errorf("%s row %s: blocked without its question text", spec, r.ID)
		}
		if r.Pass {
			t.Errorf("%s row %s: a blocked row passes", spec, r.ID)
		}
	}
}

func hasType(rs []assertionResult, typ string) bool {
	for _, a := range rs {
		if a.Type == typ {
			return true
		}
	}
	return false
}

// checkJUnit reads the --junit file with go-junit (a real consumer) and compares it with the
// report: one suite per engine spec, one test per row named by its id, passed/failed as
// reported, blocked/timeout/failed/error as errors.
func (w *world) checkJUnit(path string, rep report, specs []string) {
	t := w.t
	suites, err := junit.IngestFile(path)
	if err != nil {
		b, _ := os.ReadFile(path)
		t.Errorf("go-junit cannot read %s: %v\n%s", path, err, clip(string(b), 4000))
		return
	}
	byName := map[string]junit.Suite{}
	var names []string
	for _, s := range suites {
		byName[s.Name] = s
		names = append(names, s.Name)
	}
	sort.Strings(names)
	if len(suites) != len(specs) {
		t.Errorf("JUnit has suites %v, want one per engine %v", names, specs)
	}
	for _, spec := range specs {
		s, ok := byName[spec]
		if !ok {
			t.Errorf("JUnit has no testsuite %q (suites %v)", spec, names)
			continue
		}
		sum, _ := summary(rep, spec)
		wantErr := sum.Blocked + sum.Timeouts + sum.Errors
		tot := s.Totals
		if tot.Tests != sum.Total || tot.Passed != sum.Passed || tot.Failed != sum.Failed || tot.Error != wantErr || tot.Skipped != sum.Unscorable {
			t.Errorf("JUnit suite %s totals %+v, want tests %d passed %d failed %d error %d skipped %d (the report's)",
				spec, tot, sum.Total, sum.Passed, sum.Failed, wantErr, sum.Unscorable)
		}
		for _, tc := range s.Tests {
			r, ok := rowOf(rep, spec, tc.Name)
			if !ok {
				t.Errorf("JUnit suite %s: testcase %q is no row of the report", spec, tc.Name)
				continue
			}
			if tc.Classname != spec {
				t.Errorf("JUnit %s/%s: classname %q, want %q", spec, tc.Name, tc.Classname, spec)
			}
			wantStatus := map[string]junit.Status{"pass": junit.StatusPassed, "fail": junit.StatusFailed, "unscorable": junit.StatusSkipped}[r.Outcome]
			if wantStatus == "" {
				wantStatus = junit.StatusError
			}
			if tc.Status != wantStatus {
				t.Errorf("JUnit %s/%s: status %s, want %s for outcome %s", spec, tc.Name, tc.Status, wantStatus, r.Outcome)
			}
			if (r.Outcome == "pass" || r.Outcome == "fail") && !strings.Contains(tc.SystemOut, expectAnswer(r.ID)) {
				t.Errorf("JUnit %s/%s: system-out %q does not hold the answer's tail %q", spec, tc.Name, clip(tc.SystemOut, 300), expectAnswer(r.ID))
			}
		}
	}
}

func rowOf(rep report, spec, id string) (row, bool) {
	for _, r := range rep.Rows {
		if r.Engine == spec && r.ID == id {
			return r, true
		}
	}
	return row{}, false
}

// TestFreshMemberTakesFirstPrompt is the eval's premise on its own, for each engine: a fresh
// member that reads idle takes the prompt typed then. Start it, `wait --state idle`, `prompt
// --wait`, and the task's artifact must be the engine's own final message (from its hook). When
// the daemon reads idle before the engine takes input, the prompt is lost, its task closes idle
// with no answer, and every eval row on that engine scores fail.
func TestFreshMemberTakesFirstPrompt(t *testing.T) {
	list := engineList(t)
	w := newWorld(t, list, false)
	const prompt = "Answer with the word after the marker. " + fakeapi.TriggerEcho + " ready"
	for _, e := range list {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			w := w.on(t)
			name := "first-" + e.Name
			w.must(w.local, nil, append([]string{"herd", "start", e.Name, "--name", name}, dashArgs(w.args[e.Name])...)...)
			defer w.run(context.Background(), w.local, nil, "herd", "kill", name)
			w.must(w.local, nil, "herd", "wait", name, "--state", "idle", "--timeout", fmt.Sprint(int((e.StartTimeout + time.Minute).Seconds())))
			var p struct {
				Task    string `json:"task"`
				Outcome string `json:"outcome"`
				State   string `json:"state"`
			}
			out := w.must(w.local, nil, "herd", "prompt", name, prompt, "--wait", "--state", "done,idle,blocked", "--timeout", "3m", "--json")
			if err := json.Unmarshal([]byte(out), &p); err != nil || p.Task == "" {
				t.Fatalf("mosh herd prompt --wait --json printed %q (%v): want the task id", out, err)
			}
			var task struct {
				State    string `json:"state"`
				Artifact *struct {
					Text   string `json:"text"`
					Source string `json:"source"`
				} `json:"artifact"`
			}
			out = w.must(w.local, nil, "herd", "task", p.Task, "--json")
			if err := json.Unmarshal([]byte(out), &task); err != nil {
				t.Fatal(err)
			}
			want := fakeapi.EchoPrefix + "ready"
			if task.Artifact == nil || task.Artifact.Source != "hook" || strings.TrimSpace(task.Artifact.Text) != want {
				served := false
				for _, r := range w.fake.Requests() {
					served = served || strings.Contains(r.Prompt, prompt)
				}
				t.Errorf("%s: the first prompt after `wait --state idle` ended %s/%s (task %s) with artifact %s; want the hook's final message %q (the fake model was asked: %t)\n%s",
					e.Name, p.Outcome, task.State, p.Task, clip(fmt.Sprintf("%+v", task.Artifact), 400), want, served, out)
			}
		})
	}
}
