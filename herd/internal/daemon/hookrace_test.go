package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
)

// The races between an engine's screen and its hooks (tasks_record.go): a hook is a process the
// engine starts, so its report can arrive after the screen already changed, on a loaded machine
// by seconds. The fake engine's --stop-delay and --take-delay stage those orders on purpose;
// --stop-gate and --take-gate stage them by the test's steps, whatever the load.

// startFake starts the fake Claude-style engine as member name with env and waits for idle.
func startFake(t *testing.T, h *herdT, name string, env []string) {
	t.Helper()
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: name, Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait(name, herd.StateIdle)
}

// promptAndAwaitEnd prompts name and waits, on the daemon's events, for that prompt's own task
// to end; it returns the task as read right then.
func promptAndAwaitEnd(t *testing.T, h *herdT, name, text string) *herd.Task {
	t.Helper()
	sub, err := h.c.Subscribe(h.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pr, err := h.c.Prompt(h.ctx, name, text, herd.PromptOptions{})
	if err != nil || pr.Task == "" {
		t.Fatalf("prompt %q: %+v %v", text, pr, err)
	}
	return awaitTaskEnd(t, h, sub, pr.Task)
}

func awaitTaskEnd(t *testing.T, h *herdT, sub *herd.Subscription, id string) *herd.Task {
	t.Helper()
	for {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("the event stream ended before task %s ended: %v", id, sub.Err())
			}
			if e.Task != id || !e.TaskEnded {
				continue
			}
			task, err := h.c.Task(h.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return task
		case <-h.ctx.Done():
			t.Fatalf("task %s did not end: %v", id, h.ctx.Err())
		}
	}
}

// The screen draws the turn's done before the Stop hook's report arrives: the task ends when the
// hook comes, with the engine's own final message, not on the screen's word with its text (the
// old daemon ended it on the screen and only patched the artifact later, so a reader woken by
// the end read screen text).
func TestStopHookAfterTheScreenEndsTheTask(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(60000)) // the Stop is late, but well within the grace, however loaded the machine
	startFake(t, h, "late", append(fakeEnv(t, "claude", true), "FAKEENGINE_STOP_DELAY=1s"))
	task := promptAndAwaitEnd(t, h, "late", "answer me")
	if task.Open || task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text != "answer me" {
		t.Fatalf("the task at its end: %+v, artifact %+v; want done with the Stop hook's message", task, task.Artifact)
	}
	if dr, err := h.c.Doctor(h.ctx); err != nil || hasCheck(dr, "silent hooks", "", "") {
		t.Fatalf("doctor calls reporting hooks silent: %v %+v", err, dr)
	}
}

// A tool hook of the previous turn arrives after the next prompt was typed, while that prompt
// still sits in the input box under the old done line: it does not make the new prompt taken
// up, so the old screen does not end the new task (the old daemon closed it done with the
// prompt's own text as its answer). The new task ends with its own turn.
func TestLateToolHookDoesNotTakeUpTheNextPrompt(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(60000))
	startFake(t, h, "lt", append(fakeEnv(t, "claude", true), "FAKEENGINE_TAKE_DELAY=1500ms"))
	if first := promptAndAwaitEnd(t, h, "lt", "one"); first.Artifact == nil || first.Artifact.Text != "one" {
		t.Fatalf("first task: %+v %+v", first, first.Artifact)
	}
	sub, err := h.c.Subscribe(h.ctx, "lt")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pr, err := h.c.Prompt(h.ctx, "lt", "hold two", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	late, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash", "session_id": "fake"})
	if _, err := h.c.Report(h.ctx, "lt", "", "", 0, late); err != nil {
		t.Fatal(err)
	}
	task := awaitTaskEnd(t, h, sub, pr.Task)
	if task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text != "hold two" {
		t.Fatalf("the second task: %+v, artifact %+v; want done with its own turn's answer", task, task.Artifact)
	}
	started := false
	for _, tr := range task.Transitions {
		started = started || (tr.State == herd.StateWorking && tr.Authority == herd.AuthorityHook)
	}
	if !started {
		t.Fatalf("the second task ended without the engine's working: %+v", task.Transitions)
	}
}

// The herd's hooks are installed for the engine but no hook ever reports (an engine that ignores
// them): the task ends on the screen's word after the grace, and says so.
func TestNoDoneHookEndsOnTheScreenAfterTheGrace(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(500))
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"` + strings.ReplaceAll(state.HookCommand("done"), `"`, `\"`) + `"}]}]}}`
	if !strings.Contains(settings, `herd report \"$MOSH_HERD_NAME\"`) {
		t.Fatalf("the settings do not carry the herd's hook marker: %s", settings)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	// The fake engine reads its own (empty) hook settings: nothing reports.
	startFake(t, h, "quiet", append(fakeEnv(t, "claude", false), "HOME="+home))
	task := promptAndAwaitEnd(t, h, "quiet", "hello")
	if task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Source != "screen" || !strings.Contains(task.Artifact.Text, "hello") {
		t.Fatalf("the task: %+v, artifact %+v; want done on the screen's word", task, task.Artifact)
	}
	said := false
	for _, tr := range task.Transitions {
		said = said || strings.Contains(tr.Note, "done hook did not come")
	}
	if !said {
		t.Fatalf("the task's history does not say it ended on the screen's word: %+v", task.Transitions)
	}
	// Doctor names the member whose installed hooks never fire.
	dr, err := h.c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasCheck(dr, "silent hooks", "warn", "quiet (claude, 1 task(s)") {
		t.Fatalf("doctor does not name the member whose hooks never report: %+v", dr.Checks)
	}
}

// The previous turn's Stop comes after its grace (the task already ended on the screen) and
// after the next prompt was typed, before the engine took that one up: it is the previous task's
// answer, not the new task's end (the old daemon ended the new task with the old answer). The
// test drives the fake engine by steps: the Stop waits for its gate, the second prompt waits in
// the box for its own, so the order holds however loaded the machine.
func TestLateStopOfThePreviousTurnIsItsAnswer(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(500))
	gates := t.TempDir()
	stopGate, takeGate := filepath.Join(gates, "stop"), filepath.Join(gates, "take")
	startFake(t, h, "ls", append(fakeEnv(t, "claude", true), "FAKEENGINE_STOP_GATE="+stopGate, "FAKEENGINE_TAKE_GATE="+takeGate))
	sub, err := h.c.Subscribe(h.ctx, "ls")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	first := promptAndAwaitEnd(t, h, "ls", "one")
	if first.Artifact == nil || first.Artifact.Source != "screen" {
		t.Fatalf("the first task ended before its Stop: want the screen's answer, got %+v", first.Artifact)
	}
	pr, err := h.c.Prompt(h.ctx, "ls", "hold two", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The second prompt is typed and held in the box: now the first turn's Stop comes.
	awaitFile(t, h, takeGate+".held")
	openGate(t, stopGate)
	again := awaitTask(t, h, first.ID, func(task *herd.Task) bool { return task.Artifact != nil && task.Artifact.Source == "hook" })
	if again.Artifact.Text != "one" {
		t.Fatalf("the first task's late Stop did not become its answer: %+v", again.Artifact)
	}
	if now, err := h.c.Task(h.ctx, pr.Task); err != nil || !now.Open {
		t.Fatalf("the first turn's late Stop ended the second task: %+v %v", now, err)
	}
	openGate(t, takeGate)
	second := awaitTaskEnd(t, h, sub, pr.Task)
	if second.Artifact != nil && second.Artifact.Text == "one" {
		t.Fatalf("the second task ended with the first turn's answer: %+v", second)
	}
	if second.Artifact == nil || !strings.Contains(second.Artifact.Text, "two") {
		t.Fatalf("the second task's answer: %+v", second.Artifact)
	}
}

// openGate creates the file a fake engine's --stop-gate or --take-gate waits for.
func openGate(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// awaitFile waits until path exists (the fake engine's word that it holds a prompt).
func awaitFile(t *testing.T, h *herdT, path string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-h.ctx.Done():
			t.Fatalf("%s never appeared: %v", path, h.ctx.Err())
		}
	}
}

// awaitTask reads task id until ok says it is as wanted, and returns it.
func awaitTask(t *testing.T, h *herdT, id string, ok func(*herd.Task) bool) *herd.Task {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		task, err := h.c.Task(h.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(task) {
			return task
		}
		select {
		case <-tick.C:
		case <-h.ctx.Done():
			t.Fatalf("task %s never became as wanted: %+v, artifact %+v", id, task, task.Artifact)
		}
	}
}

// graceFile is an engines.json override giving the fake Claude Code a hook grace of ms.
func graceFile(ms int) map[string]string {
	return map[string]string{"engines.json": fmt.Sprintf(`{"engines": [{"name": "claude", "hookGraceMs": %d}]}`, ms)}
}

// prompt --wait (herdAsk, the eval, A2A) answers with the prompt's own turn: not the old done
// line still on the screen while the prompt waits in the input box, not the screen's done while
// the engine's Stop is on its way. When it returns, the task has ended with the engine's answer.
func TestPromptWaitFollowsItsOwnTurn(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(60000))
	startFake(t, h, "pw", append(fakeEnv(t, "claude", true), "FAKEENGINE_STOP_DELAY=1s", "FAKEENGINE_TAKE_DELAY=1500ms"))
	for _, text := range []string{"first turn", "hold the second"} {
		r, err := h.c.Prompt(h.ctx, "pw", text, herd.PromptOptions{Wait: true, Timeout: testTimeout})
		if err != nil || r.Outcome != herd.OutcomeMatched || r.State != herd.StateDone {
			t.Fatalf("prompt --wait %q: %+v %v", text, r, err)
		}
		task, err := h.c.Task(h.ctx, r.Task)
		if err != nil {
			t.Fatal(err)
		}
		if task.Open || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text != text {
			t.Fatalf("prompt --wait %q returned before its turn ended: %+v, artifact %+v", text, task, task.Artifact)
		}
	}
}

// `wait NAME --state done` after a prompt answers once the turn's task has ended, not at the
// screen's done while the engine's Stop is on its way: what the waiter reads next is the task
// with the engine's answer (the eval reads it so after a blocked spell).
func TestWaitForDoneWaitsForThePendingTask(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(60000))
	startFake(t, h, "wd", append(fakeEnv(t, "claude", true), "FAKEENGINE_STOP_DELAY=1s"))
	pr, err := h.c.Prompt(h.ctx, "wd", "wait for me", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.wait("wd", herd.StateWorking)
	r, err := h.c.Wait(h.ctx, []string{"wd"}, herd.WaitOptions{States: []string{"done"}, Timeout: testTimeout})
	if err != nil || r.Outcome != herd.OutcomeMatched {
		t.Fatalf("wait: %+v %v", r, err)
	}
	task, err := h.c.Task(h.ctx, pr.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Open || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text != "wait for me" {
		t.Fatalf("wait answered before the task ended: %+v, artifact %+v", task, task.Artifact)
	}
}

// A member whose engine has the herd's hooks installed but has not reported one yet (its first
// prompt) is not taken up by the daemon's own prompt claim: an engine slower to start its turn
// than the claim lasts reads at rest again with the prompt still in its box, and that is not the
// turn's end (Claude Code --agent under load closed a task so, with no answer).
func TestInstalledHooksDoNotTakeTheClaimForATurn(t *testing.T) {
	h := newParallelHerdWith(t, graceFile(500))
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": state.HookCommand("done")}}}}}})
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	// Nothing reports (the fake reads its own empty settings); "hold" keeps the prompt in the box
	// 4 s, well past the prompt claim.
	startFake(t, h, "slow", append(fakeEnv(t, "claude", false), "HOME="+home, "FAKEENGINE_TAKE_DELAY=4s"))
	task := promptAndAwaitEnd(t, h, "slow", "hold on")
	worked := false
	for _, tr := range task.Transitions {
		worked = worked || (tr.State == herd.StateWorking && tr.Authority == herd.AuthorityScreen)
	}
	if !worked || task.State != herd.StateDone {
		t.Fatalf("the task ended before its turn ran: %+v", task)
	}
}
