package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/ledger"
)

// echoScript answers each line at once, never asks and never shows a working state: its tasks end
// only when the next prompt supersedes them (or it exits).
const echoScript = `stty -echo; printf 'ready> '; while read l; do printf 'got %s\nready> ' "$l"; done`

func findTransition(trs []herd.TaskTransition, state, kind string) *herd.TaskTransition {
	for i := range trs {
		if trs[i].State == state && (kind == "" || trs[i].BlockedOn == kind) {
			return &trs[i]
		}
	}
	return nil
}

// The whole life of a task through the client: minted on prompt, blocked recorded as a
// transition, ended by idle after the answer, closed with the screen's text, named by wait, listed
// by tasks, summed by stats; an answer joins the open task.
func TestTaskLifecycleThroughTheDaemon(t *testing.T) {
	h := newParallelHerd(t)
	h.run("tk", askScript)
	h.wait("tk", herd.StateIdle)

	ts, err := h.c.Tasks(h.ctx, herd.TasksFilter{Member: "tk"})
	if err != nil || len(ts) != 0 {
		t.Fatalf("tasks before any prompt: %+v %v", ts, err)
	}
	before := time.Now().Add(-time.Second)
	p, err := h.c.Prompt(h.ctx, "tk", "first job", herd.PromptOptions{})
	if err != nil || p.Task == "" {
		t.Fatalf("prompt: %+v %v", p, err)
	}
	h.wait("tk", herd.StateBlocked)
	open, err := h.c.Task(h.ctx, p.Task)
	if err != nil {
		t.Fatal(err)
	}
	if !open.Open || open.State != herd.StateBlocked || open.Text != "first job" || open.StateAtSubmit != herd.StateIdle || open.Artifact != nil {
		t.Fatalf("blocked task (a transition, not an end): %+v", open)
	}
	if _, err := h.c.SendKeys(h.ctx, "tk", "y", "Enter"); err != nil {
		t.Fatal(err)
	}
	w := h.wait("tk", herd.StateIdle)
	if len(w.TasksEnded) != 1 || w.TasksEnded[0] != p.Task || len(w.Results[0].TasksEnded) != 1 {
		t.Fatalf("wait names the task it saw end: %+v", w)
	}
	task, err := h.c.Task(h.ctx, p.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.State != herd.StateIdle || task.EndedMs < task.SubmittedMs || task.SubmittedMs < before.UnixMilli() {
		t.Fatalf("closed task: %+v", task)
	}
	if task.Artifact == nil || task.Artifact.Source != "screen" || !strings.Contains(task.Artifact.Text, "answer:y") ||
		task.Artifact.Truncated || task.Artifact.Chars != len([]rune(task.Artifact.Text)) {
		t.Fatalf("artifact: %+v", task.Artifact)
	}
	blocked := findTransition(task.Transitions, herd.StateBlocked, "permission")
	if blocked == nil || blocked.Authority != herd.AuthorityScreen || blocked.AtMs < task.SubmittedMs {
		t.Fatalf("when it blocked: %+v", task.Transitions)
	}

	// Answer a question on purpose: the answer joins the task that asked.
	p2, err := h.c.Prompt(h.ctx, "tk", "second job", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || p2.Task == "" || p2.Task == p.Task {
		t.Fatalf("second prompt %+v %v", p2, err)
	}
	ans, err := h.c.Prompt(h.ctx, "tk", "y", herd.PromptOptions{Answer: true, Wait: true, States: []string{"idle"}, Timeout: testTimeout})
	if err != nil || ans.Task != p2.Task {
		t.Fatalf("an answer joins the open task: %+v %v (want %s)", ans, err, p2.Task)
	}
	t2, err := h.c.Task(h.ctx, p2.Task)
	if err != nil {
		t.Fatal(err)
	}
	answered := false
	for _, tr := range t2.Transitions {
		answered = answered || strings.Contains(tr.Note, "answered: y")
	}
	if t2.Open || !answered || !strings.Contains(t2.Artifact.Text, "answer:y") {
		t.Fatalf("answered task: %+v", t2)
	}

	all, err := h.c.Tasks(h.ctx, herd.TasksFilter{Member: "tk"})
	if err != nil || len(all) != 2 || all[0].ID != p.Task || all[1].ID != p2.Task || all[0].Transitions != nil || all[0].Artifact != nil {
		t.Fatalf("tasks (oldest first, no transitions): %+v %v", all, err)
	}
	if got, _ := h.c.Tasks(h.ctx, herd.TasksFilter{Member: "tk", State: "open"}); len(got) != 0 {
		t.Fatalf("no task is open: %+v", got)
	}
	if got, _ := h.c.Tasks(h.ctx, herd.TasksFilter{State: herd.StateIdle, Limit: 1}); len(got) != 1 || got[0].ID != p2.Task {
		t.Fatalf("newest idle task: %+v", got)
	}
	if got, _ := h.c.Tasks(h.ctx, herd.TasksFilter{Since: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Fatalf("since the future: %+v", got)
	}

	lg, err := h.c.Log(h.ctx, "tk", time.Time{})
	if err != nil || findTransition(lg.Transitions, herd.StateBlocked, "permission") == nil {
		t.Fatalf("log: %+v %v", lg, err)
	}
	linked := 0
	for _, tr := range lg.Transitions {
		if tr.Task != "" {
			linked++
		}
	}
	if linked == 0 || linked == len(lg.Transitions) {
		t.Fatalf("the log holds task and untasked rows: %+v", lg.Transitions)
	}

	st, err := h.c.Stats(h.ctx, "tk", time.Time{})
	if err != nil || len(st.Members) != 1 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	if s := st.Members[0]; s.Tasks != 2 || s.ClosedTasks != 2 || s.BlockedSpells < 2 || s.TotalsMs[herd.StateIdle] <= 0 ||
		s.HumanLatencyMs != s.TotalsMs[herd.StateBlocked] {
		t.Fatalf("stats of tk: %+v", s)
	}
	herdSt, err := h.c.Stats(h.ctx, "", time.Time{})
	if err != nil || herdSt.Total == nil || herdSt.Total.Tasks != 2 || len(herdSt.Members) != 1 {
		t.Fatalf("herd stats: %+v %v", herdSt, err)
	}
}

func TestTaskReadErrors(t *testing.T) {
	h := newParallelHerd(t)
	_, err := h.c.Task(h.ctx, "t-999")
	wantCode(t, err, exitcode.Gone)
	if !strings.Contains(err.Error(), "no task t-999") || !strings.Contains(err.Error(), "mosh herd tasks") {
		t.Fatalf("unknown id message: %v", err)
	}
	_, err = h.c.Task(h.ctx, "task-1")
	wantCode(t, err, exitcode.Usage)
	_, err = h.c.Tasks(h.ctx, herd.TasksFilter{Member: "nobody"})
	wantCode(t, err, exitcode.Gone)
	_, err = h.c.Tasks(h.ctx, herd.TasksFilter{State: "finished"})
	wantCode(t, err, exitcode.Usage)
	_, err = h.c.Tasks(h.ctx, herd.TasksFilter{Member: "Bad Name"})
	wantCode(t, err, exitcode.Usage)
	_, err = h.c.Log(h.ctx, "nobody", time.Time{})
	wantCode(t, err, exitcode.Gone)
	_, err = h.c.Stats(h.ctx, "nobody", time.Time{})
	wantCode(t, err, exitcode.Gone)
	// A member that exists but has done nothing yet has empty history, not an error.
	h.run("quiet", "sleep 30")
	if ts, err := h.c.Tasks(h.ctx, herd.TasksFilter{Member: "quiet"}); err != nil || len(ts) != 0 {
		t.Fatalf("tasks of a new member: %+v %v", ts, err)
	}
	if _, err := h.c.Stats(h.ctx, "quiet", time.Time{}); err != nil {
		t.Fatalf("stats of a new member: %v", err)
	}
}

// A task whose member exits ends done/runtime with what the member printed; an idle-only engine's
// task ends when the next prompt supersedes it; a killed member's task ends with its process.
func TestTaskEnds(t *testing.T) {
	h := newParallelHerd(t)
	h.run("ex", `stty -echo; printf 'ready> '; read l; printf 'bye %s\n' "$l"; exit 4`)
	h.wait("ex", herd.StateIdle)
	// A process that dies mid-turn: prompt --wait ends (exit 3) with the exit code, the task fails.
	p, err := h.c.Prompt(h.ctx, "ex", "now", herd.PromptOptions{Wait: true, States: []string{"done"}, Timeout: testTimeout})
	wantCode(t, err, exitcode.Gone)
	if p.Task == "" || p.Outcome != herd.OutcomeEnded || p.ExitCode == nil || *p.ExitCode != 4 || p.TaskState != "failed" {
		t.Fatalf("prompt into a member that exits: %+v %v", p, err)
	}
	task, err := h.c.Task(h.ctx, p.Task)
	if err != nil {
		t.Fatal(err)
	}
	last := task.Transitions[len(task.Transitions)-1]
	if task.Open || task.State != "failed" || last.Authority != herd.AuthorityRuntime || !strings.Contains(last.Note, "code 4") ||
		task.Artifact == nil || !strings.Contains(task.Artifact.Text, "bye now") {
		t.Fatalf("task of an exited member: %+v", task)
	}

	h.run("echo", echoScript)
	h.wait("echo", herd.StateIdle)
	first, err := h.c.Prompt(h.ctx, "echo", "one", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.waitScreen("echo", "got one")
	// --now types over the running task: it ends canceled (superseded), never done.
	second, err := h.c.Prompt(h.ctx, "echo", "two", herd.PromptOptions{Now: true})
	if err != nil {
		t.Fatal(err)
	}
	t1, err := h.c.Task(h.ctx, first.Task)
	if err != nil {
		t.Fatal(err)
	}
	if t1.Open || t1.State != "canceled" || !strings.Contains(t1.Note, "superseded") || t1.Artifact == nil || !strings.Contains(t1.Artifact.Text, "got one") {
		t.Fatalf("a superseded task keeps what it showed: %+v", t1)
	}
	if _, err := h.c.Kill(h.ctx, []string{"echo"}, false); err != nil {
		t.Fatal(err)
	}
	t2, err := h.c.Task(h.ctx, second.Task)
	if err != nil {
		t.Fatal(err)
	}
	// kill ends the process: the open task ends canceled (the member was killed), not done.
	if t2.Open || t2.State != "canceled" || !strings.Contains(t2.Note, "killed") || t2.Artifact == nil {
		t.Fatalf("the task of a killed member: %+v", t2)
	}
}

// waitScreen waits (event-driven, on settle events) until the member's screen shows text.
func (h *herdT) waitScreen(name, text string) {
	h.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if strings.Contains(h.read(name), text) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("%s never showed %q:\n%s", name, text, h.read(name))
}

// A daemon killed with -9 leaves a task open; the next daemon's reads close it as gone and say so.
func TestReadsReconcileAfterDaemonKill9(t *testing.T) {
	h := newHerd(t)
	h.run("rc", askScript)
	h.wait("rc", herd.StateIdle)
	p, err := h.c.Prompt(h.ctx, "rc", "long job", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	h.kill9()
	task, err := h.c.Task(h.ctx, p.Task)
	if err != nil {
		t.Fatal(err)
	}
	last := task.Transitions[len(task.Transitions)-1]
	if task.Open || task.State != herd.StateGone || !strings.Contains(task.Note, "reconciled on read") || last.State != herd.StateGone ||
		task.Artifact == nil || task.Artifact.Source != "error" || findTransition(task.Transitions, herd.StateBlocked, "") == nil {
		t.Fatalf("reconciled task: %+v", task)
	}
	// Restored under the same name, the member's new transitions never join the old task.
	if _, err := h.c.Restore(h.ctx, herd.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wait("rc", herd.StateIdle)
	p2, err := h.c.Prompt(h.ctx, "rc", "again", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || p2.Task == p.Task {
		t.Fatalf("prompt after restore: %+v %v", p2, err)
	}
	if again, _ := h.c.Task(h.ctx, p.Task); len(again.Transitions) != len(task.Transitions) {
		t.Fatalf("the old task grew after the restart: %+v", again.Transitions)
	}
}

// kill9 kills the daemon with SIGKILL and connects a new client (which starts a new daemon).
func (h *herdT) kill9() {
	h.t.Helper()
	st, err := h.c.DaemonStatus(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		h.t.Fatal(err)
	}
	<-h.c.Done()
	// The connection closes while the kernel is still closing the dead daemon's files (its
	// listener among them): wait until the process is gone, as a user's next command would.
	if err := herd.WaitProcessGone(h.ctx, st.Pid, h.home); err != nil {
		h.t.Fatal(err)
	}
	c, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home, Env: homeEnv(h.home)})
	if err != nil {
		h.t.Fatal(err)
	}
	h.c = c
}

// The PRD metric: any prompt submitted through the herd is reconstructable after the daemon is
// killed with -9 in the middle of writes — what was asked, when it blocked, what came back.
func TestPromptReconstructableAfterKill9MidWrites(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "cl", Env: env}); err != nil {
		t.Fatal(err)
	}
	// Noise: members whose screens flip between a question and a prompt as fast as they can, so
	// the ledger is always writing when the daemon dies.
	for i := range 3 {
		h.run(fmt.Sprintf("noise%d", i), `while :; do printf '\033[H\033[2JAllow? [y/n] '; sleep 0.03; printf '\033[H\033[2Jready> '; sleep 0.03; done`)
	}
	asked := map[string]string{}
	for i := range 6 {
		name := fmt.Sprintf("ask%d", i)
		h.run(name, askScript)
	}
	h.wait("cl", herd.StateIdle)

	// A permission turn, answered; the Stop hook's final message is the answer.
	perm, err := h.c.Prompt(h.ctx, "cl", "perm deploy the api", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || perm.State != herd.StateBlocked {
		t.Fatalf("permission turn: %+v %v", perm, err)
	}
	blockedAt := time.Now()
	if _, err := h.c.SendKeys(h.ctx, "cl", "1"); err != nil {
		t.Fatal(err)
	}
	w, err := h.c.Wait(h.ctx, []string{"cl"}, herd.WaitOptions{States: []string{"done"}, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("wait done: %+v %v", w, err)
	}
	// More acknowledged prompts, all at once, then kill -9 at once: each has a task id (minted
	// before the daemon answered), and the daemon dies while their transitions are being written.
	for i := range 6 {
		h.wait(fmt.Sprintf("ask%d", i), herd.StateIdle)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("ask%d", i)
			r, err := h.c.Prompt(h.ctx, name, "job for "+name, herd.PromptOptions{})
			if err != nil || r.Task == "" {
				t.Errorf("prompt %s: %+v %v", name, r, err)
				return
			}
			mu.Lock()
			asked[r.Task] = "job for " + name
			mu.Unlock()
		}()
	}
	wg.Wait()
	h.kill9()

	task, err := h.c.Task(h.ctx, perm.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Text != "perm deploy the api" {
		t.Fatalf("what was asked: %q", task.Text)
	}
	b := findTransition(task.Transitions, herd.StateBlocked, "permission")
	if b == nil || b.AtMs < task.SubmittedMs || b.AtMs > blockedAt.UnixMilli() {
		t.Fatalf("when it blocked: %+v", task.Transitions)
	}
	if task.Open || task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Source != "hook" || strings.TrimSpace(task.Artifact.Text) == "" {
		t.Fatalf("what came back: %+v %+v", task, task.Artifact)
	}
	for id, text := range asked {
		tk, err := h.c.Task(h.ctx, id)
		if err != nil || tk.Text != text {
			t.Fatalf("acknowledged prompt %s lost: %+v %v", id, tk, err)
		}
	}
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range dr.Checks {
		if c.Name == "database" && c.Level != "ok" {
			t.Fatalf("database after kill -9: %+v", c)
		}
	}
}

// A database that cannot be opened never stops the herd: members run, verbs that need the
// ledger fail with exit 5 naming the problem, doctor names the file and the fix.
func TestCorruptDatabaseAtStart(t *testing.T) {
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", home)
	if err := os.MkdirAll(herd.HerdDir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	junk := []byte(strings.Repeat("this is not a database ", 500))
	if err := os.WriteFile(filepath.Join(herd.HerdDir(home), "herd.db"), junk, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h := &herdT{t: t, home: home, c: c, ctx: ctx}
	t.Cleanup(func() { stopDaemon(home); c.Close(); os.RemoveAll(home) })

	h.run("still", askScript)
	h.wait("still", herd.StateIdle)
	_, err = c.Tasks(ctx, herd.TasksFilter{})
	wantCode(t, err, exitcode.Infra)
	if !strings.Contains(err.Error(), "ledger is unavailable") || !strings.Contains(err.Error(), "doctor") {
		t.Fatalf("tasks on a bad database: %v", err)
	}
	_, err = c.Prompt(ctx, "still", "x", herd.PromptOptions{})
	wantCode(t, err, exitcode.Infra)
	if _, err := c.SendKeys(ctx, "still", "hello", "Enter"); err != nil {
		t.Fatalf("the member still takes keys: %v", err)
	}
	h.wait("still", herd.StateBlocked)
	dr, err := c.Doctor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, ch := range dr.Checks {
		named = named || (ch.Name == "database" && ch.Level == "fail" && strings.Contains(ch.Detail, "herd.db") && ch.Fix != "")
	}
	if !named || dr.OK {
		t.Fatalf("doctor does not name the database: %+v", dr.Checks)
	}
}

// A database damaged under a running daemon (here: truncated, which would SIGBUS a memory-mapped
// reader) is an error on the verbs that read it, never a crash; doctor names it.
func TestDatabaseDamagedUnderTheDaemon(t *testing.T) {
	h := newParallelHerd(t)
	h.run("dmg", echoScript)
	h.wait("dmg", herd.StateIdle)
	for i := range 30 {
		if _, err := h.c.Prompt(h.ctx, "dmg", fmt.Sprintf("line %d %s", i, strings.Repeat("x", 2000)), herd.PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := h.c.DaemonStatus(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(herd.HerdDir(h.home), "herd.db")
	// Fold the WAL into the file first so the damage hits pages the ledger needs.
	if s, err := openLedger(herd.HerdDir(h.home)); err == nil {
		s.Close()
	}
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(db, fi.Size()/3); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteAt([]byte(strings.Repeat("\xff", 4096)), 8192)
	f.Close()

	// Writes and reads go on hitting the damage; none may take the daemon down.
	for i := range 5 {
		_, _ = h.c.Prompt(h.ctx, "dmg", fmt.Sprintf("after %d", i), herd.PromptOptions{})
		_, _ = h.c.Tasks(h.ctx, herd.TasksFilter{Member: "dmg", Limit: -1})
		_, _ = h.c.Task(h.ctx, "t-1")
		_, _ = h.c.Stats(h.ctx, "", time.Time{})
	}
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, ch := range dr.Checks {
		named = named || (ch.Name == "database" && ch.Level == "fail" && strings.Contains(ch.Detail, "herd.db"))
	}
	if !named {
		t.Fatalf("doctor does not name the damaged database: %+v", dr.Checks)
	}
	after, err := h.c.DaemonStatus(h.ctx)
	if err != nil || after.Pid != st.Pid {
		t.Fatalf("the daemon did not survive: %+v %v", after, err)
	}
	if _, err := h.c.SendKeys(h.ctx, "dmg", "still here", "Enter"); err != nil {
		t.Fatalf("members keep running: %v", err)
	}
}

// Retention and durability come from config.json; a bad value is named by doctor.
func TestRetentionFromConfig(t *testing.T) {
	cfg := `{"ledger": {"maxTasksPerMember": 2, "maxBytesPerMember": "1MiB", "durability": "fast"}}`
	h := newParallelHerdWith(t, map[string]string{ConfigFile: cfg})
	c, ctx := h.c, h.ctx
	h.run("ret", echoScript)
	h.wait("ret", herd.StateIdle)
	var ids []string
	for i := range 5 {
		r, err := c.Prompt(ctx, "ret", fmt.Sprintf("p%d", i), herd.PromptOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Task)
		h.waitScreen("ret", fmt.Sprintf("got p%d", i))
	}
	ts, err := c.Tasks(ctx, herd.TasksFilter{Member: "ret", Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Two closed tasks are kept (the cap) plus the open one, which is never pruned.
	if len(ts) != 3 || ts[0].ID != ids[2] || ts[2].ID != ids[4] || !ts[2].Open {
		t.Fatalf("retention of 2: %+v (ids %v)", ts, ids)
	}
	_, err = c.Task(ctx, ids[0])
	wantCode(t, err, exitcode.Gone)
	dr, err := c.Doctor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, ch := range dr.Checks {
		named = named || (ch.Name == "config" && ch.Level == "warn" && strings.Contains(ch.Detail, "durability"))
	}
	if !named {
		t.Fatalf("doctor does not name the bad durability: %+v", dr.Checks)
	}
}

func TestLoadLedgerOptions(t *testing.T) {
	dir := t.TempDir()
	if o, p := loadLedgerOptions(dir); p != nil || o.MaxTasksPerMember != 0 || o.MaxBytesPerMember != 0 || o.Durability != "" {
		t.Fatalf("no file: %+v %v", o, p)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"ledger": {"maxTasksPerMember": 50, "maxBytesPerMember": "2.5MiB", "maxLogPerMember": -1, "durability": "full"}}`)
	o, p := loadLedgerOptions(dir)
	if p != nil || o.MaxTasksPerMember != 50 || o.MaxBytesPerMember != 5<<19 || o.MaxLogPerMember != -1 || o.Durability != ledger.DurabilityFull {
		t.Fatalf("good file: %+v %v", o, p)
	}
	write(`{"ledger": {"maxBytesPerMember": 4096}}`)
	if o, p := loadLedgerOptions(dir); p != nil || o.MaxBytesPerMember != 4096 {
		t.Fatalf("bytes as a number: %+v %v", o, p)
	}
	write(`{"ledger": {"maxTasksPerMember": 0, "maxBytesPerMember": "lots"}}`)
	if o, p := loadLedgerOptions(dir); len(p) != 2 || o.MaxTasksPerMember != 0 || o.MaxBytesPerMember != 0 {
		t.Fatalf("bad values are named and ignored: %+v %v", o, p)
	}
	write(`{"ledger": {"maxTask": 5}}`)
	if _, p := loadLedgerOptions(dir); len(p) != 1 || !strings.Contains(p[0], "maxTask") {
		t.Fatalf("unknown key: %v", p)
	}
}

func TestFinalMessage(t *testing.T) {
	table := state.Load(t.TempDir())
	for payload, want := range map[string]string{
		`{"hook_event_name":"Stop","last_assistant_message":"all done"}`:       "all done",
		`{"type":"agent-turn-complete","last-assistant-message":"codex says"}`: "codex says",
		`{"hook_event_name":"AfterAgent","prompt_response":"gemini says"}`:     "gemini says",
		`{"hook_event_name":"PostToolUse","tool_response":"not an answer"}`:    "",
		`{"hook_event_name":"Stop","last_assistant_message":"  "}`:             "",
		`not json`: "",
	} {
		if got := finalMessage(table, "", []byte(payload)); got != want {
			t.Errorf("finalMessage(%s) = %q, want %q", payload, got, want)
		}
	}
}

func TestSubtractLines(t *testing.T) {
	base := []string{"╭────╮", "│ >  │", "╰────╯", "  ? for shortcuts", ""}
	// Alternate screen: the answer was drawn above the same input box.
	cur := []string{"❯ port the routes", "● Done: 3 routes ported.", "", "╭────╮", "│ >  │", "╰────╯", "  ? for shortcuts"}
	got := strings.Join(trimBlank(subtractLines(cur, base)), "\n")
	if got != "❯ port the routes\n● Done: 3 routes ported." {
		t.Fatalf("screen delta:\n%s", got)
	}
	// A line repeated in the answer stays when the baseline has it only once.
	cur = []string{"╭────╮", "│ >  │", "╰────╯", "╭────╮", "│ >  │", "╰────╯", "  ? for shortcuts"}
	if got := subtractLines(cur, base); len(got) != 3 {
		t.Fatalf("repeated lines: %q", got)
	}
	if got := subtractLines(cur, nil); len(got) != len(cur) {
		t.Fatalf("empty baseline keeps everything: %q", got)
	}
}

// Writes of one member stay in order while members write in parallel; flush sees them all.
func TestLedgerWriterOrder(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]int{}
	w := newLedgerWriter(nil, func(ops []ledgerOp) {
		mu.Lock()
		defer mu.Unlock()
		for _, op := range ops {
			n := 0
			fmt.Sscan(op.tr.Note, &n)
			seen[op.member] = append(seen[op.member], n)
		}
	})
	for i := range 2000 {
		m := fmt.Sprintf("m%d", i%37)
		if i%5 == 0 {
			w.post(m, func() {
				mu.Lock()
				seen[m] = append(seen[m], i)
				mu.Unlock()
			})
			continue
		}
		w.record(ledgerOp{member: m, tr: ledger.Transition{State: "working", Note: fmt.Sprint(i)}})
	}
	w.flushAll()
	mu.Lock()
	total := 0
	for m, xs := range seen {
		total += len(xs)
		for j := 1; j < len(xs); j++ {
			if xs[j] < xs[j-1] {
				t.Fatalf("%s out of order: %v", m, xs)
			}
		}
	}
	mu.Unlock()
	if total != 2000 {
		t.Fatalf("flushAll saw %d of 2000 writes", total)
	}
	w.close()
	ran := false
	w.post("late", func() { ran = true })
	if !ran {
		t.Fatal("a write after close runs on the caller")
	}
}

// A full disk fails the verb that needed to write (nothing is typed) while the herd keeps
// running, and the next write after space comes back succeeds. The daemon runs in this process
// so the test can cap the database's size (SQLite then fails exactly as on a full disk).
func TestDiskFullFailsTheVerbNotTheHerd(t *testing.T) {
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", home)
	defer os.RemoveAll(home)
	opened := make(chan *ledger.Store, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- serveForeground(ctx, home, serveSeams{ledgerOpened: func(s *ledger.Store) { opened <- s }})
	}()
	store := <-opened
	var c *herd.Client
	for c == nil {
		if c, err = herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true}); err != nil {
			select {
			case err := <-served:
				t.Fatalf("daemon: %v", err)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	defer c.Close()
	h := &herdT{t: t, home: home, c: c, ctx: ctx}
	h.run("df", askScript)
	h.wait("df", herd.StateIdle)

	pages, err := store.PageCount()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetMaxPages(pages); err != nil {
		t.Fatal(err)
	}
	_, err = c.Prompt(ctx, "df", "a long prompt "+strings.Repeat("z", 20000), herd.PromptOptions{})
	wantCode(t, err, exitcode.Infra)
	if !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "nothing was typed") {
		t.Fatalf("prompt on a full disk: %v", err)
	}
	if s := h.read("df"); strings.Contains(s, "zzzz") {
		t.Fatalf("the refused prompt was typed:\n%s", s)
	}
	if _, err := c.SendKeys(ctx, "df", "by hand", "Enter"); err != nil {
		t.Fatalf("the member keeps running: %v", err)
	}
	h.wait("df", herd.StateBlocked)
	if _, err := c.Tasks(ctx, herd.TasksFilter{}); err != nil {
		t.Fatalf("reads go on: %v", err)
	}
	if err := store.SetMaxPages(0); err != nil {
		t.Fatal(err)
	}
	r, err := c.Prompt(ctx, "df", "y", herd.PromptOptions{Answer: true, Wait: true, States: []string{"idle"}, Timeout: testTimeout})
	if err != nil || r.Task == "" {
		t.Fatalf("after space came back: %+v %v", r, err)
	}
	cancel()
	<-served
}
