package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
	"github.com/mosh-dev/mosh/ledger"
)

// Remote members through the real daemon: the fakes in herd/remote/remotetest stand in for an
// a2a-go agent, the ADK's A2A server and a /run endpoint.

func (h *herdT) addRemote(name, url string, opts herd.RemoteAddOptions) *herd.RemoteAddResult {
	h.t.Helper()
	r, err := h.c.RemoteAdd(h.ctx, name, url, opts)
	if err != nil {
		h.t.Fatalf("remote add %s %s: %v", name, url, err)
	}
	return r
}

func (h *herdT) tasksOf(name string) []herd.Task {
	h.t.Helper()
	ts, err := h.c.Tasks(h.ctx, herd.TasksFilter{Member: name})
	if err != nil {
		h.t.Fatalf("tasks %s: %v", name, err)
	}
	return ts
}

func (h *herdT) task(id string) *herd.Task {
	h.t.Helper()
	t, err := h.c.Task(h.ctx, id)
	if err != nil {
		h.t.Fatalf("task %s: %v", id, err)
	}
	return t
}

func TestRemoteA2APromptWaitReadTasks(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: 300 * time.Millisecond})
	h := newParallelHerd(t)
	add := h.addRemote("api", srv.URL, herd.RemoteAddOptions{})
	if !add.Probe.OK || len(add.Card) == 0 {
		t.Fatalf("probe %+v, card %d bytes", add.Probe, len(add.Card))
	}
	m := h.member("api")
	if m.Kind != herd.KindRemote || m.Authority != herd.AuthorityRemote || m.State != herd.StateIdle || m.Remote == nil || m.Remote.Kind != "a2a" {
		t.Fatalf("row %+v remote %+v", m, m.Remote)
	}
	if !strings.HasPrefix(srv.URL, "http://"+m.Remote.Host) || m.Cwd != "" || m.Remote.ObservedMs == 0 {
		t.Fatalf("host %q url %q cwd %q observed %d", m.Remote.Host, srv.URL, m.Cwd, m.Remote.ObservedMs)
	}

	r, err := h.c.Prompt(h.ctx, "api", "port the auth routes", herd.PromptOptions{Wait: true, Timeout: testTimeout})
	if err != nil || r.Outcome != herd.OutcomeMatched || r.State != herd.StateDone || r.Task == "" {
		t.Fatalf("prompt --wait: %+v %v", r, err)
	}
	if got := h.read("api"); got != "echo: port the auth routes" {
		t.Fatalf("read = %q", got)
	}
	task := h.task(r.Task)
	if task.Open || task.State != herd.StateDone || task.RemoteTaskID == "" || task.Artifact == nil ||
		task.Artifact.Text != "echo: port the auth routes" || task.Artifact.Source != ledger.SourceRemote {
		t.Fatalf("task %+v artifact %+v", task, task.Artifact)
	}
	var sawWorking bool
	for _, tr := range task.Transitions {
		sawWorking = sawWorking || (tr.State == herd.StateWorking && tr.Authority == herd.AuthorityRemote)
	}
	if !sawWorking {
		t.Fatalf("no working transition with authority remote: %+v", task.Transitions)
	}
	if got := srv.Prompts(); len(got) != 1 || got[0] != "port the auth routes" {
		t.Fatalf("the remote was asked %q", got)
	}
	ex, err := h.c.Explain(h.ctx, "api")
	if err != nil || ex.Authority != herd.AuthorityRemote || !strings.Contains(ex.Decided, "completed") ||
		ex.ReasonCode != "remote.claim" {
		t.Fatalf("explain %+v %v", ex, err)
	}
	// Terminal verbs have nothing to act on, and say what to do instead.
	_, err = h.c.SendKeys(h.ctx, "api", "Enter")
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "mosh herd prompt api") {
		t.Fatalf("send-keys error does not name the fix: %v", err)
	}
}

func TestRemoteWaitAcrossLocalAndRemote(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: 400 * time.Millisecond})
	run := remotetest.NewRun(t, remotetest.Options{Delay: 200 * time.Millisecond})
	h := newParallelHerd(t)
	h.addRemote("far", srv.URL, herd.RemoteAddOptions{})
	h.addRemote("fn", run.URL, herd.RemoteAddOptions{Kind: "run"})
	// near answers and comes back to its prompt (a process that exits is gone, not done).
	h.run("near", `stty -echo; printf 'ready> '; read x; printf 'did %s\nready> ' "$x"; read y`)
	h.wait("near", herd.StateIdle)
	for _, n := range []string{"far", "fn", "near"} {
		if _, err := h.c.Prompt(h.ctx, n, "summarise", herd.PromptOptions{}); err != nil {
			t.Fatalf("prompt %s: %v", n, err)
		}
	}
	r, err := h.c.Wait(h.ctx, []string{"far", "fn", "near"}, herd.WaitOptions{All: true, States: []string{"done", "idle"}, Timeout: testTimeout})
	if err != nil || r.Outcome != herd.OutcomeMatched {
		t.Fatalf("wait --all: %+v %v", r, err)
	}
	if got := h.read("fn"); got != "echo: summarise" {
		t.Fatalf("read fn = %q", got)
	}
	if ts := h.tasksOf("fn"); len(ts) != 1 || ts[0].State != herd.StateDone || ts[0].Open {
		t.Fatalf("fn tasks %+v", ts)
	}
}

func TestRemoteADKCardAndStatusMessageOutput(t *testing.T) {
	srv := remotetest.NewADK(t, remotetest.Options{Delay: 200 * time.Millisecond})
	h := newParallelHerd(t)
	h.addRemote("adk", srv.URL, herd.RemoteAddOptions{})
	r, err := h.c.Prompt(h.ctx, "adk", "hello", herd.PromptOptions{Wait: true, Timeout: testTimeout})
	if err != nil || r.State != herd.StateDone {
		t.Fatalf("prompt: %+v %v", r, err)
	}
	if got := h.read("adk"); got != "echo: hello" {
		t.Fatalf("read = %q (the ADK answers in status.message)", got)
	}
}

func TestRemoteInputRequiredThenAnswer(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{})
	h := newParallelHerd(t)
	h.addRemote("ask", srv.URL, herd.RemoteAddOptions{})
	r, err := h.c.Prompt(h.ctx, "ask", "book a flight fake-ask", herd.PromptOptions{Wait: true, Timeout: testTimeout})
	if err != nil || r.State != herd.StateBlocked {
		t.Fatalf("prompt: %+v %v", r, err)
	}
	if m := h.member("ask"); m.BlockedOn != "question" {
		t.Fatalf("blocked on %q", m.BlockedOn)
	}
	_, err = h.c.Prompt(h.ctx, "ask", "Paris", herd.PromptOptions{Now: true})
	wantCode(t, err, exitcode.Usage) // blocked: an answer must say so
	// Without --now a new prompt waits in the member's queue, sent once the remote is done.
	q, err := h.c.Prompt(h.ctx, "ask", "then Rome", herd.PromptOptions{})
	if err != nil || !q.Queued || q.Behind != r.Task {
		t.Fatalf("queued behind the blocked task: %+v %v", q, err)
	}
	a, err := h.c.Prompt(h.ctx, "ask", "Paris", herd.PromptOptions{Answer: true, Wait: true, Timeout: testTimeout})
	if err != nil || a.State != herd.StateDone || a.Task != r.Task {
		t.Fatalf("answer: %+v %v (first task %s)", a, err, r.Task)
	}
	task := h.task(r.Task)
	if task.Open || task.State != herd.StateDone {
		t.Fatalf("task %+v", task)
	}
	// The next prompt queues behind "then Rome" (or goes at once once it is done): when it is
	// answered, the queued one was answered before it, with its own answer.
	last, err := h.c.Prompt(h.ctx, "ask", "and back", herd.PromptOptions{Wait: true, States: []string{herd.StateDone}, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("last: %+v %v", last, err)
	}
	qt, lt := h.task(q.Task), h.task(last.Task)
	if qt.Open || qt.State != herd.StateDone || qt.Artifact == nil || !strings.Contains(qt.Artifact.Text, "then Rome") ||
		lt.Open || lt.Artifact == nil || !strings.Contains(lt.Artifact.Text, "and back") || qt.EndedMs > lt.EndedMs {
		t.Fatalf("queued remote prompts: %+v then %+v", qt, lt)
	}
}

func TestRemoteAddRefusesADownRemoteUnlessForced(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{})
	url := srv.URL
	srv.Close()
	h := newParallelHerd(t)
	_, err := h.c.RemoteAdd(h.ctx, "gone", url, herd.RemoteAddOptions{})
	wantCode(t, err, exitcode.Infra)
	if !strings.Contains(err.Error(), "--force") {
		t.Fatalf("error does not name --force: %v", err)
	}
	if ms, _ := h.c.List(h.ctx); len(ms) != 0 {
		t.Fatalf("registered anyway: %+v", ms)
	}
	r := h.addRemote("gone", url, herd.RemoteAddOptions{Force: true})
	if r.Probe.OK || r.Member.State != herd.StateUnknown {
		t.Fatalf("forced add: %+v", r)
	}
}

func TestRemoteDownMidTaskFailsTheTaskAndTheHerdRuns(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: time.Minute})
	h := newParallelHerd(t)
	h.addRemote("flaky", srv.URL, herd.RemoteAddOptions{Timeout: 2 * time.Second})
	p, err := h.c.Prompt(h.ctx, "flaky", "long job", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	r, err := h.c.Wait(h.ctx, []string{"flaky"}, herd.WaitOptions{Timeout: testTimeout})
	wantCode(t, err, exitcode.Gone)
	if r == nil || r.Outcome != herd.OutcomeEnded || r.Results[0].State != herd.StateUnknown {
		t.Fatalf("wait: %+v", r)
	}
	task := h.task(p.Task)
	if task.Open || task.State != ledger.StateFailed || task.Artifact == nil || task.Artifact.Source != ledger.SourceError {
		t.Fatalf("task %+v artifact %+v", task, task.Artifact)
	}
	m := h.member("flaky")
	if m.State != herd.StateUnknown || m.Remote.Error == "" || m.Remote.ObservedMs == 0 {
		t.Fatalf("member %+v remote %+v", m, m.Remote)
	}
	h.run("still", "printf 'ok\n'; exec sleep 30")
	h.member("still")
}

func TestRemoteGarbageAnswerIsAClearError(t *testing.T) {
	run := remotetest.NewRun(t, remotetest.Options{})
	h := newParallelHerd(t)
	h.addRemote("junk", run.URL, herd.RemoteAddOptions{Kind: "run"})
	run.SetGarbage(true)
	p, err := h.c.Prompt(h.ctx, "junk", "hi", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.c.Wait(h.ctx, []string{"junk"}, herd.WaitOptions{Timeout: testTimeout})
	wantCode(t, err, exitcode.Gone)
	if r.Outcome != herd.OutcomeEnded {
		t.Fatalf("wait %+v", r)
	}
	task := h.task(p.Task)
	if task.State != ledger.StateFailed || task.Artifact == nil || !strings.Contains(task.Artifact.Text, "HTML") {
		t.Fatalf("task %+v artifact %+v", task, task.Artifact)
	}
}

func TestRemoteKillCancelsButKeepsTheMember(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: time.Minute})
	run := remotetest.NewRun(t, remotetest.Options{Delay: time.Minute})
	h := newParallelHerd(t)
	h.addRemote("slow", srv.URL, herd.RemoteAddOptions{})
	h.addRemote("slowfn", run.URL, herd.RemoteAddOptions{Kind: "run"})
	p1, err := h.c.Prompt(h.ctx, "slow", "take your time", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := h.c.Prompt(h.ctx, "slowfn", "take your time", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := h.c.Kill(h.ctx, []string{"slow", "slowfn"}, false)
	if err != nil || len(k.Canceled) != 2 || len(k.Killed) != 0 {
		t.Fatalf("kill: %+v %v", k, err)
	}
	h.wait("slow", herd.StateDone)
	h.wait("slowfn", herd.StateDone)
	for _, id := range []string{p1.Task, p2.Task} {
		if task := h.task(id); task.Open || task.State != ledger.StateCanceled {
			t.Fatalf("task %+v", task)
		}
	}
	h.member("slow")
	h.member("slowfn")
	rm, err := h.c.RemoteRemove(h.ctx, "slow")
	if err != nil || rm.Removed != "slow" {
		t.Fatalf("remove: %+v %v", rm, err)
	}
	if ms, _ := h.c.RemoteList(h.ctx); len(ms) != 1 || ms[0].Name != "slowfn" {
		t.Fatalf("remote list after remove: %+v", ms)
	}
	// Its history stays in the ledger.
	if ts := h.tasksOf("slow"); len(ts) != 1 {
		t.Fatalf("tasks of a removed remote: %+v", ts)
	}
}

func TestRemoteTokenStaysInMemory(t *testing.T) {
	const secret = "s3cret-token-value"
	srv := remotetest.NewA2A(t, remotetest.Options{Token: secret})
	h := newParallelHerd(t)
	_, err := h.c.RemoteAdd(h.ctx, "priv-1", srv.URL, herd.RemoteAddOptions{})
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "MOSH_REMOTE_PRIV_1_TOKEN") {
		t.Fatalf("auth error does not name the variable: %v", err)
	}
	h.addRemote("priv-1", srv.URL, herd.RemoteAddOptions{Token: secret})
	r, err := h.c.Prompt(h.ctx, "priv-1", "hi", herd.PromptOptions{Wait: true, Timeout: testTimeout})
	if err != nil || r.State != herd.StateDone {
		t.Fatalf("prompt: %+v %v", r, err)
	}
	m := h.member("priv-1")
	if !m.Remote.Token || m.Remote.TokenVar != "MOSH_REMOTE_PRIV_1_TOKEN" {
		t.Fatalf("remote %+v", m.Remote)
	}
	stopDaemon(h.home)
	err = filepath.Walk(h.home, func(p string, fi os.FileInfo, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // SQLite removes its -shm/-wal files as the daemon finishes stopping
		}
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), secret) {
			t.Errorf("%s holds the token", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRemoteMembersSurviveADaemonRestart(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: 1500 * time.Millisecond})
	h := newParallelHerd(t)
	h.addRemote("keep", srv.URL, herd.RemoteAddOptions{Timeout: 5 * time.Second})
	p, err := h.c.Prompt(h.ctx, "keep", "survive this", herd.PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stopDaemon(h.home)
	h.c.Close()
	c, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home, Env: homeEnv(h.home)})
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	m := h.member("keep")
	if m.Kind != herd.KindRemote || m.Remote == nil || m.Remote.URL != srv.URL {
		t.Fatalf("after restart: %+v", m)
	}
	// The open task is followed again and ends with the remote's answer.
	h.wait("keep", herd.StateDone)
	task := h.task(p.Task)
	if task.Open || task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Text != "echo: survive this" {
		t.Fatalf("task after restart %+v %+v", task, task.Artifact)
	}
}

func TestRemoteFailedTaskEndsPromptWait(t *testing.T) {
	srv := remotetest.NewA2A(t, remotetest.Options{})
	run := remotetest.NewRun(t, remotetest.Options{})
	h := newParallelHerd(t)
	h.addRemote("a", srv.URL, herd.RemoteAddOptions{})
	h.addRemote("r", run.URL, herd.RemoteAddOptions{Kind: "run"})
	run.SetGarbage(true)
	for _, n := range []string{"a", "r"} {
		// The remote answers (done, or idle for a /run endpoint that answered badly), but the
		// task failed: prompt --wait and a later wait both say so instead of "matched".
		p, err := h.c.Prompt(h.ctx, n, "please fake-fail", herd.PromptOptions{Wait: true, Timeout: testTimeout})
		wantCode(t, err, exitcode.Gone)
		if p.Outcome != herd.OutcomeEnded {
			t.Fatalf("%s: prompt --wait %+v", n, p)
		}
		if task := h.task(p.Task); task.State != ledger.StateFailed {
			t.Fatalf("%s: task %+v", n, task)
		}
		_, err = h.c.Wait(h.ctx, []string{n}, herd.WaitOptions{States: []string{herd.StateDone, herd.StateIdle}, Timeout: testTimeout})
		wantCode(t, err, exitcode.Gone)
	}
}

func TestPollBackoff(t *testing.T) {
	want := []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, remotePollMin, 150 * time.Millisecond, 225 * time.Millisecond}
	for n, w := range want {
		if got := pollBackoff(n); got != w {
			t.Errorf("pollBackoff(%d) = %v, want %v", n, got, w)
		}
	}
	if got := pollBackoff(100); got != remotePollMax {
		t.Errorf("pollBackoff(100) = %v, want the cap %v", got, remotePollMax)
	}
}
