package mcp

import (
	"fmt"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// Figures (go test ./herd/mcp -run '^$' -bench . -benchtime 20x):
//   - spawn → AgentResult over MCP against the bare client path (start, wait idle, prompt --wait)
//     with an instant fake engine: the adapter's overhead per delegated task (record, envelope,
//     harvest with git diff, schema'd result over the in-memory MCP transport);
//   - one follow-up turn: message_agent wait:true against Client.Prompt with wait;
//   - list_agents at 50 members against Client.List.

func benchEnv(b *testing.B) (*env, string) {
	e := newEnv(b, `{"maxParallelAgents": 1000}`, "FAKEENGINE_TURN=0s")
	return e, e.repo()
}

func BenchmarkSpawn(b *testing.B) {
	e, repo := benchEnv(b)
	b.Run("bare", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			name := fmt.Sprintf("bare-%d", i)
			if _, err := e.c.Start(e.ctx, herd.StartParams{Engine: "claude", Name: name, Cwd: repo}); err != nil {
				b.Fatal(err)
			}
			if _, err := e.c.Wait(e.ctx, []string{name}, herd.WaitOptions{States: []string{herd.StateIdle, herd.StateDone, herd.StateBlocked}, Timeout: safety}); err != nil {
				b.Fatal(err)
			}
			if _, err := e.c.Prompt(e.ctx, name, "Say hi", herd.PromptOptions{Wait: true, Timeout: safety}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_, _ = e.c.Kill(e.ctx, []string{name}, false)
			b.StartTimer()
		}
	})
	b.Run("mcp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var res AgentResult
			e.ok("spawn_agent", map[string]any{"prompt": "Say hi", "kind": "claude", "cwd": repo}, "AgentResult", &res)
			if res.Status != statusCompleted {
				b.Fatalf("%+v", res)
			}
			b.StopTimer()
			_, _ = e.c.Kill(e.ctx, []string{res.Agent.Name}, false)
			b.StartTimer()
		}
	})
}

func BenchmarkTurn(b *testing.B) {
	e, repo := benchEnv(b)
	var res AgentResult
	e.ok("spawn_agent", map[string]any{"prompt": "Say hi", "kind": "claude", "cwd": repo}, "AgentResult", &res)
	b.Run("bare", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := e.c.Prompt(e.ctx, res.Agent.Name, "again", herd.PromptOptions{Wait: true, Timeout: safety}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var r AgentResult
			e.ok("message_agent", map[string]any{"target": res.TaskID, "message": "again", "wait": true}, "AgentResult", &r)
			if r.Status != statusCompleted {
				b.Fatalf("%+v", r)
			}
		}
	})
}

func BenchmarkListAgents50(b *testing.B) {
	e, _ := benchEnv(b)
	for i := 0; i < 50; i++ {
		if _, err := e.c.Run(e.ctx, herd.RunParams{Name: fmt.Sprintf("m%02d", i), Argv: []string{"cat"}, Cwd: e.home}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("bare", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ms, err := e.c.List(e.ctx)
			if err != nil || len(ms) != 50 {
				b.Fatal(len(ms), err)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r := e.call("list_agents", map[string]any{}) // no schema validation inside the timing
			if r.IsError || len(r.StructuredContent.(map[string]any)["agents"].([]any)) != 50 {
				b.Fatal(resultText(r))
			}
		}
	})
}
