package remoteconf

import (
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

const fanoutScript = "scripts/examples/fanout-mixed.mosh"

// fanoutRows runs the acceptance script and returns its table (off a terminal: name, state,
// answer, tab-separated, one member a line) by member name.
func fanoutRows(t *testing.T, r result) map[string][2]string {
	t.Helper()
	rows := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("a table line is not name, state, answer: %q\n%s", line, r)
		}
		rows[f[0]] = [2]string{f[1], f[2]}
	}
	return rows
}

// TestFanoutMixed is the PRD's acceptance: one fan-out across a local member, another herd
// (a second `mosh herd serve` on loopback, token from MOSH_REMOTE_FAR_TOKEN) and a /run endpoint
// served here, by a script that never asks which kind a member is.
func TestFanoutMixed(t *testing.T) {
	t.Parallel() // each herd has its own HOME and MOSH_HOME, given to the mosh processes it runs
	a := newHerd(t)
	b := newHerd(t)
	b.startLocal("api")
	srvB := b.serve()
	ep := remotetest.NewRun(t, remotetest.Options{})

	a.startLocal("loc")
	a.must(tokenEnv("MOSH_REMOTE_FAR_TOKEN", srvB.token), "herd", "remote", "add", "far", srvB.memberURL("api"))
	a.must(nil, "herd", "remote", "add", "ep", ep.URL, "--kind", "run")

	t.Run("every member answers", func(t *testing.T) {
		a := a.on(t)
		prompt := "name one prime"
		r := a.run(nil, fanoutScript, prompt, "loc", "far", "ep")
		if r.code != 0 {
			t.Fatalf("%s", r)
		}
		rows := fanoutRows(t, r)
		want := map[string]string{"loc": "● " + prompt, "far": "● " + prompt, "ep": "echo: " + prompt}
		if len(rows) != len(want) {
			t.Fatalf("the table has %d rows, want %d:\n%s", len(rows), len(want), r)
		}
		for name, answer := range want {
			got, ok := rows[name]
			if !ok || got[0] != "done" || !strings.Contains(got[1], answer) {
				t.Errorf("%s: state %q answer %q, want done with %q\n%s", name, got[0], got[1], answer, r)
			}
		}
		if !contains(ep.Prompts(), prompt) {
			t.Errorf("the /run endpoint was given %q, want %q", ep.Prompts(), prompt)
		}
	})

	// The CLI's wait follows local and remote members alike, --all and --any.
	t.Run("wait across local and remote", func(t *testing.T) {
		a := a.on(t)
		for _, mode := range []string{"--all", "--any"} {
			for _, n := range []string{"loc", "far", "ep"} {
				a.must(nil, "herd", "prompt", n, "count to three "+mode)
			}
			r := a.run(nil, "herd", "wait", "loc", "far", "ep", mode, "--state", "done", "--timeout", "60")
			if r.code != 0 {
				t.Fatalf("%s", r)
			}
			// Settle the others before the next round (--any leaves them running).
			a.must(nil, "herd", "wait", "loc", "far", "ep", "--all", "--state", "done", "--timeout", "60")
			for _, n := range []string{"loc", "far", "ep"} {
				var ts []task
				a.mustJSON(&ts, nil, "herd", "tasks", n, "--json")
				if last := ts[len(ts)-1]; last.Text != "count to three "+mode || last.State != "done" || last.Open {
					t.Errorf("%s after wait %s: last task %+v, want the prompt done", n, mode, last)
				}
			}
		}
	})

	// A member whose remote is down fails its row and the exit code; the others still answer.
	t.Run("a dead remote fails only its row", func(t *testing.T) {
		a := a.on(t)
		dead := remotetest.NewRun(t, remotetest.Options{})
		dead.Close()
		if r := a.run(nil, "herd", "remote", "add", "gone-ep", dead.URL, "--kind", "run", "--force"); r.code != 0 {
			t.Fatalf("%s", r)
		}
		defer a.run(nil, "herd", "remote", "remove", "gone-ep")
		prompt := "name one planet"
		r := a.run(nil, fanoutScript, prompt, "loc", "gone-ep", "ep")
		if r.code != 3 || !strings.Contains(r.stderr, "1 of 3 members did not finish") {
			t.Fatalf("want exit 3 naming the one failure\n%s", r)
		}
		rows := fanoutRows(t, r)
		if got := rows["gone-ep"]; got[0] != "failed" || got[1] == "" {
			t.Errorf("gone-ep: state %q answer %q, want failed with the error\n%s", got[0], got[1], r)
		}
		if got := rows["loc"]; got[0] != "done" || !strings.Contains(got[1], "● "+prompt) {
			t.Errorf("loc: %q, want done with its answer\n%s", got, r)
		}
		if got := rows["ep"]; got[0] != "done" || !strings.Contains(got[1], "echo: "+prompt) {
			t.Errorf("ep: %q, want done with its answer\n%s", got, r)
		}
	})

	// A member that asks a question (a menu locally, input-required remotely) ends the wait
	// without an answer: its row says so and shows the question, the exit code is 3.
	t.Run("a question is reported, not waited out", func(t *testing.T) {
		a := a.on(t)
		asker := remotetest.NewA2A(t, remotetest.Options{})
		a.must(nil, "herd", "remote", "add", "asker", asker.URL)
		defer a.run(nil, "herd", "remote", "remove", "asker")
		defer func() { // close loc's question menu so the member is idle again
			a.run(nil, "herd", "send-keys", "loc", "Escape")
			a.run(nil, "herd", "wait", "loc", "--state", "idle", "--timeout", "60")
		}()
		// "ask" opens the fake engine's question menu; "fake-ask" makes the A2A fake input-required.
		r := a.run(nil, fanoutScript, "please fake-ask", "loc", "asker", "ep")
		if r.code != 3 || !strings.Contains(r.stderr, "loc, asker asked a question") {
			t.Fatalf("want exit 3 naming the two members that asked\n%s", r)
		}
		rows := fanoutRows(t, r)
		if got := rows["asker"]; got[0] != "blocked (asks)" || !strings.Contains(got[1], remotetest.Question) {
			t.Errorf("asker: %q, want blocked with its question %q\n%s", got, remotetest.Question, r)
		}
		if got := rows["loc"]; got[0] != "blocked (asks)" || got[1] == "" {
			t.Errorf("loc: %q, want blocked with its screen\n%s", got, r)
		}
		if got := rows["ep"]; got[0] != "done" || !strings.Contains(got[1], "echo: please fake-ask") {
			t.Errorf("ep: %q, want done with its answer\n%s", got, r)
		}
	})

	t.Run("bad usage", func(t *testing.T) {
		a := a.on(t)
		for _, c := range []struct {
			args []string
			want string
		}{
			{nil, "usage: mosh scripts/examples/fanout-mixed.mosh PROMPT NAME"},
			{[]string{"only a prompt"}, "missing the member names"},
			{[]string{" ", "loc"}, "the prompt is empty"},
			{[]string{"hi", "Not_A_Name"}, `"Not_A_Name" is not a member name`},
			{[]string{"hi", "loc", "loc"}, "loc is named twice"},
			{[]string{"hi", "loc", "nobody"}, "no member named nobody (members: ep, far, loc)"},
		} {
			r := a.run(nil, append([]string{fanoutScript}, c.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
				t.Errorf("args %q: want exit 1, nothing on stdout and %q on stderr\n%s", c.args, c.want, r)
			}
		}
	})
}
