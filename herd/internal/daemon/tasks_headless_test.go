package daemon

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
)

// Headless calls (ai()) as the daemon records them: begin mints an open task that reads working,
// end closes it with its outcome, and no call stays open once its caller or its daemon is gone.

func TestHeadlessCallIsATask(t *testing.T) {
	h := newHerd(t)
	started := time.Now().Add(-1500 * time.Millisecond)
	call, err := h.c.BeginHeadless(h.ctx, "ai-claude", "what is two plus two?", started)
	if err != nil {
		t.Fatal(err)
	}
	id := h.headlessTask("ai-claude", 0)
	tk := h.task(id)
	if !tk.Open || tk.Queued || tk.State != herd.StateWorking || tk.Member != "ai-claude" || tk.SubmittedMs != started.UnixMilli() {
		t.Fatalf("in flight: %+v", tk)
	}
	if ts := h.tasksOf("ai-claude"); len(ts) != 1 || ts[0].State != herd.StateWorking || !ts[0].Open {
		t.Fatalf("tasks in flight: %+v", ts)
	}
	ended := started.Add(1234 * time.Millisecond)
	if err := h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: call, State: herd.StateDone, Answer: "four",
		Usage: json.RawMessage(`{"output_tokens": 1, "input_tokens": 9}`), EndedMs: ended.UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	tk = h.task(id)
	if tk.Open || tk.State != herd.StateDone || tk.DurationMs != 1234 || tk.EndedMs != ended.UnixMilli() {
		t.Fatalf("closed: %+v", tk)
	}
	if a := tk.Artifact; a == nil || a.Text != "four" || a.Source != "headless" {
		t.Fatalf("artifact %+v", tk.Artifact)
	}
	if tk.Note != `usage {"input_tokens":9,"output_tokens":1}` {
		t.Fatalf("note %q", tk.Note)
	}
	// Ended once: a second end is refused, and the task keeps its first.
	err = h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: call, State: "failed", Error: "late"})
	wantCode(t, err, exitcode.Gone)
	if tk = h.task(id); tk.State != herd.StateDone {
		t.Fatalf("a second end changed the task: %+v", tk)
	}
}

// Calls of one member run at once: each has its own task, none supersedes another, and each
// ends as its own call did.
func TestHeadlessCallsRunAtOnce(t *testing.T) {
	h := newHerd(t)
	var calls, ids []string
	for i, q := range []string{"q1", "q2", "q3"} {
		call, err := h.c.BeginHeadless(h.ctx, "ai-codex", q, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, call)
		ids = append(ids, h.headlessTask("ai-codex", i))
	}
	for _, tk := range h.tasksOf("ai-codex") {
		if !tk.Open || tk.State != herd.StateWorking {
			t.Fatalf("a call in flight reads %+v", tk)
		}
	}
	if err := h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: calls[2], State: herd.StateDone, Answer: "a3"}); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: calls[0], State: "failed", Error: "codex exited with code 1: quota"}); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: calls[1], State: "canceled", Error: "the script stopped the call"}); err != nil {
		t.Fatal(err)
	}
	want := []struct{ state, art, source string }{
		{"failed", "codex exited with code 1: quota", "error"},
		{"canceled", "the script stopped the call", "error"},
		{"done", "a3", "headless"},
	}
	for i, id := range ids {
		tk := h.task(id)
		if tk.Open || tk.State != want[i].state || tk.Artifact == nil || tk.Artifact.Text != want[i].art || tk.Artifact.Source != want[i].source {
			t.Fatalf("%s: %+v artifact %+v, want %+v", id, tk, tk.Artifact, want[i])
		}
		if want[i].state != "done" && tk.Note != want[i].art {
			t.Fatalf("%s: note %q, want the error", id, tk.Note)
		}
	}
}

// A call whose caller goes away (its script was killed: the connection ends) is closed failed.
func TestHeadlessCallOfAGoneCallerIsClosedFailed(t *testing.T) {
	h := newHerd(t)
	caller, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := caller.BeginHeadless(h.ctx, "ai-claude", "a long question", time.Time{}); err != nil {
		t.Fatal(err)
	}
	id := h.headlessTask("ai-claude", 0)
	caller.Close()
	// The daemon closes it when it sees the connection end: wait for that (the condition), a
	// generous bound only for a broken daemon.
	deadline := time.Now().Add(testTimeout)
	for {
		tk := h.task(id)
		if !tk.Open {
			if tk.State != "failed" || tk.Artifact == nil || !strings.Contains(tk.Artifact.Text, "the caller went away before the answer") {
				t.Fatalf("closed as %+v (artifact %+v)", tk, tk.Artifact)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gone caller's call is still open: %+v", tk)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A call open when its daemon was killed (kill -9: nothing could close it) is closed gone by the
// next read, like any open task whose member stopped.
func TestHeadlessCallOpenAtDaemonKill9IsReconciled(t *testing.T) {
	h := newHerd(t)
	call, err := h.c.BeginHeadless(h.ctx, "ai-gemini", "still thinking", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	id := h.headlessTask("ai-gemini", 0)
	h.kill9()
	ts := h.tasksOf("ai-gemini")
	if len(ts) != 1 || ts[0].ID != id || ts[0].Open || ts[0].State != herd.StateGone || !strings.Contains(ts[0].Note, "the ai() call ended without recording its answer") {
		t.Fatalf("after kill -9: %+v", ts)
	}
	// The new daemon knows no such call (a handle is only good on the connection that began it).
	err = h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: call, State: herd.StateDone, Answer: "too late"})
	wantCode(t, err, exitcode.Gone)
}

func TestHeadlessCallRefusals(t *testing.T) {
	h := newHerd(t)
	_, err := h.c.BeginHeadless(h.ctx, "claude", "x", time.Time{})
	wantCode(t, err, exitcode.Usage) // not a headless name
	_, err = h.c.BeginHeadless(h.ctx, "ai-claude", "  ", time.Time{})
	wantCode(t, err, exitcode.Usage) // no prompt
	h.run("ai-mine", echoScript)
	_, err = h.c.BeginHeadless(h.ctx, "ai-mine", "x", time.Time{})
	wantCode(t, err, exitcode.Usage) // a running member has the name
	call, err := h.c.BeginHeadless(h.ctx, "ai-claude", "x", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	err = h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: call, State: herd.StateIdle})
	wantCode(t, err, exitcode.Usage) // done, failed or canceled only
	err = h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: "c-999", State: herd.StateDone})
	wantCode(t, err, exitcode.Gone)
	// Only the connection that began a call ends it.
	other, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	err = other.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: call, State: herd.StateDone})
	wantCode(t, err, exitcode.Gone)
	if err := h.c.EndHeadless(h.ctx, herd.HeadlessEndParams{Call: call, State: herd.StateDone, Answer: "y"}); err != nil {
		t.Fatal(err)
	}
}

// headlessTask is the id of member's i-th task (oldest first): a read lands the mints the daemon
// queued before it.
func (h *herdT) headlessTask(member string, i int) string {
	h.t.Helper()
	ts := h.tasksOf(member)
	if len(ts) <= i {
		h.t.Fatalf("%s has %d tasks, want a %dth: %+v", member, len(ts), i+1, ts)
	}
	return ts[i].ID
}

func TestHeadlessMemberNames(t *testing.T) {
	for in, want := range map[string]string{
		"claude": "ai-claude", "anthropic": "ai-anthropic", "My Engine": "ai-my-engine", "": "ai-model",
		strings.Repeat("x", 40): "ai-" + strings.Repeat("x", 29),
	} {
		got := herd.HeadlessMember(in)
		if got != want || herd.CheckName(got) != nil {
			t.Errorf("HeadlessMember(%q) = %q, want %q (a valid member name)", in, got, want)
		}
	}
}
