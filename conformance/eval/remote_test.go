package evalconf

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines"
	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
)

// ledgerTask is `mosh herd task ID --json`, as far as these tests read it.
type ledgerTask struct {
	ID           string `json:"id"`
	Member       string `json:"member"`
	Text         string `json:"text"`
	State        string `json:"state"`
	BlockedOn    string `json:"blockedOn"`
	Open         bool   `json:"open"`
	Note         string `json:"note"`
	RemoteTaskID string `json:"remoteTaskId"`
	Transitions  []struct {
		State     string `json:"state"`
		BlockedOn string `json:"blockedOn"`
		Authority string `json:"authority"`
		Note      string `json:"note"`
	} `json:"transitions"`
	Artifact *struct {
		Text   string `json:"text"`
		Source string `json:"source"`
	} `json:"artifact"`
}

// task reads task id from herd h's ledger.
func (w *world) task(h *engines.Herd, id string) ledgerTask {
	w.t.Helper()
	var tk ledgerTask
	out := w.must(h, nil, "herd", "task", id, "--json")
	if err := json.Unmarshal([]byte(out), &tk); err != nil {
		w.t.Fatalf("mosh herd task %s --json: %v\n%s", id, err, out)
	}
	return tk
}

// TestEvalRemoteBlocked is eval finding 5 on its own: a remote member (a second herd served
// over A2A, used as @far) whose engine stops on a permission prompt must be the row outcome
// `blocked` with its question, exactly as a local member is — not `done` with an empty answer.
// The remote's A2A task stays input-required and its ledger task open; answering it through
// the near herd (`prompt --answer`) continues that same task to the engine's final message.
func TestEvalRemoteBlocked(t *testing.T) {
	list := engineList(t)
	w := newWorld(t, list, true)
	e := w.remoteEngine
	if !e.HasPermissionPrompt {
		t.Skipf("the remote member runs %s, which asks no permission (MOSH_EVAL_REMOTE=claude|codex|opencode)", e.Name)
	}
	ds, err := filepath.Abs("testdata/remote.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res := w.run(ctx, w.local, nil, "herd", "eval", "--dataset", ds, "--engines", "@far", "--threshold", "0.5",
		"--timeout", "4m", "--blocked-grace", "5s", "--json")
	_ = os.WriteFile(filepath.Join(w.out, "remote.json"), []byte(res.stdout), 0o644)
	var rep report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("the --json report is not JSON (%v):\n%s", err, res)
	}
	rows := map[string]row{}
	for _, r := range rep.Rows {
		rows[r.ID] = r
	}
	if r := rows["pong"]; r.Outcome != "pass" || strings.TrimSpace(r.Answer) != fakeapi.PlainText {
		t.Errorf("@far row pong: outcome %s answer %q, want pass with %q", r.Outcome, r.Answer, fakeapi.PlainText)
	}
	perm := rows["perm"]
	if perm.Outcome != "blocked" || strings.TrimSpace(perm.Question) == "" || perm.TaskID == "" {
		t.Fatalf("@far row perm: outcome %s, question %q, answer %q, task %q; want blocked with the remote's question\n%s",
			perm.Outcome, perm.Question, perm.Answer, perm.TaskID, res)
	}
	if res.code != 0 {
		t.Errorf("exit %d, want 0 (score 1/2 at threshold 0.5)\n%s", res.code, res.stderr)
	}
	t.Logf("@far row perm: blocked, question %q", perm.Question)

	// The near herd follows the remote's input-required: far reads blocked, its task is open.
	near := w.task(w.local, perm.TaskID)
	if !near.Open || near.State != "blocked" || near.RemoteTaskID == "" {
		t.Fatalf("near task %s: open %t state %s remote task %q; want open, blocked, linked to the remote's task", perm.TaskID, near.Open, near.State, near.RemoteTaskID)
	}
	// The far herd: its ledger task (the A2A task's id is the ledger's) is open and blocked.
	far := w.task(w.remote, near.RemoteTaskID)
	if !far.Open || far.State != "blocked" {
		t.Fatalf("far task %s: open %t state %s note %q; want open and blocked on the permission", far.ID, far.Open, far.State, far.Note)
	}

	// Answering through the near herd continues the same task at the remote, to the tool's end.
	out := w.must(w.local, nil, "herd", "prompt", "far", "1", "--answer", "--wait", "--state", "done,idle", "--timeout", "240", "--json")
	var p struct {
		Task    string `json:"task"`
		Outcome string `json:"outcome"`
		State   string `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("prompt --answer --json: %v\n%s", err, out)
	}
	if p.Task != perm.TaskID {
		t.Errorf("the answer went into task %s, want the blocked task %s continued", p.Task, perm.TaskID)
	}
	near = w.task(w.local, perm.TaskID)
	if near.Open || near.Artifact == nil || strings.TrimSpace(near.Artifact.Text) != fakeapi.FinalText {
		t.Errorf("near task %s after the answer: open %t state %s artifact %+v; want closed with %q", near.ID, near.Open, near.State, near.Artifact, fakeapi.FinalText)
	}
	far = w.task(w.remote, near.RemoteTaskID)
	if far.Open || far.State != "done" || far.Artifact == nil || strings.TrimSpace(far.Artifact.Text) != fakeapi.FinalText {
		t.Errorf("far task %s after the answer: open %t state %s artifact %+v; want done with %q", far.ID, far.Open, far.State, far.Artifact, fakeapi.FinalText)
	}
	var tasks []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(w.must(w.remote, nil, "herd", "tasks", "api", "--json")), &tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 {
		t.Errorf("the far member has %d tasks, want 2 (pong, perm): the answer must not mint one", len(tasks))
	}
	if t.Failed() {
		t.Logf("far task: %s", fmt.Sprintf("%+v", far))
	}
}
