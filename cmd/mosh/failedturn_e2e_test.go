package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/internal/herdtest"
)

// An engine's failed turn end to end (issue 22 item 2), through the herd's own hook commands with
// no mosh on the member's PATH (item 1: they run the daemon's MOSH_HERD_BIN): the fake Claude
// Code's API error fires StopFailure; `herd prompt --wait` and `wait` exit 3 and the task reads
// failed with the error; an eval row on it is outcome failed, not a wrong answer.
func TestFailedTurnEndToEnd(t *testing.T) {
	e := newHerdEnv(t)
	bin := filepath.Join(e.home, "bin")
	fakeEnv := herdtest.FakeEngine{Dir: filepath.Dir(e.fake)}.AsClaudeWithHooks(t, bin, "60s")
	for _, kv := range fakeEnv {
		if strings.HasPrefix(kv, "PATH=") {
			kv = "PATH=" + bin + ":/usr/bin:/bin" // the fake engine, no mosh
		}
		e.env = append(e.env, kv)
	}
	e.ok("herd", "start", "claude", "--name", "cl")
	e.ok("wait", "cl", "--state", "idle", "--timeout", "60s")
	out, errs, code := e.run("herd", "prompt", "cl", "fail please", "--wait", "--timeout", "60s", "--json")
	if code != 3 || !strings.Contains(errs+out, "ended failed") {
		t.Fatalf("prompt --wait on a failed turn: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	var pr struct {
		Task string `json:"task"`
	}
	_ = json.Unmarshal([]byte(out), &pr)
	task := e.ok("herd", "task", pr.Task, "--json")
	if !strings.Contains(task, `"state": "failed"`) || !strings.Contains(task, "API Error: 400") {
		t.Fatalf("the failed turn's task:\n%s", task)
	}
	if _, errs, code := e.run("wait", "cl", "--state", "done", "--timeout", "60s"); code != 3 {
		t.Fatalf("wait after the failed turn: exit %d, %s", code, errs)
	}

	ds := filepath.Join(e.home, "ds.jsonl")
	if err := os.WriteFile(ds, []byte(`{"id":"api","prompt":"fail please","expect":"never"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, _ = e.run("herd", "eval", "--dataset", ds, "--engines", "claude", "--json", "--timeout", "60s")
	var rep struct {
		Rows []struct {
			Outcome string `json:"outcome"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Rows) != 1 || rep.Rows[0].Outcome != "failed" {
		t.Fatalf("eval of a failed turn: %v\nstdout %s\nstderr %s", err, out, errs)
	}
}
