package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Spawn in a real repo: the record exists, the envelope is typed, the wait ends on the turn's
// end, and the AgentResult carries the engine's final message and the git evidence; get_result
// returns the same task, list_agents marks it owned and a member started by someone else foreign.
func TestSpawnGetResultList(t *testing.T) {
	e := newEnv(t, "")
	repo := e.repo()
	e.startForeign("other")

	var res AgentResult
	text := e.ok("spawn_agent", map[string]any{"prompt": "Add a greeting file\nWrite hello.txt with one line.", "kind": "claude", "cwd": repo, "timeout_ms": 60000,
		"agent_args": []string{"--verbose"}}, "AgentResult", &res)
	if res.Status != statusCompleted || res.NextAction != nextReview || !res.Owned || res.Role != "worker" {
		t.Fatalf("spawn result %+v\n%s", res, text)
	}
	if !validTaskID(res.TaskID) || res.HerdTask == "" || res.Agent.Kind != "claude" || !strings.HasPrefix(res.Agent.Name, "claude-") {
		t.Fatalf("ids %+v", res)
	}
	if !strings.Contains(res.FinalMessage, "Add a greeting file") || res.FinalSource == "" {
		t.Fatalf("final message %q (source %s): want the engine's answer", res.FinalMessage, res.FinalSource)
	}
	if res.Diff == nil || len(res.Diff.BaselineHead) != 40 || res.Diff.Stat != "" || len(res.Diff.Untracked) != 0 {
		t.Fatalf("diff %+v: want a clean baseline", res.Diff)
	}
	if !strings.Contains(text, "[completed]") || !strings.Contains(text, "Final message:") {
		t.Fatalf("model-facing text:\n%s", text)
	}
	// The engine got access to the artifact directory (the engines table's addDirArgs).
	if m := e.member(res.Agent.Name); m == nil || !strings.Contains(strings.Join(m.Args, " "), "--add-dir "+res.ArtifactDir+" --verbose") {
		t.Fatalf("member args %+v", m)
	}
	// The record is on disk, private, and says completed.
	fi, err := os.Stat(filepath.Join(e.home, "mcp", "runs", res.TaskID, "task.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("task.json %v %v", fi, err)
	}
	for _, d := range []string{filepath.Join(e.home, "mcp"), filepath.Join(e.home, "mcp", "runs"), filepath.Join(e.home, "mcp", "runs", res.TaskID)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v, want 0700", d, fi, err)
		}
	}
	rec, err := e.s.store.load(res.TaskID)
	if err != nil || rec.Status != statusCompleted || rec.HerdTask != res.HerdTask || rec.SettledMs == 0 {
		t.Fatalf("record %+v %v", rec, err)
	}
	// The envelope went in: the ledger task's text is it.
	task, err := e.c.Task(e.ctx, res.HerdTask)
	if err != nil || !strings.Contains(task.Text, "<agent-message from=\"herd:orchestrator\"") || !strings.Contains(task.Text, "result.md") {
		t.Fatalf("typed %q %v", task.Text, err)
	}

	for _, tgt := range []string{res.TaskID, res.Agent.Name, res.HerdTask} {
		var got AgentResult
		e.ok("get_agent_result", map[string]any{"target": tgt}, "AgentResult", &got)
		if got.TaskID != res.TaskID || got.Status != statusCompleted || got.FinalMessage != res.FinalMessage {
			t.Fatalf("get_agent_result(%s) = %+v", tgt, got)
		}
	}

	var fl FleetList
	e.ok("list_agents", map[string]any{}, "FleetList", &fl)
	if len(fl.Agents) != 2 {
		t.Fatalf("fleet %+v", fl)
	}
	for _, a := range fl.Agents {
		switch a.Name {
		case "other":
			if a.Owned || !a.ReadOnly || a.TaskID != "" {
				t.Fatalf("foreign row %+v", a)
			}
		case res.Agent.Name:
			if !a.Owned || a.ReadOnly || a.TaskID != res.TaskID || a.Status != statusCompleted {
				t.Fatalf("owned row %+v", a)
			}
		default:
			t.Fatalf("row %+v", a)
		}
	}
	e.ok("list_agents", map[string]any{"owned_only": true}, "FleetList", &fl)
	if len(fl.Agents) != 1 || fl.Agents[0].Name != res.Agent.Name {
		t.Fatalf("owned_only %+v", fl)
	}

	// A foreign member is observed, never prompted.
	var obs AgentResult
	before, _ := e.c.Tasks(e.ctx, herdFilter("other"))
	e.ok("get_agent_result", map[string]any{"target": "other"}, "AgentResult", &obs)
	if obs.Owned || obs.Status != statusIdle || obs.NextAction != nextNone {
		t.Fatalf("observation %+v", obs)
	}
	after, _ := e.c.Tasks(e.ctx, herdFilter("other"))
	if len(after) != len(before) {
		t.Fatalf("observing a foreign member submitted a task: %d → %d", len(before), len(after))
	}
}

// TestSpawnStartupFailureSaysWhy: an agent whose engine exits during start-up (Claude Code as root
// with its autonomous flag) is a failed AgentResult whose error carries the engine's last screen
// lines, not only an exit code.
func TestSpawnStartupFailureSaysWhy(t *testing.T) {
	e := newEnv(t, "")
	claude := filepath.Join(e.home, "bin", "claude")
	_ = os.Remove(claude)
	const why = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
	if err := os.WriteFile(claude, []byte("#!/bin/sh\necho '"+why+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var res AgentResult
	text := e.ok("spawn_agent", map[string]any{"prompt": "Add a greeting file", "kind": "claude", "cwd": e.repo(), "timeout_ms": 60000}, "AgentResult", &res)
	if res.Status != statusFailed || !strings.Contains(res.Error, why) || !strings.Contains(res.Error, "exited with code 1") {
		t.Fatalf("status %s, error %q\n%s", res.Status, res.Error, text)
	}
	if !strings.Contains(text, why) {
		t.Errorf("the model-facing text says why:\n%s", text)
	}
}
