package evalconf

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
)

// answerRow is a report row as far as TestEvalAnswerSourcesAndStartupFailure reads it.
type answerRow struct {
	ID           string `json:"id"`
	Outcome      string `json:"outcome"`
	Answer       string `json:"answer"`
	AnswerSource string `json:"answerSource"`
	Reason       string `json:"reason"`
	Fix          string `json:"fix"`
	Startup      bool   `json:"startup"`
	ExitCode     *int   `json:"exitCode"`
	Member       string `json:"member"`
	Error        string `json:"error"`
}

// TestEvalAnswerSourcesAndStartupFailure is issue 22 item 3 on the real engines: with hooks, a
// row's answer is the engine's own (answerSource hook); without them it is what the turn printed
// below the typed prompt (screen; never the prompt's echo, whose "fake-plain" marker is not in the
// answer), and --answers engine makes the row unscorable naming `mosh herd hooks install ENGINE`.
// Run as root, Claude Code with --agent exits during start-up: the row says why (its last screen
// lines), the engine's other rows are not started, and the run exits 5.
func TestEvalAnswerSourcesAndStartupFailure(t *testing.T) {
	list := engineList(t)
	w := newWorld(t, list, false)
	ds, err := filepath.Abs("testdata/answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(t *testing.T, engine string, env []string, wantExit int, extra ...string) []answerRow {
		t.Helper()
		args := append([]string{"herd", "eval", "--dataset", ds, "--engines", engine, "--timeout", "4m", "--json"}, extra...)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		res := w.on(t).run(ctx, w.local, env, args...)
		if res.code != wantExit {
			t.Fatalf("exit %d, want %d\n%s", res.code, wantExit, res)
		}
		var rep struct {
			Rows []answerRow `json:"rows"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || len(rep.Rows) == 0 {
			t.Fatalf("report: %v\n%s", err, res)
		}
		return rep.Rows
	}
	for _, e := range list {
		t.Run(e.Name, func(t *testing.T) {
			var args []string
			if a := w.args[e.Name]; len(a) > 0 {
				args = []string{"--engine-args", e.Name + "=" + shellJoin(a)}
			}
			rows := eval(t, e.Name, nil, 0, append([]string{"--answers", "engine"}, args...)...)
			if r := rows[0]; r.Outcome != "pass" || r.AnswerSource != "hook" || strings.TrimSpace(r.Answer) != fakeapi.PlainText {
				t.Errorf("with hooks: %+v", r)
			}
			w.on(t).must(w.local, nil, "herd", "hooks", "remove", e.Name)
			defer w.on(t).must(w.local, nil, "herd", "hooks", "install", e.Name)
			rows = eval(t, e.Name, nil, 0, args...)
			if r := rows[0]; r.Outcome != "pass" || r.AnswerSource != "screen" || !strings.Contains(r.Answer, fakeapi.PlainText) || strings.Contains(r.Answer, fakeapi.TriggerPlain) {
				t.Errorf("without hooks, the answer is the screen below the prompt (never the prompt): %+v", r)
			}
			rows = eval(t, e.Name, nil, 4, append([]string{"--answers", "engine"}, args...)...)
			if r := rows[0]; r.Outcome != "unscorable" || r.AnswerSource != "screen" || r.Fix != "mosh herd hooks install "+e.Name || r.Reason == "" {
				t.Errorf("--answers engine without hooks: %+v", r)
			}
		})
	}
	t.Run("claude-root-agent", func(t *testing.T) {
		claude := false
		for _, e := range list {
			claude = claude || e.Name == "claude"
		}
		if !claude || os.Geteuid() != 0 {
			t.Skip("needs claude in MOSH_EVAL_ENGINES and a run as root")
		}
		two := filepath.Join(t.TempDir(), "two.jsonl")
		if err := os.WriteFile(two, []byte(`{"id": "a", "prompt": "Reply pong. fake-plain", "expect": "pong"}
{"id": "b", "prompt": "Reply pong. fake-plain", "expect": "pong"}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		ds = two
		// IS_SANDBOX (the suite sets it so that --agent runs as root) unset: Claude Code refuses.
		rows := eval(t, "claude", []string{"IS_SANDBOX="}, 5, "--agent", "--engine-args", "claude="+shellJoin(withoutPermissionMode(w.args["claude"])))
		if len(rows) != 2 {
			t.Fatalf("rows: %+v", rows)
		}
		a, b := rows[0], rows[1]
		if a.Outcome != "failed" || !a.Startup || a.ExitCode == nil || *a.ExitCode != 1 || !strings.Contains(a.Reason, "cannot be used with root/sudo privileges") {
			t.Errorf("the first row says why Claude Code stopped: %+v", a)
		}
		if b.Outcome != "error" || b.Member != "" || !strings.Contains(b.Error, "not started") {
			t.Errorf("the second row is not started: %+v", b)
		}
		// herd start --wait says the same, exit 5.
		ctx, cancel := context.WithTimeout(context.Background(), cliSafety)
		defer cancel()
		res := w.on(t).run(ctx, w.local, []string{"IS_SANDBOX="}, append([]string{"herd", "start", "claude", "--name", "rootcc", "--agent", "--wait", "--"}, withoutPermissionMode(w.args["claude"])...)...)
		if res.code != 5 || !strings.Contains(res.stderr, "rootcc exited during start-up with code 1") || !strings.Contains(res.stderr, "cannot be used with root/sudo privileges") {
			t.Errorf("herd start claude --agent --wait as root:\n%s", res)
		}
	})
}
