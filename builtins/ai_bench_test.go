package builtins

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/runtime"
)

// The figures of ai():
//
//	go test ./builtins -run '^$' -bench 'BenchmarkAI' -benchtime 200x -count 5
//
// engine/direct runs an instant stand-in for `claude -p --output-format json PROMPT` with
// os/exec; engine/ai runs the same command through ai() in a script (b.N awaited calls in one
// run), so the difference per op is ai()'s overhead (argument reading, engine lookup, the slot,
// process group, JSON result, promise, and the call's task in the ledger: its mint and close over
// the run's connection to a herd daemon, here one in the benchmark's process).
// engine/ai-unrecorded is ai() without its task, ai() as it was before its calls were recorded:
// engine/ai minus engine/ai-unrecorded is what the ledger costs a call. api/direct is a bare
// POST to the fake Anthropic Messages API; api/ai and api/ai-unrecorded are ai() with
// MOSH_AI_PROVIDER=anthropic against the same fake. record is what ai() waits for to record a
// call (two round trips); record/landed adds the ledger's writes the daemon does for it off the
// caller's path (they compete for the CPU, which engine/ai shows on a small machine).

func benchAIScript(b *testing.B, env map[string]string, unrecorded bool) {
	b.Helper()
	src := `for (let i = 0; i < ` + strconv.Itoa(b.N) + `; i++) { if ((await ai("say fake-plain")) === "") throw new Error("empty") }`
	var out, errb bytes.Buffer
	b.ResetTimer()
	err := runtime.Run(context.Background(), runtime.Script{Name: "bench.mosh", Source: []byte(src)}, runtime.Options{
		Stdout: &out, Stderr: &errb, Env: env,
		Install: func(vu runtime.VU) error { return Install(vu, Config{Env: env, unrecordedAI: unrecorded}) },
	})
	b.StopTimer()
	if err != nil {
		b.Fatalf("%v: %s", err, errb.String())
	}
}

func BenchmarkAI(b *testing.B) {
	bin := b.TempDir()
	claude := filepath.Join(bin, "claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\nprintf '{\"type\":\"result\",\"is_error\":false,\"result\":\"ok\"}\\n'\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	home := herdDaemon(b)["MOSH_HOME"]
	env := map[string]string{"PATH": bin + ":/usr/bin:/bin", "HOME": home, "MOSH_HOME": home}

	// record is what a call waits for: its begin and end over one connection (the daemon
	// answers both at once). record/landed adds the daemon's ledger writes of the b.N calls
	// (mint and close, committed off the caller's path), waited for by a read at the end.
	for _, landed := range []bool{false, true} {
		name := "record"
		if landed {
			name = "record/landed"
		}
		b.Run(name, func(b *testing.B) { benchRecord(b, home, landed) })
	}
	b.Run("engine/direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cmd := exec.Command(claude, "-p", "--output-format", "json", "say fake-plain")
			cmd.Env = envList(env)
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine/ai-unrecorded", func(b *testing.B) { benchAIScript(b, env, true) })
	b.Run("engine/ai", func(b *testing.B) { benchAIScript(b, env, false) })

	srv := httptest.NewServer(fakeapi.New(fakeapi.Options{AnswerSideRequests: true}))
	defer srv.Close()
	b.Run("api/direct", func(b *testing.B) {
		body := []byte(`{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":"say fake-plain"}]}`)
		for i := 0; i < b.N; i++ {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(body))
			req.Header.Set("x-api-key", "k")
			req.Header.Set("anthropic-version", aiAnthropicVersion)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			resp.Body.Close()
		}
	})
	apiEnv := map[string]string{"PATH": "/usr/bin:/bin", "HOME": home, "MOSH_HOME": home, "MOSH_AI_PROVIDER": "anthropic",
		"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": "k", "MOSH_AI_MODEL": "m"}
	b.Run("api/ai-unrecorded", func(b *testing.B) { benchAIScript(b, apiEnv, true) })
	b.Run("api/ai", func(b *testing.B) { benchAIScript(b, apiEnv, false) })
}

func benchRecord(b *testing.B, home string, landed bool) {
	ctx := context.Background()
	c, err := herd.Connect(ctx, herd.Options{Home: home, NoStart: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call, err := c.BeginHeadless(ctx, "ai-bench", "say fake-plain", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := c.EndHeadless(ctx, herd.HeadlessEndParams{Call: call, State: herd.StateDone, Answer: "ok"}); err != nil {
			b.Fatal(err)
		}
	}
	if landed {
		// A read of the member waits for its queued ledger writes.
		if _, err := c.Tasks(ctx, herd.TasksFilter{Member: "ai-bench", Limit: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
