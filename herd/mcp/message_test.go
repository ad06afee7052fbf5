package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

// A blocked agent is never answered by spawn: the result says blocked / answer. message_agent
// then delivers the text as the answer (typed as is, through the answer path), and the turn
// goes on to completion. A follow-up NOTE and REVIEW_FINDINGS are wrapped with their headers.
func TestMessageAnswersBlockedAndWrapsHeaders(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	var res AgentResult
	text := e.ok("spawn_agent", map[string]any{"prompt": "perm please", "kind": "claude", "cwd": repo, "timeout_ms": 60000}, "AgentResult", &res)
	if res.Status != statusBlocked || res.NextAction != nextAnswer || res.HerdStatus != herd.StateBlocked || !strings.Contains(text, "Never answer for them") {
		t.Fatalf("spawn into a dialog: %+v\n%s", res, text)
	}
	// Nothing answered it: it is still blocked on the same task.
	if m := e.member(res.Agent.Name); m == nil || m.State != herd.StateBlocked {
		t.Fatalf("after spawn returned: %+v", m)
	}
	if tk, _ := e.c.Task(e.ctx, res.HerdTask); !tk.Open || tk.State != herd.StateBlocked {
		t.Fatalf("task %+v", tk)
	}
	var ans AgentResult
	e.ok("message_agent", map[string]any{"target": res.TaskID, "message": "1", "kind": "ANSWER", "wait": true, "timeout_ms": 60000}, "AgentResult", &ans)
	if ans.Delivered == nil || ans.Delivered.As != "answer" || ans.Delivered.Text != "1" || ans.Status != statusCompleted {
		t.Fatalf("answer: %+v delivered %+v", ans, ans.Delivered)
	}

	// A NOTE to an idle owned agent is a new turn of the task, wrapped.
	var note AgentResult
	e.ok("message_agent", map[string]any{"target": res.Agent.Name, "message": "Also add a line", "wait": true, "timeout_ms": 60000}, "AgentResult", &note)
	if note.Delivered.As != "prompt" || note.Delivered.Kind != "NOTE" || note.HerdTask == res.HerdTask || note.Status != statusCompleted {
		t.Fatalf("note %+v %+v", note, note.Delivered)
	}
	tk, err := e.c.Task(e.ctx, note.HerdTask)
	if err != nil || !strings.HasPrefix(tk.Text, "NOTE: Also add a line\n<agent-message from=\"herd:orchestrator\" to=\""+res.Agent.Name+"\">") {
		t.Fatalf("typed %q %v", tk.Text, err)
	}
	if rec, _ := e.s.store.load(res.TaskID); rec.HerdTask != note.HerdTask || rec.Status != statusCompleted {
		t.Fatalf("record follows the follow-up turn: %+v", rec)
	}
	var rf AgentResult
	e.ok("message_agent", map[string]any{"target": res.TaskID, "message": "MAJOR a.txt:1 wrong word", "kind": "REVIEW_FINDINGS", "round": 2, "wait": true}, "AgentResult", &rf)
	tk, _ = e.c.Task(e.ctx, rf.HerdTask)
	if !strings.HasPrefix(tk.Text, "REVIEW_FINDINGS round 2: ") || !strings.Contains(tk.Text, reviewPrologue) || !strings.Contains(tk.Text, "MAJOR a.txt:1 wrong word") {
		t.Fatalf("review findings typed %q", tk.Text)
	}

	// A foreign agent can be messaged; the result is an observation.
	e.startForeign("peer")
	var obs AgentResult
	e.ok("message_agent", map[string]any{"target": "peer", "message": "hello peer", "kind": "ACCEPT", "wait": true}, "AgentResult", &obs)
	if obs.Owned || obs.Status != statusIdle || obs.Delivered.Kind != "ACCEPT" || !strings.Contains(obs.FinalMessage, "ACCEPT: hello peer") {
		t.Fatalf("foreign message %+v", obs)
	}
}

// interrupt_agent stops the turn (the engine's interrupt keys), keeps the agent, and records
// interrupted; a foreign agent is refused.
func TestInterruptRecordsInterrupted(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "slow work", "kind": "claude", "cwd": repo, "wait": false}, "AgentResult", &res)
	if _, err := e.c.Wait(e.ctx, []string{res.Agent.Name}, herd.WaitOptions{States: []string{herd.StateWorking}, Timeout: safety}); err != nil {
		t.Fatal(err)
	}
	var got AgentResult
	e.ok("interrupt_agent", map[string]any{"target": res.TaskID}, "AgentResult", &got)
	if got.RecordStatus != recInterrupted || got.Status != statusFailed || !strings.Contains(got.Error, "interrupted") {
		t.Fatalf("interrupt %+v", got)
	}
	if _, err := e.c.Wait(e.ctx, []string{res.Agent.Name}, herd.WaitOptions{States: []string{herd.StateIdle, herd.StateDone}, Timeout: safety}); err != nil {
		t.Fatalf("the turn did not stop: %v", err)
	}
	if m := e.member(res.Agent.Name); m == nil || !m.Alive {
		t.Fatal("interrupt killed the agent")
	}
	if tk, _ := e.c.Task(e.ctx, res.HerdTask); tk.Open {
		t.Fatalf("the task is still open: %+v", tk)
	}
	if rec, _ := e.s.store.load(res.TaskID); rec.Status != recInterrupted {
		t.Fatalf("record %+v", rec)
	}
	e.startForeign("peer")
	if msg := e.fails("interrupt_agent", map[string]any{"target": "peer"}); !strings.Contains(msg, "not spawned by this adapter") {
		t.Fatal(msg)
	}
}

// read_agent pages the agent's own Claude Code transcript (the projects/<cwd> JSONL the hooks'
// transcript_path names); a task that failed before its agent started is NO_TRANSCRIPT with the
// recorded error.
func TestReadAgentTranscriptAndNoTranscript(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Say hi", "kind": "claude", "cwd": repo}, "AgentResult", &res)
	if msg := e.fails("read_agent", map[string]any{"target": res.TaskID}); !strings.HasPrefix(msg, "herd_read_agent: NO_TRANSCRIPT") {
		t.Fatalf("no session file yet: %s", msg)
	}
	dir, _ := transcriptDir(e.getenv, "claude", res.Cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 7000)
	jsonl := `{"type":"summary","summary":"s"}
{"type":"user","message":{"role":"user","content":"Say hi"}}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Let me look."}]}}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls -la\n/tmp","description":"list"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"a.txt","is_error":false}]},"toolUseResult":{"durationMs":12}}
{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"tu2","name":"Edit","input":{"file_path":"/r/a.txt","old_string":"a"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu2","content":[{"type":"text","text":"denied"}],"is_error":true}]}}
{"type":"assistant","message":{"id":"m3","role":"assistant","content":[{"type":"text","text":"` + long + `"}]}}
`
	if err := os.WriteFile(filepath.Join(dir, "sess.jsonl"), []byte(jsonl), 0o600); err != nil {
		t.Fatal(err)
	}
	var p TranscriptPage
	e.ok("read_agent", map[string]any{"target": res.TaskID, "limit": 3}, "TranscriptPage", &p)
	if p.Total != 6 || p.Format != "claude" || len(p.Messages) != 3 || p.NextFrom == nil || *p.NextFrom != 3 || p.PrevFrom != nil {
		t.Fatalf("page 1 %+v", p)
	}
	m := p.Messages
	if m[0].Role != "user" || m[0].Text != "Say hi" || m[1].Role != "assistant" || m[1].Text != "Let me look." ||
		len(m[1].ToolCalls) != 1 || m[1].ToolCalls[0] != (ToolCall{Name: "Bash", Detail: "ls -la /tmp"}) ||
		m[2].Role != "tool" || m[2].ToolName != "Bash" || m[2].Text != "a.txt" || m[2].DurationMs != 12 || m[2].IsError {
		t.Fatalf("turns %+v", m)
	}
	e.ok("read_agent", map[string]any{"target": res.Agent.Name, "from": 3, "limit": 3}, "TranscriptPage", &p)
	m = p.Messages
	if len(m) != 3 || p.NextFrom != nil || p.PrevFrom == nil || *p.PrevFrom != 0 || m[0].ToolCalls[0].Detail != "/r/a.txt" ||
		m[1].ToolName != "Edit" || !m[1].IsError || m[1].Text != "denied" || len(m[2].Text) != maxTurnChars || !m[2].Truncated {
		t.Fatalf("page 2 %+v", p)
	}
	var got AgentResult
	e.ok("get_agent_result", map[string]any{"target": res.TaskID}, "AgentResult", &got)
	if got.SessionPath != filepath.Join(dir, "sess.jsonl") {
		t.Fatalf("sessionPath %q", got.SessionPath)
	}

	// codex is not on this PATH: the agent never starts, the record says why.
	var failed AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "x", "kind": "codex", "cwd": repo}, "AgentResult", &failed)
	if failed.Status != statusFailed || failed.RecordStatus != statusFailed || !strings.Contains(failed.Error, "starting") || failed.NextAction != nextInspect {
		t.Fatalf("failed spawn %+v", failed)
	}
	msg := e.fails("read_agent", map[string]any{"target": failed.TaskID})
	if !strings.Contains(msg, "NO_TRANSCRIPT") || !strings.Contains(msg, failed.Error) {
		t.Fatalf("NO_TRANSCRIPT: %s", msg)
	}
}

// pi's session JSONL: message lines with user / assistant (toolCall blocks) / toolResult roles.
func TestParsePiTranscript(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	data := `{"type":"session","id":"x","cwd":"/r"}
{"type":"message","message":{"role":"user","content":[{"type":"text","text":"fix it"}]}}
{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"go test ./..."}}]}}
{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"PASS"}],"isError":false}}
`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	turns, err := parseTranscript(p, "pi")
	if err != nil || len(turns) != 3 {
		t.Fatalf("%+v %v", turns, err)
	}
	if turns[0].Text != "fix it" || turns[1].Text != "ok" || turns[1].ToolCalls[0] != (ToolCall{Name: "bash", Detail: "go test ./..."}) || turns[2].Role != "tool" || turns[2].ToolName != "bash" || turns[2].Text != "PASS" {
		t.Fatalf("%+v", turns)
	}
	if d, f := transcriptDir(os.Getenv, "pi", "/home/u/code/api"); f != "pi" || filepath.Base(d) != "--home-u-code-api--" {
		t.Fatalf("pi dir %s", d)
	}
	if d, _ := transcriptDir(os.Getenv, "claude", "/home/u/my.repo"); filepath.Base(d) != "-home-u-my-repo" {
		t.Fatalf("claude dir %s", d)
	}
}

// Model aliases and thinking levels come from the engines table; the reviewer gets the read-only
// envelope.
func TestModelThinkingAndReviewerEnvelope(t *testing.T) {
	e := newEnv(t, "")
	p, err := e.s.planSpawn(spawnIn{Prompt: "x", Kind: ptr("cc"), Model: ptr("opus")})
	if err != nil || p.kind != "claude" || p.model != "opus" || !slices.Equal(p.args, []string{"--model", "opus"}) {
		t.Fatalf("claude opus: %+v %v", p, err)
	}
	p, err = e.s.planSpawn(spawnIn{Prompt: "x", Kind: ptr("codex"), Thinking: ptr("high"), Model: ptr("gpt-5"), AgentArgs: []string{"--foo"}})
	if err != nil || !slices.Equal(p.args, []string{"--model", "gpt-5", "-c", "model_reasoning_effort=high"}) {
		t.Fatalf("codex: %+v %v", p, err)
	}
	p, err = e.s.planSpawn(spawnIn{Prompt: "x", Kind: ptr("pi"), Thinking: ptr("low")})
	if err != nil || !slices.Equal(p.args, []string{"--thinking", "low"}) || p.kind != "pi" {
		t.Fatalf("pi: %+v %v", p, err)
	}
	if p, _ := e.s.planSpawn(spawnIn{Prompt: "x"}); p.kind != "pi" {
		t.Fatalf("default kind %s, want the seed's pi", p.kind)
	}

	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Review the change\nLook at a.txt", "kind": "claude", "cwd": repo, "role": "reviewer"}, "AgentResult", &res)
	tk, _ := e.c.Task(e.ctx, res.HerdTask)
	if res.Role != "reviewer" || !strings.Contains(tk.Text, "REVIEWER: read only") || strings.Contains(tk.Text, "Work only inside") {
		t.Fatalf("reviewer envelope %q", tk.Text)
	}
	var w AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Fix a.txt", "kind": "claude", "cwd": repo}, "AgentResult", &w)
	tk, _ = e.c.Task(e.ctx, w.HerdTask)
	if !strings.Contains(tk.Text, "Work only inside "+repo) || strings.Contains(tk.Text, "REVIEWER") {
		t.Fatalf("worker envelope %q", tk.Text)
	}
}

// doctor: {ok, checks[], next[], aliases[], runtime}.
func TestDoctor(t *testing.T) {
	e := newEnv(t, `{"defaultKind": "claude"}`)
	var d DoctorResult
	text := e.ok("doctor", map[string]any{}, "DoctorResult", &d)
	if !d.OK || d.Runtime["toolPrefix"] != DefaultPrefix || !strings.Contains(text, "herd.daemon") {
		t.Fatalf("doctor %+v\n%s", d, text)
	}
	names := map[string]string{}
	for _, c := range d.Checks {
		names[c.Name] = c.Level
	}
	if names["herd.daemon"] != "ok" || names["engine.claude"] != "ok" || names["mcp.dir"] != "ok" || names["engine.codex"] != "warn" {
		t.Fatalf("checks %+v", d.Checks)
	}
	if !slices.Contains(d.Aliases, ModelAlias{Kind: "claude", Alias: "opus", Model: "opus"}) {
		t.Fatalf("aliases %+v", d.Aliases)
	}
	// The default kind missing from PATH is a failure with its fix.
	if err := os.WriteFile(ConfigPath(e.home), []byte(`{"defaultKind": "codex", "maxParallelAgents": 0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := New(Options{Client: e.c, Home: e.home, Cwd: e.home})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	out, _, _ := s2.doctor(e.ctx, doctorIn{})
	d2 := out.(DoctorResult)
	if d2.OK || len(d2.Next) < 2 || !strings.Contains(strings.Join(d2.Next, "\n"), "defaultKind") || !strings.Contains(strings.Join(d2.Next, "\n"), "config.json") {
		t.Fatalf("doctor with codex default %+v", d2)
	}
}

// Owned-task records survive a daemon restart; retention prunes settled ones.
func TestRecordsSurviveRestartAndRetention(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Say hi", "kind": "claude", "cwd": repo}, "AgentResult", &res)
	ctx, cancel := context.WithTimeout(e.ctx, safety)
	defer cancel()
	if _, err := e.c.DaemonStop(ctx, true); err != nil {
		t.Fatal(err)
	}
	c2, err := herd.Connect(ctx, herd.ConnectOptions{Home: e.home})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	s2, err := New(Options{Client: c2, Home: e.home, Cwd: e.home})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	out, _, err := s2.getResult(ctx, getIn{Target: res.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*AgentResult)
	if got.TaskID != res.TaskID || !got.Owned || got.FinalMessage != res.FinalMessage || got.HerdTask != res.HerdTask || got.Status != statusCompleted {
		t.Fatalf("after restart %+v", got)
	}
	e.c = c2 // cleanup stops this daemon

	// Retention: settled records past maxTasks go, the oldest first; a running one stays.
	st := s2.store
	now := time.Now().UnixMilli()
	var ids []string
	for i, status := range []string{recRunning, statusCompleted, statusFailed, recClosed} {
		r := &record{ID: newTaskID(), Status: status, Name: "x", CreatedMs: now - int64(10-i)*1000}
		if err := st.create(r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	removed := st.prune(Retention{MaxTasks: 2, MaxAgeDays: 30})
	left := map[string]bool{}
	for _, r := range st.all() {
		left[r.ID] = true
	}
	// Newest first: res (completed, kept 1), closed (kept 2), failed (removed), completed (removed), running (kept).
	if !left[res.TaskID] || !left[ids[3]] || !left[ids[0]] || left[ids[1]] || left[ids[2]] || len(removed) != 2 {
		t.Fatalf("removed %v, left %v", removed, left)
	}
	old := &record{ID: newTaskID(), Status: statusCompleted, Name: "x", CreatedMs: now - 40*24*3600*1000}
	_ = st.create(old)
	st.prune(Retention{MaxTasks: 100, MaxAgeDays: 30})
	if _, err := st.load(old.ID); !os.IsNotExist(err) {
		t.Fatalf("a record past maxAgeDays survived: %v", err)
	}
}

// An agent that shows a dialog before its task (Codex's hook-trust menu) is returned blocked with
// nothing typed; once the host answers, the envelope is typed and the task runs to completion.
func TestBootDialogThenEnvelope(t *testing.T) {
	e := newEnv(t, "", "FAKEENGINE_HOOK_TRUST=1")
	bin := filepath.Join(e.home, "bin")
	script := "#!/bin/sh\nexec '" + fake.Path() + "' --style codex\n"
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Say hi from codex", "kind": "codex", "cwd": repo, "timeout_ms": 60000}, "AgentResult", &res)
	if res.Status != statusBlocked || res.HerdTask != "" || res.NextAction != nextAnswer || !strings.Contains(res.Error, "dialog") {
		t.Fatalf("boot dialog: %+v", res)
	}
	if ts, _ := e.c.Tasks(e.ctx, herdFilter(res.Agent.Name)); len(ts) != 0 {
		t.Fatalf("something was typed into the dialog: %+v", ts)
	}
	var got AgentResult
	e.ok("message_agent", map[string]any{"target": res.TaskID, "message": "2", "kind": "ANSWER", "wait": true, "timeout_ms": 60000}, "AgentResult", &got)
	if got.Delivered.As != "answer" || got.Status != statusCompleted || got.HerdTask == "" || !strings.Contains(got.FinalMessage, "Say hi from codex") {
		t.Fatalf("after the answer: %+v", got)
	}
	tk, _ := e.c.Task(e.ctx, got.HerdTask)
	if !strings.Contains(tk.Text, "<agent-message") {
		t.Fatalf("the record's task is not the envelope: %q", tk.Text)
	}
}

// A message to a working owned agent waits in the member's queue; with wait it returns when that
// queued turn (not the running one) ends.
func TestMessageQueuedBehindARunningTurn(t *testing.T) {
	e := newEnv(t, "", "FAKEENGINE_SLOW=2s")
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "slow first", "kind": "claude", "cwd": repo, "wait": false}, "AgentResult", &res)
	if _, err := e.c.Wait(e.ctx, []string{res.Agent.Name}, herd.WaitOptions{States: []string{herd.StateWorking}, Timeout: safety}); err != nil {
		t.Fatal(err)
	}
	var got AgentResult
	e.ok("message_agent", map[string]any{"target": res.TaskID, "message": "then this", "wait": true, "timeout_ms": 60000}, "AgentResult", &got)
	if got.Delivered.As != "queued" || got.Status != statusCompleted || got.HerdTask == res.HerdTask || !strings.Contains(got.FinalMessage, "then this") {
		t.Fatalf("queued message: %+v", got)
	}
	if first, _ := e.c.Task(e.ctx, res.HerdTask); first.Open {
		t.Fatalf("the first turn is still open after the queued one ended: %+v", first)
	}
}

// message_agent with wait:false returns at once (running), and the record then moves on by
// itself when the turn ends: nobody has to call get_agent_result for it to stop reading running.
func TestMessageNoWaitSettlesTheRecordByItself(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "say one", "kind": "claude", "cwd": repo, "timeout_ms": 60000}, "AgentResult", &res)
	if res.Status != statusCompleted {
		t.Fatalf("spawn: %+v", res)
	}
	var sent AgentResult
	e.ok("message_agent", map[string]any{"target": res.TaskID, "message": "say two", "wait": false}, "AgentResult", &sent)
	if sent.Status != statusRunning || sent.HerdTask == res.HerdTask {
		t.Fatalf("wait:false: %+v", sent)
	}
	// The condition, not a sleep: the record file changes when the watcher settles it.
	deadline := time.Now().Add(2 * safety)
	for {
		rec, err := e.s.store.load(res.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.HerdTask == sent.HerdTask && rec.Status == statusCompleted && rec.SettledMs != 0 {
			break
		}
		if time.Now().After(deadline) {
			tk, _ := e.c.Task(e.ctx, sent.HerdTask)
			t.Fatalf("the record still reads %s (herd task %s: %+v) with nobody calling get_agent_result", rec.Status, sent.HerdTask, tk)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
