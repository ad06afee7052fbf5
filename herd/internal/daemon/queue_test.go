package daemon

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// startFake starts the fake Claude look-alike (screen only) as member name and waits for idle.
func (h *herdT) startFake(t *testing.T, name string, extraEnv ...string) {
	t.Helper()
	env := append(fakeEnv(t, "claude", false), extraEnv...)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: name, Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait(name, herd.StateIdle)
}

// Five prompts sent at once into one member: five tasks, typed one after another (never glued
// together in the input box), each closed with its own answer.
func TestParallelPromptsQueueOneAfterAnother(t *testing.T) {
	h := newParallelHerd(t)
	h.startFake(t, "m")
	const n = 5
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		res  = map[string]*herd.PromptResult{}
		errs []error
	)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("parallel %d", i)
			r, err := h.c.Prompt(h.ctx, "m", text, herd.PromptOptions{Wait: true, States: []string{"done", "idle"}, Timeout: testTimeout})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %+v %w", text, r, err))
				return
			}
			res[text] = r
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("prompts: %v", errs)
	}
	ids := map[string]bool{}
	queued := 0
	for text, r := range res {
		if r.Task == "" || ids[r.Task] {
			t.Fatalf("%s: task %q (ids %v)", text, r.Task, ids)
		}
		ids[r.Task] = true
		if r.Queued {
			queued++
			if r.Position < 1 {
				t.Fatalf("%s queued without a place: %+v", text, r)
			}
		}
	}
	if queued < n-1 {
		t.Fatalf("%d of %d prompts queued, want at least %d: %+v", queued, n, n-1, res)
	}
	for text, r := range res {
		task, err := h.c.Task(h.ctx, r.Task)
		if err != nil {
			t.Fatal(err)
		}
		if task.Open || (task.State != herd.StateDone && task.State != herd.StateIdle) || task.Artifact == nil {
			t.Fatalf("%s: task %+v", text, task)
		}
		if !strings.Contains(task.Artifact.Text, text) {
			t.Fatalf("%s: its task's answer is another's:\n%s", text, task.Artifact.Text)
		}
		for other := range res {
			if other != text && strings.Contains(task.Artifact.Text, other) {
				t.Fatalf("%s: its answer holds %q too:\n%s", text, other, task.Artifact.Text)
			}
		}
	}
	screen := h.read("m")
	for i := 1; i <= n; i++ {
		if !strings.Contains(screen, fmt.Sprintf("❯ parallel %d\n", i)) && !strings.Contains(screen, fmt.Sprintf("❯ parallel %d", i)) {
			t.Fatalf("parallel %d was not typed on its own:\n%s", i, screen)
		}
	}
	if strings.Contains(screen, "parallel 1parallel") || strings.Contains(screen, "parallel 2parallel") ||
		strings.Contains(screen, "parallel 3parallel") || strings.Contains(screen, "parallel 4parallel") || strings.Contains(screen, "parallel 5parallel") {
		t.Fatalf("prompts glued together:\n%s", screen)
	}
	if m := h.member("m"); m.Queued != 0 {
		t.Fatalf("queue not drained: %+v", m)
	}
}

// A prompt to a working member waits (submitted), shows in the ledger, and is removed untyped by
// `kill t-N` (canceled); the client's CancelTask does the same.
func TestQueuedPromptCanceledUntyped(t *testing.T) {
	h := newParallelHerd(t)
	h.startFake(t, "m", "FAKEENGINE_SLOW=1h")
	first, err := h.c.Prompt(h.ctx, "m", "slow one", herd.PromptOptions{Wait: true, States: []string{"working"}, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("first: %+v %v", first, err)
	}
	q1, err := h.c.Prompt(h.ctx, "m", "queued two", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q2, err := h.c.Prompt(h.ctx, "m", "queued three", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !q1.Queued || q1.Position != 1 || q1.Behind != first.Task || !q2.Queued || q2.Position != 2 || q2.Behind != q1.Task {
		t.Fatalf("queue places: first %s, %+v, %+v", first.Task, q1, q2)
	}
	task, err := h.c.Task(h.ctx, q1.Task)
	if err != nil {
		t.Fatal(err)
	}
	if !task.Open || !task.Queued || task.State != "submitted" {
		t.Fatalf("queued task %+v", task)
	}
	if m := h.member("m"); m.Queued != 2 {
		t.Fatalf("row %+v", m)
	}
	kr, err := h.c.Kill(h.ctx, []string{q1.Task}, false)
	if err != nil || len(kr.Canceled) != 1 {
		t.Fatalf("kill %s: %+v %v", q1.Task, kr, err)
	}
	cr, err := h.c.CancelTask(h.ctx, q2.Task)
	if err != nil || !cr.Queued || cr.Member != "m" {
		t.Fatalf("cancel %s: %+v %v", q2.Task, cr, err)
	}
	for _, id := range []string{q1.Task, q2.Task} {
		task, err := h.c.Task(h.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Open || task.State != "canceled" || task.Queued {
			t.Fatalf("canceled queued task %+v", task)
		}
	}
	// Killing a task twice, or the running one, says what to do.
	_, err = h.c.Kill(h.ctx, []string{q1.Task}, false)
	wantCode(t, err, exitcode.Gone)
	_, err = h.c.Kill(h.ctx, []string{first.Task}, false)
	wantCode(t, err, exitcode.Usage)
	if s := h.read("m"); strings.Contains(s, "queued two") || strings.Contains(s, "queued three") {
		t.Fatalf("a canceled prompt was typed:\n%s", s)
	}
	if m := h.member("m"); m.Queued != 0 {
		t.Fatalf("row %+v", m)
	}
}

// A process that dies mid-turn: prompt --wait and wait end with outcome ended (exit 3) and the
// exit code; the running task fails with the code, the queued one fails untyped.
func TestCrashMidTurnFailsItsTasks(t *testing.T) {
	h := newParallelHerd(t)
	h.startFake(t, "m", "FAKEENGINE_TURN=2s")
	waitDone := make(chan *herd.WaitResult, 1)
	waitErr := make(chan error, 1)
	crash, err := h.c.Prompt(h.ctx, "m", "crash 7", herd.PromptOptions{Wait: true, States: []string{"working"}, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("crash prompt: %+v %v", crash, err)
	}
	go func() {
		r, err := h.c.Wait(h.ctx, []string{"m"}, herd.WaitOptions{States: []string{"done", "idle"}, Timeout: testTimeout})
		waitDone <- r
		waitErr <- err
	}()
	queued, err := h.c.Prompt(h.ctx, "m", "after the crash", herd.PromptOptions{Wait: true, Timeout: testTimeout})
	wantCode(t, err, exitcode.Gone)
	if !queued.Queued || queued.Outcome != herd.OutcomeEnded || queued.ExitCode == nil || *queued.ExitCode != 7 {
		t.Fatalf("queued prompt into a member that crashed: %+v", queued)
	}
	w := <-waitDone
	err = <-waitErr
	wantCode(t, err, exitcode.Gone)
	if o := w.Results[0]; w.Outcome != herd.OutcomeEnded || o.State != herd.StateGone || o.ExitCode == nil || *o.ExitCode != 7 {
		t.Fatalf("wait on a member that crashed: %+v", w)
	}
	task, err := h.c.Task(h.ctx, crash.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.State != "failed" || !strings.Contains(task.Note, "code 7") {
		t.Fatalf("crashed task %+v", task)
	}
	qt, err := h.c.Task(h.ctx, queued.Task)
	if err != nil {
		t.Fatal(err)
	}
	if qt.Open || qt.State != "failed" || !strings.Contains(qt.Note, "never typed") {
		t.Fatalf("queued task of a crashed member %+v", qt)
	}
	if m := h.member("m"); m.State != herd.StateGone || m.ExitCode == nil || *m.ExitCode != 7 {
		t.Fatalf("row %+v", m)
	}
	st, err := h.c.Stats(h.ctx, "m", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if ms := st.Members[0].TotalsMs; ms[herd.StateGone] != 0 {
		t.Fatalf("a departed member accrues time: %+v", ms)
	}
}

// A follow-up into the running task (an A2A message/send carrying its id) is queued into that
// task: the task stays open past its first turn and ends once the follow-up's turn ends.
func TestContinueQueuesIntoTheRunningTask(t *testing.T) {
	h := newParallelHerd(t)
	h.startFake(t, "m", "FAKEENGINE_TURN=1s")
	first, err := h.c.Prompt(h.ctx, "m", "first turn", herd.PromptOptions{Wait: true, States: []string{"working"}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	cont, err := h.c.Prompt(h.ctx, "m", "second turn", herd.PromptOptions{Continue: first.Task, Wait: true, States: []string{"done", "idle"}, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("continue: %+v %v", cont, err)
	}
	if cont.Task != first.Task {
		t.Fatalf("the follow-up minted %s, want it in %s", cont.Task, first.Task)
	}
	task, err := h.c.Task(h.ctx, first.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || (task.State != herd.StateDone && task.State != herd.StateIdle) || task.Artifact == nil || !strings.Contains(task.Artifact.Text, "second turn") {
		t.Fatalf("continued task %+v", task)
	}
	found := false
	for _, tr := range task.Transitions {
		if strings.HasPrefix(tr.Note, "continued: second turn") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no continued note: %+v", task.Transitions)
	}
	if s := h.read("m"); !strings.Contains(s, "first turn") || !strings.Contains(s, "❯ second turn") {
		t.Fatalf("screen:\n%s", s)
	}
	// A task that has ended takes no follow-up.
	_, err = h.c.Prompt(h.ctx, "m", "late", herd.PromptOptions{Continue: first.Task})
	wantCode(t, err, exitcode.Usage)
}

// A follow-up into the running task goes ahead of a task already queued behind it (the running
// task stays open for it, so behind that task it would wait forever), and a follow-up into a
// queued task goes right behind that task: every turn is typed, in the order of its task, and
// no task is superseded.
func TestContinueGoesRightBehindItsTask(t *testing.T) {
	h := newParallelHerd(t)
	h.startFake(t, "m", "FAKEENGINE_TURN=1s")
	first, err := h.c.Prompt(h.ctx, "m", "turn one", herd.PromptOptions{Wait: true, States: []string{"working"}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.c.Prompt(h.ctx, "m", "turn three", herd.PromptOptions{})
	if err != nil || !second.Queued {
		t.Fatalf("second prompt: %+v %v", second, err)
	}
	if _, err := h.c.Prompt(h.ctx, "m", "turn two", herd.PromptOptions{Continue: first.Task}); err != nil {
		t.Fatalf("follow-up into the running task behind a queued one: %v", err)
	}
	if _, err := h.c.Prompt(h.ctx, "m", "turn four", herd.PromptOptions{Continue: second.Task}); err != nil {
		t.Fatalf("follow-up into a queued task: %v", err)
	}
	last, err := h.c.Prompt(h.ctx, "m", "turn five", herd.PromptOptions{Wait: true, States: []string{"done", "idle"}, Timeout: testTimeout})
	if err != nil || last.Outcome == "timeout" {
		t.Fatalf("the queue never reached the last prompt: %+v %v", last, err)
	}
	// A continued task keeps every turn's output, in order, not only its last turn's.
	for id, turns := range map[string][2]string{first.Task: {"turn one", "turn two"}, second.Task: {"turn three", "turn four"}} {
		task, err := h.c.Task(h.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Open || (task.State != herd.StateDone && task.State != herd.StateIdle) || task.Artifact == nil {
			t.Fatalf("task %s, continued with %q: %+v", id, turns[1], task)
		}
		a, b := strings.Index(task.Artifact.Text, turns[0]), strings.LastIndex(task.Artifact.Text, turns[1])
		if a < 0 || b < a {
			t.Fatalf("task %s keeps %q, want both turns' output (%q then %q)", id, task.Artifact.Text, turns[0], turns[1])
		}
	}
	s := h.read("m")
	prev := -1
	for _, turn := range []string{"turn one", "turn two", "turn three", "turn four", "turn five"} {
		at := strings.Index(s, "❯ "+turn)
		if at <= prev {
			t.Fatalf("%q typed out of order:\n%s", turn, s)
		}
		prev = at
	}
}

// restore --resume twice: the resume arguments go before the member's own arguments at launch
// only, never into what the manifest remembers, so they never stack (--continue --continue).
func TestRestoreResumeDoesNotStack(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", false)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "r", Env: env, Args: []string{"--model", "x"}}); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		h.wait("r", herd.StateIdle)
		if _, err := h.c.Prompt(h.ctx, "r", "exit 0", herd.PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		h.wait("r", herd.StateGone)
		res, err := h.c.Restore(h.ctx, herd.RestoreOptions{Resume: true})
		if err != nil || len(res.Actions) != 1 {
			t.Fatalf("restore: %+v %v", res, err)
		}
		act := res.Actions[0]
		if strings.Join(act.Args, " ") != "--continue --model x" {
			t.Fatalf("round %d: restore --resume ran %q, want --continue once before the member's own args", round, act.Args)
		}
		if m := h.member("r"); strings.Join(m.Args, " ") != "--model x" {
			t.Fatalf("round %d: the member remembers %q, want its own args", round, m.Args)
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", act.Pid))
		if err == nil && len(cmdline) > 0 && strings.Count(string(cmdline), "--continue") != 1 {
			t.Fatalf("round %d: process runs %q", round, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
}

// An Escape interrupt: the running task ends interrupted (not done), and the prompt the engine
// put back into its input box is cleared with the engine's own keys before the next prompt is
// typed, so the two are never glued together.
func TestInterruptedTaskAndLeftoverInputCleared(t *testing.T) {
	h := newParallelHerd(t)
	h.startFake(t, "m", "FAKEENGINE_SLOW=1h", "FAKEENGINE_RESTORE_ON_ESC=1")
	first, err := h.c.Prompt(h.ctx, "m", "slow first", herd.PromptOptions{Wait: true, States: []string{"working"}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.SendKeys(h.ctx, "m", "Escape"); err != nil {
		t.Fatal(err)
	}
	h.wait("m", herd.StateIdle)
	h.waitScreen("m", "❯\u00a0slow first")
	task, err := h.c.Task(h.ctx, first.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.State != "interrupted" {
		t.Fatalf("interrupted task %+v", task)
	}
	second, err := h.c.Prompt(h.ctx, "m", "say second", herd.PromptOptions{Wait: true, States: []string{"done", "idle"}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	screen := h.read("m")
	if strings.Contains(screen, "slow firstsay second") || !strings.Contains(screen, "❯ say second") {
		t.Fatalf("the next prompt was glued to the leftover input:\n%s", screen)
	}
	st, err := h.c.Task(h.ctx, second.Task)
	if err != nil || st.Open || !strings.Contains(st.Artifact.Text, "say second") {
		t.Fatalf("second task %+v %v", st, err)
	}
}

// Queued prompts live in the daemon's memory: a daemon killed with -9 cannot type them, and the
// next daemon's reads close them gone (never typed) instead of leaving them submitted forever.
func TestQueuedTaskReconciledAfterDaemonKill9(t *testing.T) {
	h := newHerd(t)
	h.run("rc", askScript)
	h.wait("rc", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "rc", "long job", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	q, err := h.c.Prompt(h.ctx, "rc", "waits its turn", herd.PromptOptions{})
	if err != nil || !q.Queued {
		t.Fatalf("queued: %+v %v", q, err)
	}
	h.kill9()
	task, err := h.c.Task(h.ctx, q.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.State != herd.StateGone || !strings.Contains(task.Note, "never typed") {
		t.Fatalf("queued task after a daemon kill -9: %+v", task)
	}
}
