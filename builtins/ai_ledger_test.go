package builtins

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// Every ai() call is a task of a headless member in the herd's ledger (herd/headless.go): the
// prompt, how long the call took, how it ended, the answer (or the error) and the usage the engine
// or the API stated, read back as `mosh herd tasks` and `mosh herd task` read them.

// aiTasks reads member's tasks, each with its transitions and artifact, from the env's daemon.
func aiTasks(t *testing.T, env map[string]string, member string) []herd.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := herd.Connect(ctx, herd.Options{Home: env["MOSH_HOME"], NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := c.Tasks(ctx, herd.TasksFilter{Member: member, Limit: -1})
	if err != nil {
		if exitcode.Of(err) == exitcode.Gone {
			return nil // no task of that member
		}
		t.Fatal(err)
	}
	out := make([]herd.Task, len(list))
	for i, l := range list {
		full, err := c.Task(ctx, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = *full
	}
	return out
}

// checkClosed asserts what every closed call's task holds: closed, its end after its start, its
// duration the span between them, and its terminal state as the last transition.
func checkClosed(t *testing.T, tk herd.Task, state string) {
	t.Helper()
	if tk.Open || tk.State != state {
		t.Fatalf("%s: open %v state %q, want closed %s: %+v", tk.ID, tk.Open, tk.State, state, tk)
	}
	if tk.EndedMs < tk.SubmittedMs || tk.DurationMs != tk.EndedMs-tk.SubmittedMs {
		t.Fatalf("%s: submitted %d ended %d duration %d", tk.ID, tk.SubmittedMs, tk.EndedMs, tk.DurationMs)
	}
	if n := len(tk.Transitions); n == 0 || tk.Transitions[n-1].State != state {
		t.Fatalf("%s: transitions %+v, want the last one %s", tk.ID, tk.Transitions, state)
	}
	if tk.Artifact == nil {
		t.Fatalf("%s has no artifact", tk.ID)
	}
}

func TestAICallIsALedgerTaskWithItsAnswerAndUsage(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	fakeAIEngine(t, bin, "codex", "plain")
	env := aiEnv(t, bin)
	r := run(t, `
console.log(await ai("what is two plus two?"))
console.log(await ai("and three?", {engine: "codex"}))
`, Config{Env: env})
	expectOut(t, r, "claude answers: what is two plus two?\ncodex answers: and three?\n")

	ts := aiTasks(t, env, "ai-claude")
	if len(ts) != 1 {
		t.Fatalf("ai-claude tasks %+v, want one", ts)
	}
	tk := ts[0]
	checkClosed(t, tk, herd.StateDone)
	if tk.Member != "ai-claude" || tk.Text != "what is two plus two?" || tk.Queued {
		t.Fatalf("task %+v", tk)
	}
	if a := tk.Artifact; a.Text != "claude answers: what is two plus two?" || a.Source != "headless" {
		t.Fatalf("artifact %+v, want the answer (source headless)", a)
	}
	if want := `usage {"total_cost_usd":0.0021,"usage":{"input_tokens":7,"output_tokens":3}}`; tk.Note != want {
		t.Fatalf("note %q, want the engine's stated usage %q", tk.Note, want)
	}
	// An engine whose headless mode states no usage: the answer, no note.
	ts = aiTasks(t, env, "ai-codex")
	if len(ts) != 1 || ts[0].Artifact == nil || ts[0].Artifact.Text != "codex answers: and three?" || ts[0].Note != "" {
		t.Fatalf("ai-codex tasks %+v", ts)
	}
	checkClosed(t, ts[0], herd.StateDone)
}

// messagesAPI is an Anthropic Messages API that answers each request with status, the text and
// a usage object.
func messagesAPI(t *testing.T, status int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status != http.StatusOK {
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"api_error","message":"overloaded, sorry"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"type":"message","content":[{"type":"text","text":"forty-two"}],"stop_reason":"end_turn","usage":{"input_tokens":11,"output_tokens":2}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestAIModelAPICallIsALedgerTask(t *testing.T) {
	env := aiEnv(t, t.TempDir(), "MOSH_AI_PROVIDER=anthropic", "ANTHROPIC_BASE_URL="+messagesAPI(t, http.StatusOK),
		"ANTHROPIC_API_KEY="+aiTestKey, "MOSH_AI_MODEL=m")
	expectOut(t, run(t, `console.log(await ai("the answer?"))`, Config{Env: env}), "forty-two\n")
	ts := aiTasks(t, env, "ai-anthropic")
	if len(ts) != 1 {
		t.Fatalf("ai-anthropic tasks %+v", ts)
	}
	checkClosed(t, ts[0], herd.StateDone)
	if ts[0].Artifact.Text != "forty-two" || ts[0].Text != "the answer?" || ts[0].Note != `usage {"input_tokens":11,"output_tokens":2}` {
		t.Fatalf("task %+v artifact %+v", ts[0], ts[0].Artifact)
	}
	if strings.Contains(ts[0].Note+ts[0].Artifact.Text+ts[0].Text, aiTestKey) {
		t.Fatal("the API key reached the ledger")
	}
}

// A failing call is a failed task with the error as its artifact, never done: an engine that
// exits non-zero, an engine whose JSON result says it failed, a model API that answers 500.
func TestAIFailuresAreFailedTasks(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	env := aiEnv(t, bin)
	r := run(t, `
for (const p of ["please fail", "please iserror"]) {
  try { await ai(p); console.log("resolved") } catch (e) { console.log("rejected") }
}
`, Config{Env: env})
	expectOut(t, r, "rejected\nrejected\n")
	ts := aiTasks(t, env, "ai-claude")
	if len(ts) != 2 {
		t.Fatalf("tasks %+v", ts)
	}
	for i, want := range []string{"claude exited with code 3: boom: the engine failed", "claude reported an error (exit code 0): API Error: 401 invalid key"} {
		checkClosed(t, ts[i], "failed")
		if ts[i].Artifact.Source != "error" || ts[i].Artifact.Text != want || !strings.HasPrefix(ts[i].Note, want) {
			t.Fatalf("task %d: note %q artifact %+v, want %q", i, ts[i].Note, ts[i].Artifact, want)
		}
	}
	if !strings.Contains(ts[1].Note, `usage {"total_cost_usd":0.0021`) {
		t.Fatalf("the failed run's stated usage is not kept: %q", ts[1].Note)
	}

	api := aiEnv(t, t.TempDir(), "MOSH_AI_PROVIDER=anthropic", "ANTHROPIC_BASE_URL="+messagesAPI(t, http.StatusInternalServerError),
		"ANTHROPIC_API_KEY="+aiTestKey, "MOSH_AI_MODEL=m")
	if r = run(t, `await ai("x")`, Config{Env: api}); exitcode.Of(r.err) != exitcode.Infra {
		t.Fatalf("ai() against an API answering 500: %v (exit code %d, want %d)", r.err, exitcode.Of(r.err), exitcode.Infra)
	}
	ts = aiTasks(t, api, "ai-anthropic")
	if len(ts) != 1 {
		t.Fatalf("tasks %+v", ts)
	}
	checkClosed(t, ts[0], "failed")
	if a := ts[0].Artifact; a.Source != "error" || !strings.Contains(a.Text, "answered 500 Internal Server Error: overloaded, sorry") {
		t.Fatalf("artifact %+v", a)
	}
}

// Concurrent calls of one engine each get their own task, none superseding another.
func TestAIConcurrentCallsEachGetTheirOwnTask(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	env := aiEnv(t, bin, "MOSH_AI_CONCURRENCY=4")
	r := run(t, `
const qs = ["q1", "q2", "q3", "q4", "q5", "q6"]
const as = await Promise.all(qs.map(q => ai(q)))
console.log(as.join(","))
`, Config{Env: env})
	expectOut(t, r, "claude answers: q1,claude answers: q2,claude answers: q3,claude answers: q4,claude answers: q5,claude answers: q6\n")
	ts := aiTasks(t, env, "ai-claude")
	if len(ts) != 6 {
		t.Fatalf("%d tasks, want 6: %+v", len(ts), ts)
	}
	var got []string
	ids := map[string]bool{}
	for _, tk := range ts {
		checkClosed(t, tk, herd.StateDone)
		if tk.Artifact.Text != "claude answers: "+tk.Text {
			t.Fatalf("task %s (%q) came back with %q", tk.ID, tk.Text, tk.Artifact.Text)
		}
		got = append(got, tk.Text)
		ids[tk.ID] = true
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "q1,q2,q3,q4,q5,q6" || len(ids) != 6 {
		t.Fatalf("prompts %v ids %v", got, ids)
	}
}

// Under --dry-run ai() narrates and records nothing.
func TestAIDryRunRecordsNothing(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	env := aiEnv(t, bin)
	r := run(t, `console.log(JSON.stringify(await ai("hello")))`, Config{Env: env, DryRun: true})
	expectOut(t, r, "\"\"\n")
	if ts := aiTasks(t, env, ""); len(ts) != 0 {
		t.Fatalf("a dry run recorded %+v", ts)
	}
}

// stoppedCallClosed asserts that the one call of ai-claude, which the script stopped (Ctrl-C, or
// the script ending), does not stay open: its task ends canceled (the call's own close) or failed
// (the daemon's, when the script's connection ended first). The daemon's close follows the
// connection's end: wait for the task to close (the condition), a generous bound only for a
// broken daemon.
func stoppedCallClosed(t *testing.T, env map[string]string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ts := aiTasks(t, env, "ai-claude")
		if len(ts) != 1 {
			t.Fatalf("tasks %+v", ts)
		}
		if !ts[0].Open {
			if ts[0].State != "canceled" && ts[0].State != "failed" {
				t.Fatalf("a stopped call ended %s: %+v", ts[0].State, ts[0])
			}
			checkClosed(t, ts[0], ts[0].State)
			return
		}
		if ts[0].State != herd.StateWorking {
			t.Fatalf("an open call reads %q, want working", ts[0].State)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stopped call's task is still open: %+v", ts[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFile waits for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// While the call runs its task is open and reads working (not a prompt queued for a member).
func TestAICallInFlightReadsWorking(t *testing.T) {
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	dir := t.TempDir()
	pidfile, gofile := filepath.Join(dir, "pid"), filepath.Join(dir, "go")
	env := aiEnv(t, bin, "AI_PIDFILE="+pidfile, "AI_GOFILE="+gofile)
	done := make(chan result, 1)
	go func() { done <- run(t, `console.log(await ai("hold on block"))`, Config{Env: env}) }()
	waitFile(t, pidfile)
	ts := aiTasks(t, env, "ai-claude")
	if len(ts) != 1 || !ts[0].Open || ts[0].Queued || ts[0].State != herd.StateWorking || ts[0].Text != "hold on block" {
		t.Fatalf("the call in flight reads %+v, want one open task, working", ts)
	}
	if err := os.WriteFile(gofile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	expectOut(t, <-done, "released\n")
	ts = aiTasks(t, env, "ai-claude")
	checkClosed(t, ts[0], herd.StateDone)
	if ts[0].Artifact.Text != "released" {
		t.Fatalf("artifact %+v", ts[0].Artifact)
	}
}
