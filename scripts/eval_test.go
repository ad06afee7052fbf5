package scripts

// Tests of `mosh herd eval` (eval.mosh) through the real binary: a real daemon in a temporary
// MOSH_HOME, the fake engine standing in for claude on PATH with the herd's hooks installed, so
// every answer is the Stop hook's last_assistant_message (the fake engine answers a prompt with
// its first line: "the answer is 4" is right for expect "4", "hello there" wrong for "world").

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

// evalReport is the --json report (schemaVersion 1), as a consumer reads it.
type evalReport struct {
	SchemaVersion int      `json:"schemaVersion"`
	Dataset       string   `json:"dataset"`
	Threshold     float64  `json:"threshold"`
	Judge         string   `json:"judge"`
	StartedAt     string   `json:"startedAt"`
	DurationMs    *int64   `json:"durationMs"`
	Pass          bool     `json:"pass"`
	Engines       []evalEn `json:"engines"`
	Rows          []evalRw `json:"rows"`
}

type evalEn struct {
	Engine     string   `json:"engine"`
	Score      *float64 `json:"score"`
	Passed     int      `json:"passed"`
	Failed     int      `json:"failed"`
	Blocked    int      `json:"blocked"`
	Timeouts   int      `json:"timeouts"`
	Errors     int      `json:"errors"`
	Unscorable int      `json:"unscorable"`
	Total      int      `json:"total"`
	MedianMs   *int64   `json:"medianMs"`
	Pass       bool     `json:"pass"`
}

type evalRw struct {
	ID         string   `json:"id"`
	Engine     string   `json:"engine"`
	Attempt    int      `json:"attempt"`
	Outcome    string   `json:"outcome"`
	Score      *float64 `json:"score"`
	Pass       bool     `json:"pass"`
	Answer     string   `json:"answer"`
	TaskID     *string  `json:"taskId"`
	Member     *string  `json:"member"`
	ExitCode   *int     `json:"exitCode"`
	Question   string   `json:"question"`
	DurationMs *int64   `json:"durationMs"`
	Results    []struct {
		Type   string  `json:"type"`
		Value  string  `json:"value"`
		Pass   bool    `json:"pass"`
		Weight float64 `json:"weight"`
		Detail string  `json:"detail"`
	} `json:"results"`
	Judge *struct {
		Score *float64 `json:"score"`
		Why   string   `json:"why"`
	} `json:"judge"`
	Flaky        bool   `json:"flaky"`
	Worktree     string `json:"worktree"`
	Error        string `json:"error"`
	AnswerSource string `json:"answerSource"`
	Reason       string `json:"reason"`
	Fix          string `json:"fix"`
}

// ev is one hermetic herd for evals.
type ev struct {
	*hk
	bin string // on PATH first: claude (the fake engine), mosh (for the hooks)
	dir string // where mosh runs (the eval's cwd)
}

func newEval(t *testing.T) *ev {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end eval test (runs a daemon and fake engines)")
	}
	t.Parallel() // its own HOME and MOSH_HOME, given to the mosh processes it runs (e.env)
	e := &ev{hk: newHK(t)}
	e.bin = e.path("bin")
	e.dir = e.path("work")
	for _, d := range []string{e.bin, e.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bins.mosh, filepath.Join(e.bin, "mosh")); err != nil {
		t.Fatal(err)
	}
	e.write("bin/claude", fmt.Sprintf("#!/bin/sh\nexec %q \"$@\"\n", bins.fakeengine), 0o755)
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + e.bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	e.env = append(e.env, "FAKEENGINE_TURN=50ms", "FAKEENGINE_TICK=50ms", "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0",
		"FAKEENGINE_SLOW=10m")
	for i := 0; i < len(e.env); i++ { // no CI/NO_COLOR from the outer environment decides the progress style here
		if k, _, _ := strings.Cut(e.env[i], "="); k == "CI" || k == "NO_COLOR" {
			e.env = append(e.env[:i], e.env[i+1:]...)
			i--
		}
	}
	e.expect(0, "herd", "hooks", "install", "claude")
	t.Cleanup(func() { e.run("herd", "daemon", "stop", "--yes") })
	return e
}

// runIn runs mosh in dir.
func (e *ev) runIn(dir string, args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(bins.mosh, args...)
	cmd.Env = e.env
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("mosh %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// eval runs `mosh herd eval ARGS --json` in dir, wants exit code want, and parses the report.
func (e *ev) eval(dir string, want int, args ...string) (evalReport, string) {
	e.t.Helper()
	args = append([]string{"herd", "eval", "--json"}, args...)
	out, errs, code := e.runIn(dir, args...)
	if code != want {
		e.t.Fatalf("mosh %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	var r evalReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.t.Fatalf("the report is not JSON: %v\n%s\nstderr:\n%s", err, out, errs)
	}
	return r, errs
}

func (e *ev) dataset(name, text string) string {
	e.t.Helper()
	e.write("work/"+name, text, 0o644)
	return name
}

func (r evalReport) row(t *testing.T, engine, id string) evalRw {
	t.Helper()
	for _, x := range r.Rows {
		if x.Engine == engine && x.ID == id {
			return x
		}
	}
	t.Fatalf("no row %s/%s in %+v", engine, id, r.Rows)
	return evalRw{}
}

func (r evalReport) engine(t *testing.T, name string) evalEn {
	t.Helper()
	for _, x := range r.Engines {
		if x.Engine == name {
			return x
		}
	}
	t.Fatalf("no engine %s in %+v", name, r.Engines)
	return evalEn{}
}

func (e *ev) members() []string {
	e.t.Helper()
	out, errs, code := e.run("herd", "ps", "--json")
	if code != 0 {
		e.t.Fatalf("herd ps: %d %s", code, errs)
	}
	var ms []struct {
		Name  string `json:"name"`
		Alive bool   `json:"alive"`
	}
	if err := json.Unmarshal([]byte(out), &ms); err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		if m.Alive {
			names = append(names, m.Name)
		}
	}
	return names
}

const fourRows = `{"id":"four","prompt":"the answer is 4","expect":"4"}
{"id":"world","prompt":"hello there","expect":"world"}
{"id":"blue","prompt":"say blue","assert":[{"type":"contains","value":"blue"},{"type":"not-contains","value":"red"}]}
{"id":"json","prompt":"{\"score\": 3}","assert":[{"type":"json-path","path":"score","value":2}]}
`

// The fake engine answers a dataset deterministically: two rows right, two wrong. The report
// has the exact score, each row's answer is the hook's final message (no screen chrome) with its
// task id, the members are gone afterwards, and the threshold decides 0 or 4. The JUnit file
// parses back with the right counts.
func TestEvalScoresADatasetExactly(t *testing.T) {
	e := newEval(t)
	ds := e.dataset("ds.jsonl", fourRows)
	r, errs := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude", "--concurrency", "2", "--junit", "out.xml")
	if r.SchemaVersion != 1 || r.Dataset != ds || r.Threshold != 0.8 || r.Judge != "rules" || r.Pass || r.StartedAt == "" || r.DurationMs == nil {
		t.Fatalf("report head: %+v", r)
	}
	en := r.engine(t, "claude")
	if en.Score == nil || *en.Score != 0.5 || en.Passed != 2 || en.Failed != 2 || en.Total != 4 || en.Errors != 0 || en.Unscorable != 0 || en.Pass || en.MedianMs == nil {
		t.Fatalf("engine summary: %+v", en)
	}
	if len(r.Rows) != 4 {
		t.Fatalf("rows: %+v", r.Rows)
	}
	wantOutcome := map[string]string{"four": "pass", "world": "fail", "blue": "pass", "json": "fail"}
	wantAnswer := map[string]string{"four": "the answer is 4", "world": "hello there", "blue": "say blue", "json": `{"score": 3}`}
	member := regexp.MustCompile(`^eval-[a-z0-9]{4}-claude-[1-4]$`)
	tasks := map[string]bool{}
	for i, row := range r.Rows {
		if row.ID != []string{"four", "world", "blue", "json"}[i] {
			t.Errorf("rows are in dataset order: %d is %s", i, row.ID)
		}
		if row.Outcome != wantOutcome[row.ID] || row.Pass != (row.Outcome == "pass") || row.Attempt != 1 || row.Engine != "claude" {
			t.Errorf("row %s: %+v", row.ID, row)
		}
		if row.Answer != wantAnswer[row.ID] || row.AnswerSource != "hook" {
			t.Errorf("row %s: answer %q from %q, want the engine's final message %q from the hook (never the screen)", row.ID, row.Answer, row.AnswerSource, wantAnswer[row.ID])
		}
		if row.TaskID == nil || !strings.HasPrefix(*row.TaskID, "t-") || tasks[*row.TaskID] {
			t.Errorf("row %s: task id %v", row.ID, row.TaskID)
		} else {
			tasks[*row.TaskID] = true
		}
		if row.Member == nil || !member.MatchString(*row.Member) {
			t.Errorf("row %s: member %v", row.ID, row.Member)
		}
		if row.Score == nil || row.DurationMs == nil || len(row.Results) == 0 {
			t.Errorf("row %s: score, duration, results: %+v", row.ID, row)
		}
	}
	if b := r.row(t, "claude", "json"); b.Results[0].Type != "json-path" || b.Results[0].Detail != "got 3" {
		t.Errorf("json-path result: %+v", b.Results)
	}
	// The task id leads to the task: mosh herd task shows the same answer.
	four := r.row(t, "claude", "four")
	out, _ := e.expect(0, "herd", "task", *four.TaskID, "--json")
	var task struct {
		Member   string `json:"member"`
		Artifact struct {
			Text, Source string
		} `json:"artifact"`
	}
	if err := json.Unmarshal([]byte(out), &task); err != nil || task.Member != *four.Member || task.Artifact.Source != "hook" || task.Artifact.Text != four.Answer {
		t.Fatalf("herd task %s: %+v %v", *four.TaskID, task, err)
	}
	if left := e.members(); len(left) != 0 {
		t.Errorf("the rows' members are killed after their rows: %v", left)
	}
	if !strings.Contains(errs, "eval: 4/4 rows") || !strings.Contains(errs, "UNSCORABLE") || strings.Contains(errs, "\x1b[") {
		t.Errorf("stderr has plain progress lines and the summary table (off a terminal, nothing animated):\n%s", errs)
	}

	// JUnit: one suite for the engine, one case per row, two failures.
	data, err := os.ReadFile(filepath.Join(e.dir, "out.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var ju junitSuites
	if err := xml.Unmarshal(data, &ju); err != nil {
		t.Fatalf("the JUnit file is not XML: %v\n%s", err, data)
	}
	if len(ju.Suites) != 1 || ju.Suites[0].Name != "claude" || ju.Suites[0].Tests != 4 || ju.Suites[0].Failures != 2 || ju.Suites[0].Errors != 0 || len(ju.Suites[0].Cases) != 4 {
		t.Fatalf("JUnit: %+v", ju)
	}
	fails := 0
	for _, c := range ju.Suites[0].Cases {
		if c.Classname != "claude" || c.Name == "" || c.Time == "" {
			t.Errorf("testcase %+v", c)
		}
		if c.Failure != nil {
			fails++
			if c.Failure.Message == "" {
				t.Errorf("a failure has its message: %+v", c)
			}
		}
	}
	if fails != 2 || ju.Suites[0].Cases[0].SystemOut != "the answer is 4" {
		t.Errorf("JUnit cases: %+v", ju.Suites[0].Cases)
	}

	// At threshold 0.5 the same answers pass: exit 0.
	r, _ = e.eval(e.dir, 0, "--dataset", ds, "--engines", "claude", "--threshold", "0.5")
	if !r.Pass || !r.engine(t, "claude").Pass || *r.engine(t, "claude").Score != 0.5 {
		t.Fatalf("threshold 0.5: %+v", r.Engines)
	}
}

type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// A crash, a block and a judge that never answers in shape are outcomes, each counted: the crash
// is failed with the engine's exit code, the block is blocked with its question after the grace,
// a rubric the judge cannot score (garbage twice: exactly one retry) is unscorable and left out of
// the score's denominator, never a silent 0. The JUnit file files them as error, error, skipped.
func TestEvalOutcomesCrashBlockJudge(t *testing.T) {
	e := newEval(t)
	calls := e.path("judge-calls")
	// The judge: pi's headless mode (pi -p PROMPT), a script that answers garbage.
	e.write("bin/pi", fmt.Sprintf("#!/bin/sh\necho call >> %q\necho 'I think it is fine, no JSON here'\n", calls), 0o755)
	ds := e.dataset("ds.jsonl", `{"id":"crash","prompt":"crash 7","expect":"x"}
{"id":"perm","prompt":"perm deploy","expect":"x"}
{"id":"ok","prompt":"fine","expect":"fine"}
{"id":"rubric","prompt":"judge me","rubric":"the answer is polite"}
`)
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude", "--judge", "pi", "--blocked-grace", "500ms", "--concurrency", "4", "--junit", "j.xml")
	crash := r.row(t, "claude", "crash")
	if crash.Outcome != "failed" || crash.ExitCode == nil || *crash.ExitCode != 7 || crash.Pass || crash.Answer != "" || crash.AnswerSource != "none" {
		t.Errorf("crash: %+v", crash)
	}
	perm := r.row(t, "claude", "perm")
	if perm.Outcome != "blocked" || !strings.HasPrefix(perm.Question, "permission") || !strings.Contains(perm.Question, "Do you want to proceed?") {
		t.Errorf("perm: %+v", perm)
	}
	rub := r.row(t, "claude", "rubric")
	if rub.Outcome != "unscorable" || rub.Score != nil || rub.Judge == nil || rub.Judge.Score != nil || !strings.Contains(rub.Judge.Why, "judge") {
		t.Errorf("rubric with a garbage judge: %+v", rub)
	}
	if got, _ := os.ReadFile(calls); strings.Count(string(got), "call") != 2 {
		t.Errorf("the judge is asked twice (one retry), got %q", got)
	}
	en := r.engine(t, "claude")
	// passed 1 of (4 - 1 unscorable).
	if en.Score == nil || *en.Score != 1.0/3 || en.Passed != 1 || en.Blocked != 1 || en.Errors != 1 || en.Unscorable != 1 || en.Total != 4 {
		t.Errorf("engine: %+v", en)
	}
	data, err := os.ReadFile(filepath.Join(e.dir, "j.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var ju junitSuites
	if err := xml.Unmarshal(data, &ju); err != nil {
		t.Fatalf("JUnit: %v\n%s", err, data)
	}
	s := ju.Suites[0]
	if s.Tests != 4 || s.Failures != 0 || s.Errors != 2 || s.Skipped != 1 {
		t.Errorf("JUnit counts: %+v", s)
	}
	for _, c := range s.Cases {
		switch c.Name {
		case "crash", "perm":
			if c.Error == nil || c.Error.Message == "" {
				t.Errorf("%s is an <error>: %+v", c.Name, c)
			}
		case "rubric":
			if c.Skipped == nil {
				t.Errorf("rubric is <skipped>: %+v", c)
			}
		}
	}

	// With --judge rules a rubric-only row is unscorable without asking anyone.
	_ = os.Remove(calls)
	r, _ = e.eval(e.dir, 0, "--dataset", e.dataset("rub.jsonl", `{"id":"r","prompt":"judge me","rubric":"polite"}
{"id":"ok","prompt":"fine","expect":"fine"}
`), "--engines", "claude")
	if r.row(t, "claude", "r").Outcome != "unscorable" || *r.engine(t, "claude").Score != 1 {
		t.Errorf("rules judge: %+v", r)
	}
	if _, err := os.Stat(calls); err == nil {
		t.Errorf("--judge rules asked the judge")
	}
}

// A turn that does not end before --timeout is the timeout outcome, not a hang.
func TestEvalTimeout(t *testing.T) {
	e := newEval(t)
	ds := e.dataset("ds.jsonl", `{"id":"slow","prompt":"a slow one","expect":"x"}`+"\n")
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude", "--timeout", "2s")
	if row := r.row(t, "claude", "slow"); row.Outcome != "timeout" || row.Pass {
		t.Fatalf("slow row: %+v", row)
	}
	if en := r.engine(t, "claude"); en.Timeouts != 1 || *en.Score != 0 {
		t.Fatalf("engine: %+v", en)
	}
	if left := e.members(); len(left) != 0 {
		t.Errorf("a timed-out row's member is killed too: %v", left)
	}
}

// Infrastructure: an engine that is not installed stops the run before the first row: exit 5,
// naming the engine and the fix, a JSON error with --json, and no member started for any engine.
func TestEvalMissingEngineExits5(t *testing.T) {
	e := newEval(t)
	if _, err := exec.LookPath("qwen"); err == nil {
		t.Skip("qwen is installed here")
	}
	ds := e.dataset("ds.jsonl", fourRows)
	out, errs, code := e.runIn(e.dir, "herd", "eval", "--json", "--dataset", ds, "--engines", "claude,qwen")
	var er struct {
		Error struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exitCode"`
		} `json:"error"`
	}
	if code != 5 || json.Unmarshal([]byte(out), &er) != nil || er.Error.ExitCode != 5 || !strings.Contains(er.Error.Message, "qwen is not installed") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.Contains(errs, "qwen is not installed") || !strings.Contains(errs, "install qwen") || strings.Contains(errs, "eval: 1/") {
		t.Errorf("stderr names the engine and the fix, and no row ran:\n%s", errs)
	}
	if out, _, _ := e.run("herd", "tasks", "--json"); strings.Contains(out, "t-") {
		t.Errorf("a row ran before the check: %s", out)
	}
	// Without --json: the same exit code and message, nothing on stdout.
	out, errs, code = e.runIn(e.dir, "herd", "eval", "--dataset", ds, "--engines", "qwen")
	if code != 5 || out != "" || !strings.Contains(errs, "qwen is not installed") {
		t.Errorf("plain: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A member with no engine answer is scored on what its turn printed below the typed prompt
// (answerSource screen), never on the prompt itself; a turn that printed nothing is unscorable
// with the reason and the fix, never a fail; --answers engine refuses screen answers.
func TestEvalScreenAnswersAndUnscorable(t *testing.T) {
	e := newEval(t)
	e.expect(0, "herd", "run", "--name", "ans", "--", "sh", "-c", `while read l; do echo "answer: 4"; done`)
	e.expect(0, "herd", "run", "--name", "mute", "--", "sh", "-c", `while read l; do :; done`)
	ds := e.dataset("ds.jsonl", `{"id":"four","prompt":"what is 2+2","expect":"4"}
{"id":"pong","prompt":"say PONG","expect":"PONG"}
`)
	r, errs := e.eval(e.dir, 4, "--dataset", ds, "--engines", "@ans,@mute")
	four, pong := r.row(t, "@ans", "four"), r.row(t, "@ans", "pong")
	if four.Outcome != "pass" || four.AnswerSource != "screen" || four.Answer != "answer: 4" {
		t.Errorf("@ans four is scored on the screen below the prompt: %+v", four)
	}
	if pong.Outcome != "fail" || pong.AnswerSource != "screen" || pong.Answer != "answer: 4" {
		t.Errorf("@ans pong: %+v", pong)
	}
	for _, id := range []string{"four", "pong"} {
		row := r.row(t, "@mute", id)
		if row.Outcome != "unscorable" || row.AnswerSource != "none" || row.Answer != "" || row.Pass || row.Score != nil {
			t.Errorf("@mute %s: a turn that printed nothing is unscorable, never scored on its prompt: %+v", id, row)
		}
		if !strings.Contains(row.Reason, "no answer") || row.Fix == "" {
			t.Errorf("@mute %s: the reason and the fix: %+v", id, row)
		}
	}
	if en := r.engine(t, "@mute"); en.Unscorable != 2 || en.Score != nil || en.Pass || en.Failed != 0 {
		t.Errorf("@mute summary: %+v", en)
	}
	if !strings.Contains(errs, "@mute: nothing scored") || !strings.Contains(errs, "@mute pong: unscorable — no answer") {
		t.Errorf("stderr says why @mute has no score:\n%s", errs)
	}
	// At a threshold @ans meets, the run still fails: an engine with nothing scored is not a pass.
	r, _ = e.eval(e.dir, 4, "--dataset", ds, "--engines", "@ans,@mute", "--threshold", "0.5")
	if !r.engine(t, "@ans").Pass || r.engine(t, "@mute").Pass || r.Pass {
		t.Errorf("threshold 0.5: %+v", r.Engines)
	}
	r, _ = e.eval(e.dir, 0, "--dataset", ds, "--engines", "@ans", "--threshold", "0.5")
	if !r.Pass {
		t.Errorf("@ans alone at 0.5: %+v", r.Engines)
	}
	// --answers engine: the screen is not an answer.
	r, _ = e.eval(e.dir, 4, "--dataset", ds, "--engines", "@ans", "--answers", "engine")
	if row := r.row(t, "@ans", "four"); row.Outcome != "unscorable" || row.AnswerSource != "screen" || !strings.Contains(row.Reason, "--answers engine") || row.Fix == "" {
		t.Errorf("--answers engine: %+v", row)
	}
	if out, errs, code := e.runIn(e.dir, "herd", "eval", "--dataset", ds, "--engines", "@ans", "--answers", "hooks"); code != 1 || out != "" || !strings.Contains(errs, "--answers takes any or engine") {
		t.Errorf("--answers hooks: exit %d, %q, %q", code, out, errs)
	}
}

// An engine whose hooks are not installed: its rows are scored on the screen below the prompt,
// and --answers engine makes them unscorable naming the fix for that engine.
func TestEvalWithoutHooksNamesTheFix(t *testing.T) {
	e := newEval(t)
	e.expect(0, "herd", "hooks", "remove", "claude")
	// The fake engine answers with the prompt's first line: below the echo, that line is its answer.
	ds := e.dataset("ds.jsonl", `{"id":"four","prompt":"the answer is 4","expect":"4"}`+"\n")
	r, _ := e.eval(e.dir, 0, "--dataset", ds, "--engines", "claude")
	if row := r.row(t, "claude", "four"); row.Outcome != "pass" || row.AnswerSource != "screen" || !strings.Contains(row.Answer, "the answer is 4") {
		t.Errorf("without hooks: %+v", row)
	}
	r, _ = e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude", "--answers", "engine")
	if row := r.row(t, "claude", "four"); row.Outcome != "unscorable" || row.Fix != "mosh herd hooks install claude" {
		t.Errorf("--answers engine without hooks: %+v", row)
	}
}

// An engine that exits during start-up (Claude Code as root with --agent) says why: the row is
// failed with the engine's last screen lines as its reason, the engine's other rows are not
// started, and the run exits 5.
func TestEvalStartupFailureStopsTheEngine(t *testing.T) {
	e := newEval(t)
	e.write("bin/claude", "#!/bin/sh\necho 'Error: this build of claude starts up'\necho '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons'\nexit 1\n", 0o755)
	ds := e.dataset("ds.jsonl", fourRows)
	r, errs := e.eval(e.dir, 5, "--dataset", ds, "--engines", "claude", "--agent")
	first := r.row(t, "claude", "four")
	if first.Outcome != "failed" || first.ExitCode == nil || *first.ExitCode != 1 || !strings.Contains(first.Reason, "cannot be used with root/sudo privileges") || !strings.Contains(first.Reason, "start-up") {
		t.Errorf("the first row says why: %+v", first)
	}
	for _, id := range []string{"world", "blue", "json"} {
		if row := r.row(t, "claude", id); row.Outcome != "error" || row.Member != nil || !strings.Contains(row.Error, "not started") || !strings.Contains(row.Error, "root/sudo") {
			t.Errorf("row %s is not started after the start-up failure: %+v", id, row)
		}
	}
	if !strings.Contains(errs, "claude exited during start-up") || !strings.Contains(errs, "root/sudo privileges") {
		t.Errorf("stderr says why:\n%s", errs)
	}
	if left := e.members(); len(left) != 0 {
		t.Errorf("members left: %v", left)
	}
	// Rows at once: those already starting fail with the reason, the rest are not started.
	r, _ = e.eval(e.dir, 5, "--dataset", ds, "--engines", "claude", "--agent", "--concurrency", "2")
	failed := 0
	for _, row := range r.Rows {
		switch {
		case row.Outcome == "failed" && strings.Contains(row.Reason, "root/sudo"):
			failed++
		case row.Outcome == "error" && strings.Contains(row.Error, "not started"):
		default:
			t.Errorf("--concurrency 2: row %+v", row)
		}
	}
	if failed < 1 || failed > 2 {
		t.Errorf("--concurrency 2: %d rows started and failed, want 1 or 2", failed)
	}
}

// Usage errors exit 1 before anything starts, naming the row or the fix.
func TestEvalUsageErrors(t *testing.T) {
	e := newEval(t)
	e.dataset("dup.jsonl", `{"id":"a","prompt":"x"}`+"\n"+`{"id":"a","prompt":"y"}`+"\n")
	e.dataset("bad.jsonl", `{"id":"a","prompt":"x"}`+"\n"+`{"id": nope}`+"\n")
	e.dataset("noprompt.json", `[{"id":"a","expect":"x"}]`)
	e.dataset("empty.jsonl", "\n")
	e.dataset("ok.jsonl", `{"id":"a","prompt":"x","expect":"x"}`+"\n")
	notRepo, err := os.MkdirTemp("", "evalnorepo")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(notRepo)
	if err := os.WriteFile(filepath.Join(notRepo, "ok.jsonl"), []byte(`{"id":"a","prompt":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir  string
		args []string
		want string
	}{
		{e.dir, []string{"--dataset", "dup.jsonl", "--engines", "claude"}, `dup.jsonl:2: duplicate id "a"`},
		{e.dir, []string{"--dataset", "bad.jsonl", "--engines", "claude"}, "bad.jsonl:2: not valid JSON"},
		{e.dir, []string{"--dataset", "noprompt.json", "--engines", "claude"}, "noprompt.json: case 1: no prompt"},
		{e.dir, []string{"--dataset", "empty.jsonl", "--engines", "claude"}, "empty.jsonl: the dataset has no cases"},
		{e.dir, []string{"--dataset", "missing.jsonl", "--engines", "claude"}, "missing.jsonl: cannot read"},
		{e.dir, []string{"--engines", "claude"}, "--dataset FILE is required"},
		{e.dir, []string{"--dataset", "ok.jsonl"}, "--engines is required"},
		{e.dir, []string{"--dataset", "ok.jsonl", "--engines", "nosuch"}, `unknown engine "nosuch"`},
		{e.dir, []string{"--dataset", "ok.jsonl", "--engines", "claude,claude"}, "lists claude twice"},
		{e.dir, []string{"--dataset", "ok.jsonl", "--engines", "claude", "--threshold", "2"}, "--threshold must be a number from 0 to 1"},
		{e.dir, []string{"--dataset", "ok.jsonl", "--engines", "claude", "--engine-args", "codex=--x"}, "--engine-args names codex, which is not in --engines"},
		{e.dir, []string{"--dataset", "ok.jsonl", "--engines", "claude", "--judge", "nosuch"}, "--judge nosuch: use rules, model"},
		{e.dir, []string{"--dataset", "ok.jsonl", "--engines", "@ghost"}, "@ghost: no member ghost on the roster"},
		{notRepo, []string{"--dataset", "ok.jsonl", "--engines", "claude", "--isolated"}, "is not in a git repository: cd into one"},
	}
	for _, c := range cases {
		args := append([]string{"herd", "eval"}, c.args...)
		out, errs, code := e.runIn(c.dir, args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("mosh %s: exit %d, want 1 with %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, c.want, out, errs)
		}
	}
	// --json puts the error on stdout too.
	out, _, code := e.runIn(e.dir, "herd", "eval", "--json", "--dataset", "dup.jsonl", "--engines", "claude")
	var je struct {
		Error struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exitCode"`
		} `json:"error"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &je) != nil || je.Error.ExitCode != 1 || !strings.Contains(je.Error.Message, "dup.jsonl:2") {
		t.Errorf("--json usage error: %d %q", code, out)
	}
	if left := e.members(); len(left) != 0 {
		t.Errorf("a usage error starts nothing: %v", left)
	}
}

// git runs git in dir for the test.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// --isolated: each row runs in a fresh git worktree; a command assertion checks the file the
// row's turn wrote there (a hook of the fake engine writes it in its cwd as the turn starts), the main checkout
// never sees it, and the worktree is removed afterwards — kept with --keep.
func TestEvalIsolatedCommandAssertion(t *testing.T) {
	e := newEval(t)
	// One more UserPromptSubmit hook, run before the herd's: the turn "writes a file" in the
	// member's directory before it ends.
	settings := e.path(".claude/settings.json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(e.read(".claude/settings.json")), &doc); err != nil {
		t.Fatal(err)
	}
	hooks := doc["hooks"].(map[string]any)
	hooks["UserPromptSubmit"] = append([]any{map[string]any{"hooks": []any{map[string]any{"type": "command",
		"command": `cat > turn.json`}}}}, hooks["UserPromptSubmit"].([]any)...)
	data, _ := json.Marshal(doc)
	if err := os.WriteFile(settings, data, 0o600); err != nil {
		t.Fatal(err)
	}
	repo := e.dir
	git(t, repo, "init", "-q")
	e.write("work/README", "repo\n", 0o644)
	git(t, repo, "add", "README")
	git(t, repo, "commit", "-q", "-m", "one")
	ds := e.dataset("ds.jsonl", `{"id":"wrote","prompt":"write it","assert":[{"type":"command","value":"grep -q 'write it' turn.json && test -f README"}]}
{"id":"absent","prompt":"no file","assert":[{"type":"command","value":"test -f nothing-here"}]}
`)
	r, _ := e.eval(repo, 0, "--dataset", ds, "--engines", "claude", "--isolated", "--threshold", "0.5") // 0.5 >= 0.5
	wrote, absent := r.row(t, "claude", "wrote"), r.row(t, "claude", "absent")
	if wrote.Outcome != "pass" || absent.Outcome != "fail" || wrote.Results[0].Type != "command" || !strings.HasPrefix(absent.Results[0].Detail, "exit 1") {
		t.Fatalf("rows: %+v / %+v", wrote, absent)
	}
	for _, row := range []evalRw{wrote, absent} {
		if row.Worktree == "" || strings.HasPrefix(row.Worktree, repo) {
			t.Fatalf("row %s ran in worktree %q", row.ID, row.Worktree)
		}
		if _, err := os.Stat(row.Worktree); !os.IsNotExist(err) {
			t.Errorf("worktree %s is removed after its row: %v", row.Worktree, err)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "turn.json")); !os.IsNotExist(err) {
		t.Errorf("the main checkout never sees the row's file")
	}
	if wl := git(t, repo, "worktree", "list"); strings.Count(wl, "\n") != 1 {
		t.Errorf("only the main worktree is left:\n%s", wl)
	}

	// --keep keeps the worktree (with the file) and the member.
	r, _ = e.eval(repo, 0, "--dataset", e.dataset("one.jsonl", `{"id":"wrote","prompt":"write it","assert":[{"type":"command","value":"test -f turn.json"}]}`+"\n"),
		"--engines", "claude", "--isolated", "--keep")
	kept := r.row(t, "claude", "wrote")
	if kept.Outcome != "pass" {
		t.Fatalf("kept row: %+v", kept)
	}
	if _, err := os.Stat(filepath.Join(kept.Worktree, "turn.json")); err != nil {
		t.Errorf("--keep keeps the worktree with the row's file: %v", err)
	}
	if left := e.members(); len(left) != 1 || left[0] != *kept.Member {
		t.Errorf("--keep keeps the member: %v", left)
	}
	git(t, repo, "worktree", "remove", "--force", kept.Worktree)
	_ = os.RemoveAll(filepath.Dir(kept.Worktree))
}

// --repeat 3: pass@k, and a row that passes some attempts but not all is flaky. The command
// assertion counts its runs and fails only the second.
func TestEvalRepeatMarksFlaky(t *testing.T) {
	e := newEval(t)
	counter := e.path("count")
	ds := e.dataset("ds.jsonl", fmt.Sprintf(`{"id":"flaky","prompt":"fine","assert":[{"type":"command","value":"n=$(cat %[1]s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s; [ $n -ne 2 ]"}]}
{"id":"steady","prompt":"fine","expect":"fine"}
{"id":"never","prompt":"fine","expect":"nope"}
`, counter))
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude", "--repeat", "3")
	if len(r.Rows) != 9 {
		t.Fatalf("3 rows × 3 attempts: %+v", r.Rows)
	}
	for _, row := range r.Rows {
		wantFlaky := row.ID == "flaky"
		if row.Flaky != wantFlaky {
			t.Errorf("row %s attempt %d: flaky %v", row.ID, row.Attempt, row.Flaky)
		}
		if row.ID == "flaky" && (row.Outcome == "pass") != (row.Attempt != 2) {
			t.Errorf("flaky attempt %d: %s", row.Attempt, row.Outcome)
		}
	}
	// pass@3: flaky and steady pass, never fails: 2 of 3.
	if en := r.engine(t, "claude"); en.Total != 3 || en.Passed != 2 || en.Failed != 1 || *en.Score != 2.0/3 {
		t.Fatalf("engine: %+v", en)
	}
}

// @name rows run in sequence on an existing member, which is never killed; fresh engines run
// beside it in one eval.
func TestEvalExistingMemberInSequence(t *testing.T) {
	e := newEval(t)
	// A turn long enough that the previous turn's done screen is never the whole picture after a
	// prompt (with 1 ms turns the daemon can close a hook engine's task on that screen: see the
	// eval branch's report).
	e.expect(0, "herd", "start", "claude", "--name", "m1", "--", "--turn", "300ms")
	ds := e.dataset("ds.jsonl", fourRows)
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude,@m1", "--concurrency", "4")
	if en := r.engine(t, "@m1"); en.Passed != 2 || en.Failed != 2 || *en.Score != 0.5 {
		t.Fatalf("@m1: %+v", en)
	}
	var prevEnd int64
	for _, id := range []string{"four", "world", "blue", "json"} {
		row := r.row(t, "@m1", id)
		if row.Member == nil || *row.Member != "m1" || row.TaskID == nil {
			t.Fatalf("row %s on @m1: %+v", id, row)
		}
		out, _ := e.expect(0, "herd", "task", *row.TaskID, "--json")
		var task struct {
			Member      string `json:"member"`
			SubmittedMs int64  `json:"submittedMs"`
			EndedMs     int64  `json:"endedMs"`
		}
		if err := json.Unmarshal([]byte(out), &task); err != nil || task.Member != "m1" {
			t.Fatalf("task %s: %v %s", *row.TaskID, err, out)
		}
		if task.SubmittedMs < prevEnd {
			t.Errorf("row %s was typed (%d) before the previous row's turn ended (%d)", id, task.SubmittedMs, prevEnd)
		}
		prevEnd = task.EndedMs
	}
	if left := e.members(); len(left) != 1 || left[0] != "m1" {
		t.Errorf("m1 is never killed, the fresh members are: %v", left)
	}
}

// --dry-run narrates the members with their exact argv (agent flags and --engine-args included)
// and starts nothing: no daemon.
func TestEvalDryRun(t *testing.T) {
	e := newEval(t)
	e.run("herd", "daemon", "stop", "--yes")
	ds := e.dataset("ds.jsonl", fourRows)
	out, errs, code := e.runIn(e.dir, "herd", "eval", "--dry-run", "--json", "--dataset", ds, "--engines", "claude,codex", "--agent",
		"--engine-args", "claude=--model 'big one'", "--engine-args", "cc=--verbose")
	if code != 0 {
		t.Fatalf("dry run: %d\n%s\n%s", code, out, errs)
	}
	var plan struct {
		DryRun  bool `json:"dryRun"`
		Rows    []struct{ ID string }
		Members []struct {
			Engine, Member string
			Argv           []string
			Installed      bool
		}
		NotInstalled []string `json:"notInstalled"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if !plan.DryRun || len(plan.Rows) != 4 || len(plan.Members) != 8 {
		t.Fatalf("plan: %+v", plan)
	}
	got := map[string]string{}
	for _, m := range plan.Members {
		got[m.Engine] = strings.Join(m.Argv, "|")
	}
	if got["claude"] != "claude|--dangerously-skip-permissions|--model|big one|--verbose" {
		t.Errorf("claude argv: %q", got["claude"])
	}
	if !strings.HasPrefix(got["codex"], "codex|") || !strings.Contains(got["codex"], "--dangerously-bypass-approvals-and-sandbox") {
		t.Errorf("codex argv: %q", got["codex"])
	}
	// The dry run and the run agree: an engine that is not installed is named, as the run would.
	if _, err := exec.LookPath("codex"); err != nil {
		for _, m := range plan.Members {
			if m.Installed != (m.Engine == "claude") {
				t.Errorf("member %s (%s): installed %t", m.Member, m.Engine, m.Installed)
			}
		}
		if strings.Join(plan.NotInstalled, ",") != "codex" {
			t.Errorf("notInstalled: %v", plan.NotInstalled)
		}
		_, errs, code = e.runIn(e.dir, "herd", "eval", "--dry-run", "--dataset", ds, "--engines", "claude,codex")
		if code != 0 || !strings.Contains(errs, "codex is not installed") || !strings.Contains(errs, "exit 5") {
			t.Errorf("plain dry run with codex missing: %d\n%s", code, errs)
		}
	}
	if _, err := os.Stat(herd.SocketPath(e.home)); err == nil {
		t.Errorf("a dry run started the daemon")
	}
	_, errs, code = e.runIn(e.dir, "herd", "eval", "--dry-run", "--dataset", ds, "--engines", "claude")
	if code != 0 || !strings.Contains(errs, "would start 4 members") || !strings.Contains(errs, "(approvals not bypassed)") {
		t.Errorf("plain dry run: %d\n%s", code, errs)
	}
}

// A rubric goes to the judge: an engine's headless mode (pi -p, a script here) or the model API
// (--judge model, an OpenAI-compatible fake in this process). The judge's score decides the row
// at the threshold, and its why is reported.
func TestEvalJudgeScoresRubrics(t *testing.T) {
	e := newEval(t)
	e.write("bin/pi", `#!/bin/sh
case "$*" in
*"say please"*) echo 'Here you go: {"score": 0.9, "why": "polite"}' ;;
*) echo '{"score": 0.2, "why": "rude"}' ;;
esac
`, 0o755)
	ds := e.dataset("ds.jsonl", `{"id":"polite","prompt":"say please","rubric":"the answer is polite"}
{"id":"rude","prompt":"go away","rubric":"the answer is polite"}
{"id":"both","prompt":"say please now","expect":"now","rubric":"the answer is polite"}
`)
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude", "--judge", "pi")
	polite, rude, both := r.row(t, "claude", "polite"), r.row(t, "claude", "rude"), r.row(t, "claude", "both")
	if polite.Outcome != "pass" || polite.Judge == nil || *polite.Judge.Score != 0.9 || polite.Judge.Why != "polite" || *polite.Score != 0.9 {
		t.Errorf("polite: %+v %+v", polite, polite.Judge)
	}
	if rude.Outcome != "fail" || *rude.Score != 0.2 || rude.Results[0].Type != "rubric" || rude.Results[0].Detail != "rude" {
		t.Errorf("rude: %+v", rude)
	}
	// expect passes (1) and the rubric scores 0.9: the mean, and a pass (0.9 ≥ 0.8).
	if both.Outcome != "pass" || *both.Score != 0.95 || len(both.Results) != 2 {
		t.Errorf("both: %+v", both)
	}
	if en := r.engine(t, "claude"); *en.Score != 2.0/3 || r.Judge != "pi" {
		t.Errorf("engine: %+v judge %s", en, r.Judge)
	}

	// --judge model: the model API, no engine needed.
	var asked atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		asked.Add(1)
		body, _ := io.ReadAll(req.Body)
		score := 0.1
		if strings.Contains(string(body), "say please") {
			score = 1
		}
		content, _ := json.Marshal(fmt.Sprintf(`{"score": %g, "why": "api"}`, score))
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%s}}]}`, content)
	}))
	defer api.Close()
	e.env = append(e.env, "MOSH_AI_PROVIDER=openai", "OPENAI_BASE_URL="+api.URL, "OPENAI_API_KEY=k", "MOSH_AI_MODEL=m")
	r, _ = e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude", "--judge", "model")
	if p := r.row(t, "claude", "polite"); p.Outcome != "pass" || p.Judge == nil || p.Judge.Why != "api" {
		t.Errorf("model judge: %+v", p)
	}
	if r.row(t, "claude", "rude").Outcome != "fail" || asked.Load() != 3 {
		t.Errorf("model judge asked %d times: %+v", asked.Load(), r.Rows)
	}
}

// Ctrl-C in the middle of a row ends the eval (exit 130) and kills the member it started: the
// members are temporary to the run, however it ends.
func TestEvalInterruptKillsItsMembers(t *testing.T) {
	e := newEval(t)
	e.expect(0, "herd", "ps")                                               // the daemon, up
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failsafe, not a speed claim
	defer cancel()
	cl, err := herd.Connect(ctx, herd.ConnectOptions{Home: e.home, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sub, err := cl.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ds := e.dataset("ds.jsonl", `{"id":"slow","prompt":"a slow one","expect":"x"}`+"\n")
	cmd := exec.Command(bins.mosh, "herd", "eval", "--dataset", ds, "--engines", "claude")
	cmd.Env, cmd.Dir = e.env, e.dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	member := ""
	for member == "" {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("the event stream ended: %v", sub.Err())
			}
			if strings.HasPrefix(ev.Name, "eval-") && ev.Task != "" && ev.State == herd.StateWorking {
				member = ev.Name
			}
		case <-ctx.Done():
			t.Fatalf("no eval member started working\n%s", errb.String())
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("eval after Ctrl-C: %v\n%s", err, errb.String())
	}
	for gone := false; !gone; {
		select {
		case ev := <-sub.Events():
			gone = ev.Name == member && (ev.Type == "removed" || ev.State == herd.StateGone)
		case <-ctx.Done():
			t.Fatalf("%s still runs after the eval was interrupted: %v", member, e.members())
		}
	}
	if left := e.members(); len(left) != 0 {
		t.Fatalf("members left: %v", left)
	}
}

// A daemon that cannot start is infrastructure: exit 5, for fresh engines and @members alike.
func TestEvalDaemonUnreachableExits5(t *testing.T) {
	e := newEval(t)
	e.write("broken/herd", "a file where the herd directory goes\n", 0o644)
	ds := e.dataset("ds.jsonl", fourRows)
	env := append([]string{}, e.env...)
	for i, kv := range env {
		if strings.HasPrefix(kv, "MOSH_HOME=") {
			env[i] = "MOSH_HOME=" + e.path("broken")
		}
	}
	for _, engines := range []string{"claude", "@m1"} {
		cmd := exec.Command(bins.mosh, "herd", "eval", "--dataset", ds, "--engines", engines)
		cmd.Env, cmd.Dir = env, e.dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 5 {
			t.Errorf("--engines %s with no daemon: %v\n%s", engines, err, out)
		}
	}
}

// A remote member (an agent over HTTP registered with `herd remote add`) is evaluated beside a
// local engine in one eval: its answer is its reply, scored the same way.
func TestEvalRemoteMember(t *testing.T) {
	e := newEval(t)
	fn := remotetest.NewRun(t, remotetest.Options{Token: "tok-1"})
	e.env = append(e.env, "MOSH_REMOTE_FN_TOKEN=tok-1")
	e.expect(0, "herd", "remote", "add", "fn", fn.URL, "--kind", "run")
	ds := e.dataset("ds.jsonl", fourRows)
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "claude,@fn", "--concurrency", "4")
	for _, spec := range []string{"claude", "@fn"} {
		if en := r.engine(t, spec); en.Passed != 2 || en.Failed != 2 || *en.Score != 0.5 {
			t.Errorf("%s: %+v", spec, en)
		}
	}
	if row := r.row(t, "@fn", "four"); row.Answer != "echo: the answer is 4" || *row.Member != "fn" || row.TaskID == nil {
		t.Errorf("@fn row: %+v", row)
	}
	if left := e.members(); len(left) != 1 || left[0] != "fn" {
		t.Errorf("the remote member stays registered, the local ones are killed: %v", left)
	}
}

// TestEvalMemberLeftBlocked: rows run in sequence on an existing member (@m). When a row leaves it
// blocked (its permission question, unanswered), the next row finds it blocked still: the member
// gets --blocked-grace like any block, then that row is blocked with the question, at once —
// not a timeout spent waiting behind the question, and nothing is left queued in the member.
func TestEvalMemberLeftBlocked(t *testing.T) {
	e := newEval(t)
	e.expect(0, "herd", "start", "claude", "--name", "m")
	e.expect(0, "herd", "wait", "m", "--state", "idle", "--timeout", "60")
	ds := e.dataset("ds.jsonl", `{"id":"perm","prompt":"perm deploy","expect":"x"}
{"id":"after","prompt":"fine","expect":"fine"}
`)
	r, _ := e.eval(e.dir, 4, "--dataset", ds, "--engines", "@m", "--blocked-grace", "500ms", "--timeout", "20s")
	perm, after := r.row(t, "@m", "perm"), r.row(t, "@m", "after")
	if perm.Outcome != "blocked" || !strings.Contains(perm.Question, "Do you want to proceed?") {
		t.Errorf("perm: %+v", perm)
	}
	if after.Outcome != "blocked" || after.Question != perm.Question || after.TaskID != nil || !strings.Contains(after.Error, "not typed") {
		t.Errorf("the row after it: %+v; want blocked with the same question, no task, not typed", after)
	}
	out, errs, code := e.run("herd", "ps", "--json")
	if code != 0 {
		t.Fatalf("herd ps: %d %s", code, errs)
	}
	var ms []struct {
		Name   string `json:"name"`
		State  string `json:"state"`
		Queued int    `json:"queued"`
	}
	if err := json.Unmarshal([]byte(out), &ms); err != nil || len(ms) != 1 {
		t.Fatalf("ps: %v %s", err, out)
	}
	if ms[0].State != "blocked" || ms[0].Queued != 0 {
		t.Errorf("member m after the eval: %+v; want still blocked on perm's question, nothing queued", ms[0])
	}
}

// evalCost is a row's or an engine's cost in the report.
type evalCost struct {
	TotalTokens *int64 `json:"totalTokens"`
	Tokens      *struct {
		Input, Output, CacheRead, CacheWrite int64
	} `json:"tokens"`
	CostUSD    *float64 `json:"costUSD"`
	CostSource string   `json:"costSource"`
	Unknown    int      `json:"unknown"`
	Note       string   `json:"note"`
}

// Each row carries what its task used, from the engine's own records (the fake engine writes a
// Claude Code transcript: 10 input tokens, the reply's length in output tokens), and each engine
// the sum; money comes from the user's price for the model. A row of a member whose program records
// nothing carries null with the reason, never 0; the summary table shows the sums.
func TestEvalCostPerRowAndEngine(t *testing.T) {
	e := newEval(t)
	e.env = append(e.env, "FAKEENGINE_TRANSCRIPT=1")
	e.write("herd/prices.json", `{"claude-opus-5-5": {"input": 1000, "output": 2000}}`, 0o600)
	e.expect(0, "herd", "run", "--name", "ans", "--", "sh", "-c", `while read l; do echo "answer: 4"; done`)
	ds := e.dataset("ds.jsonl", `{"id":"four","prompt":"the answer is 4","expect":"4"}
{"id":"blue","prompt":"say blue","expect":"blue"}
`)
	out, errs, code := e.runIn(e.dir, "herd", "eval", "--json", "--dataset", ds, "--engines", "claude,@ans")
	if code != 4 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var r struct {
		Engines []struct {
			Engine string   `json:"engine"`
			Cost   evalCost `json:"cost"`
		} `json:"engines"`
		Rows []struct {
			ID     string   `json:"id"`
			Engine string   `json:"engine"`
			Cost   evalCost `json:"cost"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	usd := func(in, outTok int64) float64 { return (float64(in)*1000 + float64(outTok)*2000) / 1e6 }
	var sum float64
	for _, row := range r.Rows {
		c := row.Cost
		if row.Engine == "@ans" {
			if c.TotalTokens != nil || c.Tokens != nil || c.CostUSD != nil || !strings.Contains(c.Note, "records no usage") {
				t.Errorf("row %s of a program that records nothing: %+v", row.ID, c)
			}
			continue
		}
		answer := map[string]string{"four": "the answer is 4", "blue": "say blue"}[row.ID]
		n := int64(len(answer))
		if c.Tokens == nil || c.Tokens.Input != 10 || c.Tokens.Output != n || c.TotalTokens == nil || *c.TotalTokens != 10+n ||
			c.CostUSD == nil || *c.CostUSD != usd(10, n) || c.CostSource != "prices" || c.Note != "" {
			t.Errorf("row %s: %+v (want 10 input, %d output tokens, priced)", row.ID, c, n)
		}
		if c.CostUSD != nil {
			sum += *c.CostUSD
		}
	}
	for _, en := range r.Engines {
		c := en.Cost
		switch en.Engine {
		case "claude":
			if c.TotalTokens == nil || *c.TotalTokens != 20+15+8 || c.CostUSD == nil || *c.CostUSD != sum || c.Unknown != 0 {
				t.Errorf("claude's sum: %+v, want 43 tokens and $%v", c, sum)
			}
		case "@ans":
			if c.TotalTokens != nil || c.CostUSD != nil || c.Unknown != 2 || !strings.Contains(c.Note, "records no usage") {
				t.Errorf("@ans's sum: %+v", c)
			}
		}
	}
	if !strings.Contains(errs, "TOKENS") || !strings.Contains(errs, "COST") || !regexp.MustCompile(`claude .* 43 +\$0\.\d+`).MatchString(errs) ||
		!strings.Contains(errs, "@ans cost: no tokens — ") {
		t.Errorf("the summary table shows the sums, and why one is unknown:\n%s", errs)
	}

	// Rows of one engine run at once in one directory: their records cannot be told apart, so
	// their cost is unknown, never a guess.
	out, errs, code = e.runIn(e.dir, "herd", "eval", "--json", "--dataset", ds, "--engines", "claude", "--concurrency", "2")
	r.Rows = nil
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Rows) != 2 {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	for _, row := range r.Rows {
		if row.Cost.TotalTokens != nil || row.Cost.CostUSD != nil || !strings.Contains(row.Cost.Note, "--isolated") {
			t.Errorf("row %s run beside another in one directory: %+v", row.ID, row.Cost)
		}
	}
}
