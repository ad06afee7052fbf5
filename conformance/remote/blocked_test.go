package remoteconf

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd"
)

// gatePromptHook installs the herd's Claude Code hooks for the fake engine of this herd (what
// `mosh herd hooks install claude` writes) with one change: the first UserPromptSubmit hook
// of a prompt saying "held-prompt" waits at a gate (a FIFO) until the test opens it. That is a hook process lagging behind the
// engine's screen, made deterministic: the prompt is typed, the screen shows the member at rest
// (its last done line, or the input box), and the engine's own word that it took the prompt up
// has not arrived. It returns the gate's path.
func (h *herdHome) gatePromptHook() string {
	h.t.Helper()
	h.must(nil, "herd", "hooks", "install", "claude")
	b, err := os.ReadFile(filepath.Join(h.home, ".claude", "settings.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher,omitempty"`
			Hooks   []struct {
				Type    string  `json:"type"`
				Command string  `json:"command"`
				Timeout float64 `json:"timeout,omitempty"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		h.t.Fatalf("the installed hooks: %v\n%s", err, b)
	}
	gate := filepath.Join(h.home, "prompt-gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		h.t.Fatal(err)
	}
	groups := settings.Hooks["UserPromptSubmit"]
	if len(groups) == 0 || len(groups[0].Hooks) == 0 {
		h.t.Fatalf("hooks install claude wrote no UserPromptSubmit hook:\n%s", b)
	}
	hk := &groups[0].Hooks[0]
	// One-shot: the first hook of a prompt with "held-prompt" in it waits for the test, others pass.
	hk.Command = "p=$(cat); case \"$p\" in *held-prompt*) if [ -p '" + gate + "' ]; then cat '" + gate + "' >/dev/null; rm -f '" + gate + "'; fi;; esac; " +
		"printf '%s' \"$p\" | { " + hk.Command + "; }"
	hk.Timeout = 300
	out, err := json.Marshal(settings)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.home, "fake-settings.json"), out, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return gate
}

// client is a herd.Client of this herd's running daemon (never starting one).
func (h *herdHome) client(ctx context.Context) *herd.Client {
	h.t.Helper()
	c, err := herd.NewClient(ctx, herd.Options{Home: h.home, NoStart: true, Getenv: func(string) string { return "" }})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// TestRemoteMemberBlockedOnPermission is eval finding 5 without a model: a remote member (a
// second herd over A2A, `mosh herd serve`) whose engine asks a permission — the fake engine's
// dialog on screen AND its PermissionRequest and Notification hooks, as Claude Code does —
// while its screen showed it at rest first (a prompt hook lagging behind the screen). The far
// herd keeps its task open; the A2A task must never read completed meanwhile (a terminal state
// the near herd cannot take back), and must read input-required with the question once the
// engine asks. The near herd reads blocked(permission) with the question, `mosh herd eval`
// reports the row blocked with it, both ledger tasks stay open, and an answer through the near
// herd continues the same task on both sides to the engine's final message.
func TestRemoteMemberBlockedOnPermission(t *testing.T) {
	t.Parallel() // each herd has its own HOME and MOSH_HOME, given to the mosh processes it runs
	far := newHerd(t)
	gate := far.gatePromptHook()
	far.must([]string{"FAKEENGINE_NOTIFY_AFTER=200ms"}, "herd", "start", "claude", "--name", "api")
	far.must(nil, "herd", "wait", "api", "--state", "idle", "--timeout", "60")
	s := far.serve()
	near := newHerd(t)
	near.must(tokenEnv("MOSH_REMOTE_FAR_TOKEN", s.token), "herd", "remote", "add", "far", s.memberURL("api"))
	// A turn first, as in the eval's dataset: the far engine's hooks have spoken since.
	var warm promptResult
	near.mustJSON(&warm, nil, "herd", "prompt", "far", "say hello", "--wait", "--state", "done", "--timeout", "60", "--json")
	if warm.State != herd.StateDone {
		t.Fatalf("the first remote turn: %+v", warm)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*cliSafety)
	defer cancel()
	// The far herd's events, from before the prompt: they say when its member, prompted, reads
	// at rest while the hook is held.
	sub, err := far.client(ctx).Subscribe(ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	warmTask := near.task(warm.Task).RemoteTaskID

	ds := filepath.Join(near.home, "perm.jsonl")
	if err := os.WriteFile(ds, []byte(`{"id":"perm","prompt":"deploy perm held-prompt","expect":"Created the file"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var evalOut, evalErr bytes.Buffer
	ev := near.cmd(ctx, tokenEnv("MOSH_REMOTE_FAR_TOKEN", s.token), "herd", "eval", "--dataset", ds, "--engines", "@far",
		"--blocked-grace", "1s", "--timeout", "80s", "--threshold", "0", "--json")
	ev.Stdout, ev.Stderr = &evalOut, &evalErr
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	evalDone := make(chan error, 1)
	go func() { evalDone <- ev.Wait() }()

	// 1. The prompt is typed at the far member (working) and its screen reads it at rest while
	// the engine's UserPromptSubmit hook waits at the gate.
	farTask, sawWorking := "", map[string]bool{}
	for farTask == "" {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("the far herd's event stream ended: %v", sub.Err())
			}
			if e.Type != herd.EventState || e.Task == "" || e.Task == warmTask {
				continue
			}
			switch e.State {
			case herd.StateWorking:
				sawWorking[e.Task] = true
			case herd.StateIdle, herd.StateDone:
				if sawWorking[e.Task] {
					farTask = e.Task
				}
			case herd.StateBlocked:
				t.Fatalf("the far member read blocked (%s) before its prompt hook ran", e.Authority)
			}
		case err := <-evalDone:
			t.Fatalf("the eval ended (%v) before the far member read its prompt\nstdout:\n%s\nstderr:\n%s", err, evalOut.String(), evalErr.String())
		case <-ctx.Done():
			t.Fatal("the far member never read at rest after its prompt")
		}
	}
	// 2. Its A2A task is open and not over: working, never completed.
	ac, err := a2a.NewClient(s.memberURL("api"), a2a.WithToken(s.token))
	if err != nil {
		t.Fatal(err)
	}
	at, err := ac.GetTask(ctx, farTask, -1)
	if err != nil {
		t.Fatal(err)
	}
	if at.Status.State != goa2a.TaskStateWorking {
		t.Errorf("far task %s reads %s over A2A while the far herd keeps it open (its screen at rest, the hook not in yet); want working: completed is terminal, the near herd closes its task with no answer", farTask, at.Status.State)
	}
	if ft := far.task(farTask); !ft.Open {
		t.Fatalf("the far herd closed %s on a screen at rest: %+v", farTask, ft)
	}

	// 3. The hook goes through; the engine asks its permission (dialog, PermissionRequest, then
	// the Notification).
	g, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	select {
	case err := <-evalDone:
		if err != nil {
			t.Errorf("mosh herd eval: %v\nstderr:\n%s", err, evalErr.String())
		}
	case <-ctx.Done():
		t.Fatalf("the eval did not end\nstderr:\n%s", evalErr.String())
	}
	var rep struct {
		Rows []struct {
			ID, Outcome, Answer, Question string
			TaskID                        string `json:"taskId"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(evalOut.Bytes(), &rep); err != nil || len(rep.Rows) != 1 {
		t.Fatalf("eval report (%v):\n%s\nstderr:\n%s", err, evalOut.String(), evalErr.String())
	}
	row := rep.Rows[0]
	if row.Outcome != "blocked" || !strings.HasPrefix(row.Question, "permission") || !strings.Contains(row.Question, "Do you want to proceed?") {
		t.Fatalf("the remote row: outcome %s, question %q, answer %q; want blocked, its question permission: … Do you want to proceed?", row.Outcome, row.Question, row.Answer)
	}

	// 4. The near herd reads blocked(permission), the remote's input-required, with the question;
	// both tasks are open; the A2A task is input-required with the question in its status.
	m := near.row("far")
	if m == nil || m.State != herd.StateBlocked || m.BlockedOn != "permission" || m.Remote == nil || m.Remote.RemoteState != "input-required" {
		t.Errorf("the near herd reads far as %+v (remote %+v); want blocked(permission), remote input-required", m, remoteOf(m))
	}
	var rd struct {
		State, BlockedOn, Screen string
	}
	near.mustJSON(&rd, nil, "herd", "read", "far", "--json")
	if rd.State != herd.StateBlocked || !strings.Contains(rd.Screen, "Do you want to proceed?") {
		t.Errorf("near herd read far: %+v; want blocked with the question", rd)
	}
	nt := near.task(row.TaskID)
	if !nt.Open || nt.State != herd.StateBlocked || nt.RemoteTaskID != farTask {
		t.Errorf("near task %s: %+v; want open, blocked, linked to %s", row.TaskID, nt, farTask)
	}
	if ft := far.task(farTask); !ft.Open || ft.State != herd.StateBlocked {
		t.Errorf("far task %s: %+v; want open and blocked", farTask, ft)
	}
	if at, err = ac.GetTask(ctx, farTask, -1); err != nil {
		t.Fatal(err)
	}
	if at.Status.State != goa2a.TaskStateInputRequired || at.Status.Message == nil || !strings.Contains(statusText(at), "Do you want to proceed?") {
		t.Errorf("far task %s over A2A: %s, status message %+v; want input-required with the question", farTask, at.Status.State, at.Status.Message)
	}

	// 5. An answer through the near herd continues that task, here and there.
	var pr promptResult
	near.mustJSON(&pr, tokenEnv("MOSH_REMOTE_FAR_TOKEN", s.token), "herd", "prompt", "far", "1", "--answer", "--wait", "--state", "done", "--timeout", "60", "--json")
	if pr.Task != row.TaskID || pr.State != herd.StateDone {
		t.Errorf("the answer: %+v; want task %s continued to done", pr, row.TaskID)
	}
	nt = near.task(row.TaskID)
	if nt.Open || nt.State != herd.StateDone || nt.Artifact == nil || nt.Artifact.Source != "remote" || !strings.Contains(nt.Artifact.Text, "Created the file.") {
		t.Errorf("near task %s after the answer: %+v (artifact %+v); want done with the engine's final message", row.TaskID, nt, nt.Artifact)
	}
	ft := far.task(farTask)
	if ft.Open || ft.State != herd.StateDone || ft.Artifact == nil || !strings.Contains(ft.Artifact.Text, "Created the file.") {
		t.Errorf("far task %s after the answer: %+v (artifact %+v); want done with the engine's final message", farTask, ft, ft.Artifact)
	}
	var tasks []task
	far.mustJSON(&tasks, nil, "herd", "tasks", "api", "--json")
	if len(tasks) != 2 {
		t.Errorf("the far member has %d tasks, want 2 (hello, perm): the answer continues the task, it mints none", len(tasks))
	}
}

// statusText is the text of an A2A task's status message.
func statusText(t *goa2a.Task) string {
	if t.Status.Message == nil {
		return ""
	}
	return a2a.PartsText(t.Status.Message.Parts)
}

// TestRemoteMemberAsksAgainInTheSameTask: the far engine asks a permission, is answered through
// the near herd, runs, and asks a second one in the same turn. The near herd must read that
// second question as blocked again (a remote herd's status message keeps one id per task, so the
// question answered is not told from the next one by its id), and a second answer finishes
// the one task on both sides.
func TestRemoteMemberAsksAgainInTheSameTask(t *testing.T) {
	t.Parallel() // each herd has its own HOME and MOSH_HOME, given to the mosh processes it runs
	far := newHerd(t)
	far.gatePromptHook() // the engine's hooks; no prompt here is held
	far.must(nil, "herd", "start", "claude", "--name", "api")
	far.must(nil, "herd", "wait", "api", "--state", "idle", "--timeout", "60")
	s := far.serve()
	near := newHerd(t)
	tok := tokenEnv("MOSH_REMOTE_FAR_TOKEN", s.token)
	near.must(tok, "herd", "remote", "add", "far", s.memberURL("api"))

	var first promptResult
	near.mustJSON(&first, tok, "herd", "prompt", "far", "deploy perm twice", "--wait", "--state", "blocked,done", "--timeout", "60", "--json")
	if first.State != herd.StateBlocked {
		t.Fatalf("the prompt: %+v; want blocked on the first permission", first)
	}
	r := near.run(tok, "herd", "prompt", "far", "1", "--answer", "--wait", "--state", "blocked,done", "--timeout", "30", "--json")
	var again promptResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &again) != nil || again.State != herd.StateBlocked || again.Task != first.Task {
		t.Fatalf("after the first answer the far engine asks again: the near herd must read blocked on task %s\n%s", first.Task, r)
	}
	if m := near.row("far"); m == nil || m.BlockedOn != "permission" {
		t.Errorf("the second question: %+v; want blocked(permission)", m)
	}
	var last promptResult
	near.mustJSON(&last, tok, "herd", "prompt", "far", "1", "--answer", "--wait", "--state", "done", "--timeout", "60", "--json")
	nt := near.task(first.Task)
	if last.Task != first.Task || nt.Open || nt.State != herd.StateDone || nt.Artifact == nil || !strings.Contains(nt.Artifact.Text, "Created the file.") {
		t.Errorf("after the second answer: %+v, task %+v (artifact %+v); want task %s done with the engine's final message", last, nt, nt.Artifact, first.Task)
	}
	var tasks []task
	far.mustJSON(&tasks, nil, "herd", "tasks", "api", "--json")
	if len(tasks) != 1 || tasks[0].Open || tasks[0].State != herd.StateDone {
		t.Errorf("the far member's tasks: %+v; want the one task, done", tasks)
	}
}
