package mcp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/internal/herdtest"
)

// An engine's failed turn (the fake Claude Code's API error fires StopFailure through the herd's
// own hook command) is an AgentResult failed, never completed/review.
func TestEnginesFailedTurnIsAgentResultFailed(t *testing.T) {
	settings := filepath.Join(t.TempDir(), "settings.json")
	herdtest.HookSettings(t, settings)
	e := newEnv(t, "", "FAKEENGINE_SETTINGS="+settings)
	repo := e.repo()
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "fail please", "kind": "claude", "cwd": repo, "wait": true, "timeout_ms": 60000}, "AgentResult", &res)
	if res.Status != statusFailed || res.NextAction != nextInspect {
		t.Fatalf("a failed turn's AgentResult: %+v", res)
	}
	tk, err := e.c.Task(e.ctx, res.HerdTask)
	if err != nil || tk.State != "failed" || tk.Artifact == nil || !strings.Contains(tk.Artifact.Text, "API Error: 400") {
		t.Fatalf("its herd task: %+v %v", tk, err)
	}
}
