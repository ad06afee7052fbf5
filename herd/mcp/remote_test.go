package mcp

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

// A remote member already on the roster (another herd's A2A agent) is listed by machine, messaged
// and observed; spawning on a machine is refused with what it would take.
func TestRemoteMemberOnTheRoster(t *testing.T) {
	e := newEnv(t, "")
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: 50 * time.Millisecond})
	if _, err := e.c.RemoteAdd(e.ctx, "far", srv.URL, herd.RemoteAddOptions{}); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	e.startForeign("near")
	var fl FleetList
	e.ok("list_agents", map[string]any{"machine": u.Host}, "FleetList", &fl)
	if len(fl.Agents) != 1 || fl.Agents[0].Name != "far" || fl.Agents[0].Machine != u.Host || fl.Agents[0].Owned || !fl.Agents[0].ReadOnly {
		t.Fatalf("machine %s: %+v", u.Host, fl)
	}
	if msg := e.fails("list_agents", map[string]any{"machine": "nowhere:1"}); !strings.Contains(msg, "no remote members on machine") {
		t.Fatal(msg)
	}
	var res AgentResult
	e.ok("message_agent", map[string]any{"target": "far", "machine": u.Host, "message": "ping remote", "wait": true, "timeout_ms": 30000}, "AgentResult", &res)
	if res.Owned || res.Agent.Machine != u.Host || res.Delivered == nil || res.Delivered.HerdTask == "" {
		t.Fatalf("remote message %+v", res)
	}
	var obs AgentResult
	e.ok("get_agent_result", map[string]any{"target": "far", "machine": "far"}, "AgentResult", &obs)
	if obs.Status != statusIdle || obs.NextAction != nextNone || !strings.Contains(obs.FinalMessage, "ping remote") || obs.HerdTask != res.Delivered.HerdTask {
		t.Fatalf("remote observation %+v", obs)
	}
	if msg := e.fails("get_agent_result", map[string]any{"target": "near", "machine": u.Host}); !strings.Contains(msg, "is not an agent on machine") {
		t.Fatalf("a local member under a machine: %s", msg)
	}
}

// The patch is capped at maxDiffBytes (truncated, patchBytes the whole size); the final message and
// result text at maxResultChars; a timeout returns running with nextAction wait.
func TestCapsAndTimeout(t *testing.T) {
	e := newEnv(t, `{"maxDiffBytes": 1024, "maxResultChars": 100}`)
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": strings.Repeat("long answer words ", 20), "kind": "claude", "cwd": repo}, "AgentResult", &res)
	if err := os.WriteFile(filepath.Join(repo, "big.txt"), []byte(strings.Repeat("0123456789abcdef\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(res.ArtifactDir, "result.md"), []byte("summary: s\n\n"+strings.Repeat("r", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	var got AgentResult
	e.ok("get_agent_result", map[string]any{"target": res.TaskID}, "AgentResult", &got)
	d := got.Diff
	if !d.Truncated || len(d.Patch) != 1024 || d.PatchBytes <= 1024 || strings.Join(d.Untracked, ",") != "big.txt" {
		t.Fatalf("diff cap: truncated %v len %d bytes %d", d.Truncated, len(d.Patch), d.PatchBytes)
	}
	if len([]rune(got.ResultText)) != 100 || !got.Result.Exists || len([]rune(got.FinalMessage)) > 100 {
		t.Fatalf("result caps: %d %d", len(got.ResultText), len(got.FinalMessage))
	}
	if !strings.Contains(strings.Join(got.Evidence, "\n"), "patch truncated at 1024") {
		t.Fatalf("evidence %v", got.Evidence)
	}

	var run AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "slow one", "kind": "claude", "cwd": repo, "timeout_ms": 1}, "AgentResult", &run) // clamped to 10 s
	if run.Status != statusRunning || run.NextAction != nextWait || run.HerdStatus != herd.StateWorking {
		t.Fatalf("timeout %+v", run)
	}
}
