package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// An isolated task runs in its own worktree on <prefix>/<taskId>; the work the agent leaves there
// (a changed file, a new file, result.md, inbox lines) comes back as evidence; the inbox reads,
// peeks and consumes; close refuses a dirty worktree without force and removes it with force.
func TestIsolatedWorktreeDiffInboxClose(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Change a.txt and add b.txt", "kind": "claude", "cwd": repo, "isolated": true, "wait": false}, "AgentResult", &res)
	wt := res.Worktree
	if wt == nil || wt.Branch != "herd/"+res.TaskID || wt.Repo != repo || filepath.Dir(wt.Path) != filepath.Join(e.home, "mcp", "worktrees") || res.Cwd != wt.Path {
		t.Fatalf("worktree %+v cwd %s", wt, res.Cwd)
	}
	if br := strings.TrimSpace(e.git(wt.Path, "rev-parse", "--abbrev-ref", "HEAD")); br != wt.Branch {
		t.Fatalf("worktree is on %q", br)
	}
	if m := e.member(res.Agent.Name); m == nil || m.Cwd != wt.Path {
		t.Fatalf("the agent does not run in the worktree: %+v", m)
	}
	// The agent's work.
	if err := os.WriteFile(filepath.Join(wt.Path, "a.txt"), []byte("one\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.Path, "b.txt"), []byte("new file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resultMD := "status: completed\nsummary: greeted\ntests: go test ./... (3 passed)\nfiles: a.txt, b.txt\n\nDone.\n"
	if err := os.WriteFile(filepath.Join(res.ArtifactDir, "result.md"), []byte(resultMD), 0o600); err != nil {
		t.Fatal(err)
	}
	inbox := `{"ts":"2026-10-20T09:00:00Z","type":"REVIEW_REQUEST","text":"please check a.txt"}` + "\n" +
		`{"ts":"2026-10-20T09:00:01Z","type":"WEIRD","text":"odd type"}` + "\n" +
		`{"ts":"2026-10-20T09:00:02Z","type":"COMPLETE","text":"partial line, no newline yet"}`
	if err := os.WriteFile(filepath.Join(res.ArtifactDir, inboxFile), []byte(inbox), 0o600); err != nil {
		t.Fatal(err)
	}

	var got AgentResult
	e.ok("get_agent_result", map[string]any{"target": res.TaskID, "timeout_ms": 60000}, "AgentResult", &got)
	if got.Status != statusCompleted {
		t.Fatalf("status %s: %+v", got.Status, got)
	}
	d := got.Diff
	if d == nil || strings.Join(d.Files, ",") != "a.txt" || strings.Join(d.Untracked, ",") != "b.txt" || !strings.Contains(d.Stat, "1 file changed") ||
		!strings.Contains(d.Patch, "+hello") || !strings.Contains(d.Patch, "+new file") || d.Truncated || d.PatchBytes != len(d.Patch) {
		t.Fatalf("diff %+v", d)
	}
	if b, err := os.ReadFile(d.PatchPath); err != nil || string(b) != d.Patch {
		t.Fatalf("diff.patch %q %v", b, err)
	}
	if got.Tests != "go test ./... (3 passed)" || got.Summary != "greeted" || !got.Result.Exists || got.Result.Meta["files"] != "a.txt, b.txt" {
		t.Fatalf("result.md evidence %+v tests %q summary %q", got.Result, got.Tests, got.Summary)
	}
	if strings.Join(got.Files, ",") != "a.txt,b.txt" || got.Inbox == nil || got.Inbox.Pending != 2 {
		t.Fatalf("files %v inbox %+v", got.Files, got.Inbox)
	}

	// Peek twice, then consume, then nothing is left; the partial line waits for its newline.
	var ib InboxResult
	for i := 0; i < 2; i++ {
		e.ok("inbox", map[string]any{"target": res.TaskID, "consume": false}, "InboxResult", &ib)
		if len(ib.Messages) != 2 || ib.Consumed {
			t.Fatalf("peek %d: %+v", i, ib)
		}
	}
	if m := ib.Messages; m[0].Type != "REVIEW_REQUEST" || m[0].Text != "please check a.txt" || m[1].Type != "NOTE" || m[1].OriginalType != "WEIRD" || m[0].TaskID != res.TaskID {
		t.Fatalf("messages %+v", m)
	}
	e.ok("inbox", map[string]any{"target": res.TaskID, "limit": 1}, "InboxResult", &ib)
	if len(ib.Messages) != 1 || !ib.More || ib.Messages[0].Type != "REVIEW_REQUEST" {
		t.Fatalf("limit 1: %+v", ib)
	}
	e.ok("inbox", map[string]any{}, "InboxResult", &ib) // every open task
	if len(ib.Messages) != 1 || ib.Messages[0].OriginalType != "WEIRD" || ib.More {
		t.Fatalf("rest: %+v", ib)
	}
	e.ok("inbox", map[string]any{"target": res.TaskID}, "InboxResult", &ib)
	if len(ib.Messages) != 0 {
		t.Fatalf("consumed messages came back: %+v", ib)
	}
	if rec, _ := e.s.store.load(res.TaskID); rec.InboxOffset == 0 {
		t.Fatal("the offset is not in the task record")
	}
	// The partial line completes while a long-poll waits.
	done := make(chan InboxResult, 1)
	go func() {
		r := e.call("inbox", map[string]any{"target": res.TaskID, "wait": true, "timeout_ms": 60000})
		var out InboxResult
		raw, _ := json.Marshal(r.StructuredContent)
		_ = json.Unmarshal(raw, &out)
		done <- out
	}()
	f, err := os.OpenFile(filepath.Join(res.ArtifactDir, inboxFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n")
	f.Close()
	if lp := <-done; len(lp.Messages) != 1 || lp.Messages[0].Type != "COMPLETE" || lp.TimedOut {
		t.Fatalf("long-poll %+v", lp)
	}

	// Close: a foreign agent is refused; a dirty worktree needs force.
	e.startForeign("bystander")
	if msg := e.fails("close_agent", map[string]any{"target": "bystander"}); !strings.Contains(msg, "not spawned by this adapter") {
		t.Fatalf("closing a foreign agent: %s", msg)
	}
	if msg := e.fails("close_agent", map[string]any{"target": res.TaskID, "remove_worktree": true}); !strings.Contains(msg, "uncommitted changes") || !strings.Contains(msg, "force") {
		t.Fatalf("dirty worktree: %s", msg)
	}
	if _, err := os.Stat(wt.Path); err != nil {
		t.Fatalf("a refused close removed the worktree: %v", err)
	}
	var closed AgentResult
	e.ok("close_agent", map[string]any{"target": res.TaskID, "remove_worktree": true, "force": true}, "AgentResult", &closed)
	if closed.RecordStatus != recClosed || closed.Status != statusGone || closed.Worktree == nil || !closed.Worktree.Removed {
		t.Fatalf("closed %+v", closed)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}
	if br := e.git(repo, "branch", "--list", wt.Branch); !strings.Contains(br, wt.Branch) {
		t.Fatalf("the branch went with the worktree: %q", br)
	}
	if m := e.member(res.Agent.Name); m != nil && m.Alive {
		t.Fatalf("the agent still runs: %+v", m)
	}
	if m := e.member("bystander"); m == nil || !m.Alive {
		t.Fatal("closing one agent touched another")
	}
}

func (e *env) member(name string) *herd.Member {
	e.t.Helper()
	ms, err := e.c.List(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

// A repeat spawn with the same client_task_id returns the existing task and starts nothing.
func TestClientTaskIDIsIdempotent(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	args := map[string]any{"prompt": "Say hi", "kind": "claude", "cwd": repo, "client_task_id": "host-42"}
	var a, b AgentResult
	e.ok("spawn_agent", args, "AgentResult", &a)
	e.ok("spawn_agent", args, "AgentResult", &b)
	if a.TaskID != b.TaskID || b.ClientTaskID != "host-42" || b.Agent.Name != a.Agent.Name || b.HerdTask != a.HerdTask {
		t.Fatalf("repeat returned another task: %s/%s vs %s/%s", a.TaskID, a.HerdTask, b.TaskID, b.HerdTask)
	}
	ms, _ := e.c.List(e.ctx)
	if len(ms) != 1 {
		t.Fatalf("%d members after a repeat spawn, want 1", len(ms))
	}
	if ts, _ := e.c.Tasks(e.ctx, herdFilter(a.Agent.Name)); len(ts) != 1 {
		t.Fatalf("the repeat typed the envelope again: %d tasks", len(ts))
	}
	var c AgentResult
	args["client_task_id"] = "host-43"
	e.ok("spawn_agent", args, "AgentResult", &c)
	if c.TaskID == a.TaskID {
		t.Fatal("another key returned the same task")
	}
}

// Over the concurrency cap a spawn waits queueTimeoutMs for a slot, then is refused with the wait
// named; closing the running agent frees its slot.
func TestConcurrencyCapQueueTimeout(t *testing.T) {
	e := newEnv(t, `{"maxParallelAgents": 1, "queueTimeoutMs": 300}`)
	repo := e.repo()
	var first AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "slow one", "kind": "claude", "cwd": repo, "wait": false}, "AgentResult", &first)
	if first.Status != statusRunning || first.NextAction != nextWait {
		t.Fatalf("first %+v", first)
	}
	msg := e.fails("spawn_agent", map[string]any{"prompt": "second", "kind": "claude", "cwd": repo})
	if !strings.Contains(msg, "concurrency cap") || !strings.Contains(msg, "waited") || !strings.Contains(msg, "queueTimeoutMs 300") || !strings.Contains(msg, "maxParallelAgents 1") {
		t.Fatalf("refusal: %s", msg)
	}
	if ms, _ := e.c.List(e.ctx); len(ms) != 1 {
		t.Fatalf("a refused spawn started a member: %d", len(ms))
	}
	if msg := e.fails("close_agent", map[string]any{"target": first.TaskID}); !strings.Contains(msg, "is working") {
		t.Fatalf("closing a working agent without force: %s", msg)
	}
	e.ok("close_agent", map[string]any{"target": first.TaskID, "force": true}, "AgentResult", nil)
	var second AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "second", "kind": "claude", "cwd": repo}, "AgentResult", &second)
	if second.Status != statusCompleted {
		t.Fatalf("after close: %+v", second)
	}
}

// Gates: allowCwd, a missing cwd, enabled:false, a remote machine.
func TestSpawnGates(t *testing.T) {
	e := newEnv(t, "")
	allowed, other := e.repo(), e.repo()
	cfg := `{"allowCwd": [` + jsonString(allowed) + `]}`
	if err := os.WriteFile(ConfigPath(e.home), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := New(Options{Client: e.c, Home: e.home, Cwd: e.home})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	_, _, err = s2.spawn(e.ctx, spawnIn{Prompt: "x", Kind: ptr("claude"), Cwd: ptr(other)})
	if err == nil || !strings.Contains(err.Error(), `parameter "cwd"`) || !strings.Contains(err.Error(), "inside allowCwd") || !strings.Contains(err.Error(), allowed) {
		t.Fatalf("outside allowCwd: %v", err)
	}
	_, _, err = s2.spawn(e.ctx, spawnIn{Prompt: "x", Kind: ptr("claude"), Cwd: ptr(filepath.Join(allowed, "nope"))})
	if err == nil || !strings.Contains(err.Error(), "an existing directory") {
		t.Fatalf("missing cwd: %v", err)
	}
	if ms, _ := e.c.List(e.ctx); len(ms) != 0 {
		t.Fatalf("a refused spawn started %d members", len(ms))
	}
	if err := os.WriteFile(ConfigPath(e.home), []byte(`{"enabled": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s3, err := New(Options{Client: e.c, Home: e.home, Cwd: e.home})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if _, _, err = s3.spawn(e.ctx, spawnIn{Prompt: "x", Kind: ptr("claude"), Cwd: ptr(allowed)}); err == nil || !strings.Contains(err.Error(), `"enabled": false`) {
		t.Fatalf("disabled: %v", err)
	}
	// isolated outside a repository: the record says why, and no member was started.
	var nr AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "x", "kind": "claude", "cwd": e.home, "isolated": true}, "AgentResult", &nr)
	if nr.Status != statusFailed || !strings.Contains(nr.Error, "isolated needs cwd inside a git repository") || nr.Agent.Alive {
		t.Fatalf("isolated outside a repo: %+v", nr)
	}
	if rec, err := e.s.store.load(nr.TaskID); err != nil || rec.Status != statusFailed || rec.Error != nr.Error {
		t.Fatalf("the failed spawn left no record: %+v %v", rec, err)
	}
	if ms, _ := e.c.List(e.ctx); len(ms) != 0 {
		t.Fatalf("a failed spawn started %d members", len(ms))
	}
	msg := e.fails("spawn_agent", map[string]any{"prompt": "x", "kind": "claude", "machine": "builder"})
	if !strings.Contains(msg, "not supported") || !strings.Contains(msg, "remote add") {
		t.Fatalf("remote spawn: %s", msg)
	}
}

func ptr[T any](v T) *T { return &v }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Every out-of-range or wrong-type argument is an error naming the parameter and what it takes;
// unknown arguments are errors; documented clamps clamp.
func TestBadParameters(t *testing.T) {
	e := newEnv(t, "")
	cases := []struct {
		tool  string
		args  map[string]any
		param string
		want  string
	}{
		{"spawn_agent", map[string]any{"prompt": "x", "timeout_ms": "soon"}, "timeout_ms", "clamped to 10000..3600000"},
		{"spawn_agent", map[string]any{"prompt": "x", "timeout_ms": -5}, "timeout_ms", "clamped to 10000..3600000"},
		{"spawn_agent", map[string]any{"prompt": "x", "timeout_ms": 1.5}, "timeout_ms", "an integer"},
		{"spawn_agent", map[string]any{"prompt": "x", "role": "boss"}, "role", "worker or reviewer"},
		{"spawn_agent", map[string]any{"prompt": "x", "name": "Bad Name"}, "name", "^[a-z][a-z0-9_-]{0,31}$"},
		{"spawn_agent", map[string]any{"prompt": "x", "kind": "nosuch"}, "kind", "claude"},
		{"spawn_agent", map[string]any{"prompt": "x", "kind": "claude", "thinking": "high"}, "thinking", "takes no thinking level"},
		{"spawn_agent", map[string]any{"prompt": "x", "kind": "codex", "thinking": "max"}, "thinking", "low, medium, high, xhigh"},
		{"spawn_agent", map[string]any{"prompt": "x", "kind": "shell", "model": "big"}, "model", "takes no model"},
		{"spawn_agent", map[string]any{"kind": "claude"}, "prompt", "a non-empty string"},
		{"spawn_agent", map[string]any{"prompt": "stop\x03now"}, "prompt", "control character"},
		{"message_agent", map[string]any{"target": "x", "message": "a\x1bb"}, "message", "control character"},
		{"spawn_agent", map[string]any{"prompt": "x", "colour": "red"}, "colour", "unknown parameter"},
		{"spawn_agent", map[string]any{"prompt": "x", "agent_args": []any{1}}, "agent_args", "an array of strings"},
		{"spawn_agent", map[string]any{"prompt": "x", "wait": "yes"}, "wait", "a boolean"},
		{"spawn_agent", map[string]any{"prompt": "x", "client_task_id": ""}, "client_task_id", "1..200"},
		{"get_agent_result", map[string]any{"target": "x", "lines": 0}, "lines", "1..10000"},
		{"get_agent_result", map[string]any{"target": "x", "lines": 20000}, "lines", "1..10000"},
		{"get_agent_result", map[string]any{"target": ""}, "target", "a task id"},
		{"get_agent_result", map[string]any{"target": "Not A Name"}, "target", "a task id"},
		{"message_agent", map[string]any{"target": "x", "message": "hi", "round": 0}, "round", "1..1000"},
		{"message_agent", map[string]any{"target": "x", "message": "hi", "kind": "HELLO"}, "kind", "NOTE, REVIEW_FINDINGS, ACCEPT, REJECT or ANSWER"},
		{"message_agent", map[string]any{"target": "x", "message": ""}, "message", "a non-empty string"},
		{"list_agents", map[string]any{"owned_only": "yes"}, "owned_only", "a boolean"},
		{"inbox", map[string]any{"limit": 0}, "limit", "capped at 200"},
		{"inbox", map[string]any{"timeout_ms": 0}, "timeout_ms", "clamped to 10000..3600000"},
		{"read_agent", map[string]any{"target": "x", "from": -1}, "from", ">= 0"},
		{"read_agent", map[string]any{"target": "x", "limit": -3}, "limit", "capped at 100"},
		{"close_agent", map[string]any{"target": "x", "force": 1}, "force", "a boolean"},
		{"interrupt_agent", map[string]any{"target": "x", "now": true}, "now", "unknown parameter"},
		{"doctor", map[string]any{"verbose": true}, "verbose", "takes no parameters"},
	}
	for _, c := range cases {
		msg := e.fails(c.tool, c.args)
		if !strings.Contains(msg, `parameter "`+c.param+`"`) || !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: %q, want it to name %q and say %q", c.tool, c.args, msg, c.param, c.want)
		}
		// The tool is named once, in front: the host shows which tool failed already.
		if !strings.HasPrefix(msg, DefaultPrefix+c.tool+": ") || strings.Count(msg, c.tool) != 1 {
			t.Errorf("%s %v: %q names the tool other than once, in front", c.tool, c.args, msg)
		}
	}
	// An error from inside a tool (not about a parameter) also names it once.
	if msg := e.fails("get_agent_result", map[string]any{"target": "nobody"}); !strings.HasPrefix(msg, DefaultPrefix+"get_agent_result: ") || strings.Count(msg, "get_agent_result") != 1 {
		t.Errorf("get_agent_result of an unknown agent: %q names the tool other than once, in front", msg)
	}
	if ms, _ := e.c.List(e.ctx); len(ms) != 0 {
		t.Fatalf("bad arguments started %d members", len(ms))
	}
	// The documented clamps clamp instead of refusing.
	for _, c := range []struct{ in, want int64 }{{1, minTimeoutMs}, {5_000_000, maxTimeoutMs}, {20_000, 20_000}} {
		got, err := intParam("timeout_ms", &c.in, 0, minTimeoutMs, maxTimeoutMs, true, "")
		if err != nil || got != c.want {
			t.Errorf("timeout_ms %d → %d %v, want %d", c.in, got, err, c.want)
		}
	}
	big := int64(500)
	if got, err := intParam("limit", &big, 50, 1, inboxCap, true, ""); err != nil || got != inboxCap {
		t.Errorf("limit 500 → %d %v, want the 200 cap", got, err)
	}
	// The input schemas say so too.
	tools, err := e.cs.ListTools(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 9 {
		t.Fatalf("%d tools", len(tools.Tools))
	}
	for _, tl := range tools.Tools {
		raw, _ := json.Marshal(tl.InputSchema)
		if !strings.HasPrefix(tl.Name, DefaultPrefix) || !strings.Contains(string(raw), `"additionalProperties":false`) {
			t.Errorf("%s schema %s", tl.Name, raw)
		}
		if tl.Name == DefaultPrefix+"spawn_agent" && (!strings.Contains(string(raw), `"required":["prompt"]`) || !strings.Contains(string(raw), "clamped to 10000..3600000")) {
			t.Errorf("spawn schema %s", raw)
		}
	}
}

// A long-poll with nothing arriving ends at its (clamped) timeout with timedOut and no messages;
// an inbox target that is not owned is refused.
func TestInboxLongPollTimesOut(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Say hi", "kind": "claude", "cwd": repo}, "AgentResult", &res)
	var ib InboxResult
	e.ok("inbox", map[string]any{"target": res.TaskID, "wait": true, "timeout_ms": 1}, "InboxResult", &ib) // clamped to 10 s
	if !ib.TimedOut || len(ib.Messages) != 0 {
		t.Fatalf("long-poll %+v", ib)
	}
	e.startForeign("stranger")
	if msg := e.fails("inbox", map[string]any{"target": "stranger"}); !strings.Contains(msg, "only owned tasks have an inbox") {
		t.Fatal(msg)
	}
}
