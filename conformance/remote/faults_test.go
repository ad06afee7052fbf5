package remoteconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd/remote/remotetest"
)

// TestFaults drives the failures of issue 7 through the CLI: a remote that is down at add,
// refuses the token, goes down mid-task, answers garbage, or answers too slowly. Each case ends
// with the herd still answering (ps) and removes what it added.
func TestFaults(t *testing.T) {
	t.Parallel() // each herd has its own HOME and MOSH_HOME, given to the mosh processes it runs
	a := newHerd(t)
	// A healthy remote the whole time: the herd keeps serving it whatever the others do.
	healthy := remotetest.NewRun(t, remotetest.Options{})
	a.must(nil, "herd", "remote", "add", "healthy", healthy.URL, "--kind", "run")
	stillServes := func(t *testing.T, a *herdHome) {
		t.Helper()
		var pr promptResult
		a.mustJSON(&pr, nil, "herd", "prompt", "healthy", "still there?", "--wait", "--timeout", "60", "--json")
		if pr.State != "done" || a.task(pr.Task).State != "done" {
			t.Errorf("the healthy member after the fault: %+v", pr)
		}
	}

	t.Run("down at add", func(t *testing.T) {
		a := a.on(t)
		for _, kind := range []string{"a2a", "run"} {
			var srv *remotetest.Server
			if kind == "a2a" {
				srv = remotetest.NewA2A(t, remotetest.Options{})
			} else {
				srv = remotetest.NewRun(t, remotetest.Options{})
			}
			srv.Close()
			name := "down-" + kind
			r := a.run(nil, "herd", "remote", "add", name, srv.URL, "--kind", kind)
			if r.code != 5 || !strings.Contains(r.stderr, "--force") || !strings.Contains(r.stderr, name) {
				t.Errorf("add of a down %s remote: want exit 5 naming %s and --force\n%s", kind, name, r)
			}
			if a.row(name) != nil || contains(names(a.remotes()), name) {
				t.Fatalf("a down %s remote was registered without --force", kind)
			}
			r = a.run(nil, "herd", "remote", "add", name, srv.URL, "--kind", kind, "--force")
			if r.code != 0 || !strings.Contains(r.stderr, "does not answer now") {
				t.Errorf("add --force of a down %s remote: want exit 0 and a warning\n%s", kind, r)
			}
			row := a.row(name)
			if row == nil || row.State != "unknown" || row.Remote == nil || row.Remote.Error == "" {
				t.Errorf("a forced down %s remote reads %+v (remote %+v), want unknown with the error", kind, row, remoteOf(row))
			}
			if r := a.run(nil, "herd", "remote", "ping", name); r.code == 0 {
				t.Errorf("ping of a down remote succeeded\n%s", r)
			}
			a.must(nil, "herd", "remote", "remove", name)
		}
		stillServes(t, a)
	})

	t.Run("401 names the token variable", func(t *testing.T) {
		a := a.on(t)
		const secret = "fault-secret-token-3f9a0c7e51"
		for _, kind := range []string{"a2a", "run"} {
			var srv *remotetest.Server
			if kind == "a2a" {
				srv = remotetest.NewA2A(t, remotetest.Options{Token: secret})
			} else {
				srv = remotetest.NewRun(t, remotetest.Options{Token: secret})
			}
			name := "auth-" + kind
			tokenVar := "MOSH_REMOTE_AUTH_" + strings.ToUpper(kind) + "_TOKEN"
			for _, env := range [][]string{nil, {tokenVar + "=not-the-token"}} {
				r := a.run(env, "herd", "remote", "add", name, srv.URL, "--kind", kind)
				if r.code != 1 || !strings.Contains(r.stderr, tokenVar) || strings.Contains(r.stderr, "not-the-token") {
					t.Errorf("add %s with env %q: want exit 1 naming %s (and never the token)\n%s", kind, env, tokenVar, r)
				}
				if a.row(name) != nil {
					t.Fatalf("a refused %s remote was registered", kind)
				}
			}
			good := []string{tokenVar + "=" + secret}
			a.must(good, "herd", "remote", "add", name, srv.URL, "--kind", kind)
			var pr promptResult
			a.mustJSON(&pr, nil, "herd", "prompt", name, "with the token kept in memory", "--wait", "--timeout", "60", "--json")
			if pr.State != "done" || a.task(pr.Task).State != "done" {
				t.Errorf("prompt %s with the token the daemon holds: %+v", name, pr)
			}
			// A wrong token in the prompting command's environment is refused the same way. A2A:
			// message/send is refused, exit 1. run: the POST is refused on its own goroutine, the
			// task fails naming the variable and the wait ends (exit 3). --state done: a refused
			// POST leaves the endpoint reading idle, which a default prompt --wait would take
			// for an answer (see the report).
			r := a.run([]string{tokenVar + "=not-the-token"}, "herd", "prompt", name, "hi", "--wait", "--state", "done", "--timeout", "60")
			switch {
			case kind == "a2a" && (r.code != 1 || !strings.Contains(r.stderr, tokenVar)):
				t.Errorf("prompt %s with a wrong token: want exit 1 naming %s\n%s", name, tokenVar, r)
			case kind == "run" && r.code != 3:
				t.Errorf("prompt %s with a wrong token: want exit 3 (the task failed)\n%s", name, r)
			}
			var refused []task
			a.mustJSON(&refused, nil, "herd", "tasks", name, "--json")
			if last := a.task(refused[len(refused)-1].ID); last.State != "failed" || last.Artifact == nil ||
				!strings.Contains(last.Artifact.Text, tokenVar) || strings.Contains(last.Artifact.Text, "not-the-token") {
				t.Errorf("the refused prompt's task: %+v (artifact %+v), want failed naming %s", last, last.Artifact, tokenVar)
			}
			if out := a.must(nil, "ps", "--json"); strings.Contains(out, secret) {
				t.Errorf("ps --json shows the token")
			}
			a.must(nil, "herd", "remote", "remove", name)
		}
		// The token is in no file we wrote (manifest, ledger, log).
		filepath.Walk(a.home, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
					t.Errorf("%s holds the token", p)
				}
			}
			return nil
		})
		stillServes(t, a)
	})

	t.Run("down mid-task", func(t *testing.T) {
		a := a.on(t)
		for _, kind := range []string{"a2a", "run"} {
			var srv *remotetest.Server
			if kind == "a2a" {
				srv = remotetest.NewA2A(t, remotetest.Options{Delay: 10 * time.Minute})
			} else {
				srv = remotetest.NewRun(t, remotetest.Options{Delay: 10 * time.Minute})
			}
			name := "flaky-" + kind
			a.must(nil, "herd", "remote", "add", name, srv.URL, "--kind", kind)
			var pr promptResult
			a.mustJSON(&pr, nil, "herd", "prompt", name, "a long job", "--json")
			srv.Close()
			r := a.run(nil, "herd", "wait", name, "--timeout", "60")
			if r.code != 3 {
				t.Errorf("wait on %s after its remote went down: want exit 3 (ended)\n%s", name, r)
			}
			tk := a.task(pr.Task)
			if tk.Open || tk.State != "failed" || tk.Artifact == nil || tk.Artifact.Source != "error" || tk.Artifact.Text == "" {
				t.Errorf("task %s after the remote went down: %+v (artifact %+v), want failed with the error", pr.Task, tk, tk.Artifact)
			}
			row := a.row(name)
			if row == nil || row.State != "unknown" || row.Remote == nil || row.Remote.Error == "" {
				t.Errorf("%s after its remote went down reads %+v (remote %+v), want unknown with the error", name, row, remoteOf(row))
			}
			a.must(nil, "herd", "remote", "remove", name)
		}
		stillServes(t, a)
	})

	t.Run("garbage", func(t *testing.T) {
		a := a.on(t)
		// At add: a card that is an HTML page.
		junk := remotetest.NewA2A(t, remotetest.Options{})
		junk.SetGarbage(true)
		r := a.run(nil, "herd", "remote", "add", "junk-card", junk.URL)
		if r.code != 5 || !strings.Contains(r.stderr, "junk-card") || a.row("junk-card") != nil {
			t.Errorf("add of a remote that answers HTML: want exit 5 naming it and nothing registered\n%s", r)
		}

		for _, kind := range []string{"a2a", "run"} {
			var srv *remotetest.Server
			if kind == "a2a" {
				srv = remotetest.NewA2A(t, remotetest.Options{})
			} else {
				srv = remotetest.NewRun(t, remotetest.Options{})
			}
			name := "junk-" + kind
			a.must(nil, "herd", "remote", "add", name, srv.URL, "--kind", kind)
			srv.SetGarbage(true)
			r := a.run(nil, "herd", "prompt", name, "hi", "--wait", "--state", "done", "--timeout", "60", "--json")
			// A2A: message/send itself gets the HTML (exit 5); run: the POST on its own goroutine
			// does, and the wait ends with the failed task (exit 3).
			if want := map[string]int{"a2a": 5, "run": 3}[kind]; r.code != want {
				t.Errorf("prompt %s answered with garbage: want exit %d\n%s", name, want, r)
			}
			tasks := []task{}
			a.mustJSON(&tasks, nil, "herd", "tasks", name, "--json")
			if len(tasks) != 1 {
				t.Fatalf("tasks of %s: %+v", name, tasks)
			}
			tk := a.task(tasks[0].ID)
			if tk.State != "failed" || tk.Artifact == nil || !strings.Contains(tk.Artifact.Text, "<html>oops") {
				t.Errorf("task of %s answered with garbage: %+v (artifact %+v), want failed quoting the HTML answer", name, tk, tk.Artifact)
			}
			// Once it answers properly again, so does the member.
			srv.SetGarbage(false)
			var pr promptResult
			a.mustJSON(&pr, nil, "herd", "prompt", name, "better now?", "--wait", "--timeout", "60", "--json")
			if pr.State != "done" || !strings.Contains(a.must(nil, "herd", "read", name), "echo: better now?") {
				t.Errorf("prompt %s after the garbage stopped: %+v", name, pr)
			}
			a.must(nil, "herd", "remote", "remove", name)
		}
		stillServes(t, a)
	})

	t.Run("slow beyond --timeout", func(t *testing.T) {
		a := a.on(t)
		// A2A: message/send stalls past the per-call timeout.
		stall := remotetest.NewA2A(t, remotetest.Options{})
		a.must(nil, "herd", "remote", "add", "stall-a2a", stall.URL, "--timeout", "1s")
		stall.SetStall(time.Minute)
		r := a.run(nil, "herd", "prompt", "stall-a2a", "hi", "--wait", "--timeout", "60")
		if r.code != 5 || !strings.Contains(r.stderr, "1s") {
			t.Errorf("prompt to an A2A remote stalling past --timeout 1s: want exit 5 naming the limit\n%s", r)
		}
		stall.SetStall(0)

		// A2A: the send is quick, then tasks/get stalls: the open task fails once the remote has
		// been silent long enough, and the member reads unknown.
		stallGet := remotetest.NewA2A(t, remotetest.Options{Delay: 10 * time.Minute})
		a.must(nil, "herd", "remote", "add", "stall-get", stallGet.URL, "--timeout", "1s")
		var pr promptResult
		a.mustJSON(&pr, nil, "herd", "prompt", "stall-get", "hi", "--json")
		stallGet.SetStall(time.Minute)
		if r := a.run(nil, "herd", "wait", "stall-get", "--timeout", "60"); r.code != 3 {
			t.Errorf("wait on a remote whose tasks/get stalls: want exit 3 (ended)\n%s", r)
		}
		if tk := a.task(pr.Task); tk.State != "failed" || tk.Artifact == nil || !strings.Contains(tk.Artifact.Text, "1s") {
			t.Errorf("task of a stalled remote: %+v (artifact %+v), want failed naming the 1s limit", tk, tk.Artifact)
		}
		stallGet.SetStall(0)

		// run: one POST longer than --timeout.
		slowRun := remotetest.NewRun(t, remotetest.Options{Delay: 10 * time.Minute})
		a.must(nil, "herd", "remote", "add", "slow-run", slowRun.URL, "--kind", "run", "--timeout", "1s")
		a.mustJSON(&pr, nil, "herd", "prompt", "slow-run", "hi", "--json")
		if r := a.run(nil, "herd", "wait", "slow-run", "--timeout", "60"); r.code != 3 {
			t.Errorf("wait on a /run call past --timeout: want exit 3 (ended)\n%s", r)
		}
		if tk := a.task(pr.Task); tk.State != "failed" || tk.Artifact == nil || !strings.Contains(tk.Artifact.Text, "1s") {
			t.Errorf("task of a /run call past --timeout: %+v (artifact %+v), want failed naming the 1s limit", tk, tk.Artifact)
		}
		for _, n := range []string{"stall-a2a", "stall-get", "slow-run"} {
			a.must(nil, "herd", "remote", "remove", n)
		}
		stillServes(t, a)
	})
}
