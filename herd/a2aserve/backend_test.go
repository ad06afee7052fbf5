package a2aserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// The test binary doubles as the herd daemon (Connect runs `<exe> herd daemon --foreground`).
func TestMain(m *testing.M) {
	herdtest.ServeDaemonIfAsked()
	fake = herdtest.BuildFakeEngine("a2asrv")
	code := m.Run()
	os.RemoveAll(fake.Dir)
	os.Exit(code)
}

var fake herdtest.FakeEngine

// safety bounds every blocking step so a broken daemon fails the test instead of hanging it.
const safety = 30 * time.Second

type env struct {
	t    *testing.T
	home string
	ctx  context.Context
	c    *herd.Client // the test's own client (the backend owns another)
	b    *Backend
	penv []string // the environment members start with: the fake engine on PATH as "claude"
}

func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with setup run on the home before the daemon starts and extra variables
// in the members' environment.
func newEnvWith(t *testing.T, setup func(home string), memberEnv ...string) *env {
	t.Helper()
	if fake.Err != nil {
		t.Fatal(fake.Err)
	}
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(home)
	}
	t.Setenv("HOME", home)
	t.Setenv("MOSH_HOME", home)
	ctx, cancel := context.WithTimeout(context.Background(), 4*safety)
	e := &env{t: t, home: home, ctx: ctx}
	e.c, err = herd.Connect(ctx, herd.ConnectOptions{Home: home})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	bc, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	e.b, err = New(ctx, bc, Options{Redial: func(ctx context.Context) (*herd.Client, error) {
		return herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	}})
	if err != nil {
		t.Fatal(err)
	}
	// "claude" on the members' PATH is the fake engine.
	e.penv = append(append(os.Environ(), fake.AsClaude(t, t.TempDir(), "60s")...), memberEnv...)
	t.Cleanup(func() {
		e.b.Close()
		sctx, scancel := context.WithTimeout(context.Background(), safety)
		_, _ = e.c.DaemonStop(sctx, true)
		scancel()
		e.c.Close()
		cancel()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(home, "herd", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
		os.RemoveAll(home)
	})
	return e
}

// start launches a fake Claude member and waits until it sits at its prompt.
func (e *env) start(name string, agent bool) {
	e.t.Helper()
	if _, err := e.c.Start(e.ctx, herd.StartParams{Engine: "claude", Name: name, Agent: agent, Env: e.penv, Cwd: e.home}); err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	if _, err := e.c.Wait(e.ctx, []string{name}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: safety}); err != nil {
		e.t.Fatalf("%s never reached idle: %v", name, err)
	}
}

func (e *env) wait(id string, until ...a2a.HerdState) a2a.TaskRecord {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, safety)
	defer cancel()
	rec, err := e.b.Wait(ctx, id, until)
	if err != nil {
		e.t.Fatalf("wait %s for %v: %v", id, until, err)
	}
	return rec
}

func TestSendGetWaitThroughTheRealHerd(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)

	ms, err := e.b.Members(e.ctx)
	if err != nil || len(ms) != 1 || ms[0].Name != "api" || ms[0].Engine != "claude" || ms[0].State != a2a.HerdIdle || ms[0].Autonomous {
		t.Fatalf("members %+v %v", ms, err)
	}

	rec, err := e.b.Send(e.ctx, "api", "say hello", "")
	if err != nil {
		t.Fatal(err)
	}
	if herd.CheckTaskID(rec.ID) != nil || rec.Member != "api" || rec.Text != "say hello" || rec.Outcome != a2a.OutcomeOpen {
		t.Fatalf("sent %+v", rec)
	}
	if st := a2a.StateOf(rec); st != goa2a.TaskStateWorking {
		t.Fatalf("a task just sent reads %s (herd %s), want working", st, rec.State)
	}
	done := e.wait(rec.ID, a2a.HerdBlocked, a2a.HerdDone, a2a.HerdIdle, a2a.HerdGone)
	if a2a.StateOf(done) != goa2a.TaskStateCompleted || !strings.Contains(done.Output, "say hello") || len(done.Transitions) < 2 {
		t.Fatalf("finished turn %+v", done)
	}

	// The member now reads done: a new prompt must not be taken as finished by that leftover.
	second, err := e.b.Send(e.ctx, "api", "say goodbye", "")
	if err != nil {
		t.Fatal(err)
	}
	if second.ID == rec.ID || a2a.StateOf(second) != goa2a.TaskStateWorking {
		t.Fatalf("second task %+v reads %s", second, a2a.StateOf(second))
	}
	got := e.wait(second.ID, a2a.HerdDone, a2a.HerdIdle)
	if !strings.Contains(got.Output, "say goodbye") {
		t.Fatalf("the wait ended on the previous turn's done: %+v", got)
	}
	if !slices.ContainsFunc(got.Transitions, func(tr a2a.Transition) bool { return tr.State == a2a.HerdWorking && !tr.At.Before(got.Submitted) }) {
		t.Fatalf("no working seen after the second prompt: %+v", got.Transitions)
	}

	// Unknown and malformed ids are both "no such task".
	for _, id := range []string{"t-99999", "no-such-task", "t-1; DROP"} {
		if _, err := e.b.Get(e.ctx, id, -1); !errors.Is(err, a2a.ErrNoTask) {
			t.Errorf("get %q: %v, want ErrNoTask", id, err)
		}
	}
	if _, err := e.b.Member(e.ctx, "nobody"); !errors.Is(err, a2a.ErrNoMember) {
		t.Errorf("member nobody: %v", err)
	}
}

func TestAnswerKeepsTheTaskID(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	rec, err := e.b.Send(e.ctx, "api", "perm run the tests", "")
	if err != nil {
		t.Fatal(err)
	}
	asked := e.wait(rec.ID, a2a.HerdBlocked, a2a.HerdDone, a2a.HerdIdle)
	if a2a.StateOf(asked) != goa2a.TaskStateInputRequired || asked.BlockedOn != "permission" || !strings.Contains(asked.Output, "touch perm.txt") {
		t.Fatalf("permission dialog: %+v", asked)
	}
	// A new message to a blocked member is queued (submitted), not refused: it is typed once
	// the member is at rest again.
	queued, err := e.b.Send(e.ctx, "api", "something else", "")
	if err != nil || queued.ID == rec.ID || a2a.StateOf(queued) != goa2a.TaskStateSubmitted {
		t.Fatalf("a new prompt to a blocked member: %+v %v", queued, err)
	}

	answered, err := e.b.Send(e.ctx, "api", "1", rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if answered.ID != rec.ID || len(answered.Answers) != 1 || answered.Answers[0].Text != "1" {
		t.Fatalf("answer: %+v", answered)
	}
	if st := a2a.StateOf(answered); st == goa2a.TaskStateInputRequired {
		t.Fatalf("the answer was returned before the member took it: %+v", answered)
	}
	final := e.wait(rec.ID, a2a.HerdDone, a2a.HerdIdle, a2a.HerdBlocked)
	if a2a.StateOf(final) != goa2a.TaskStateCompleted || !strings.Contains(final.Output, "Created the file") {
		t.Fatalf("after the answer: %+v", final)
	}
	if q := e.wait(queued.ID, a2a.HerdDone, a2a.HerdIdle); a2a.StateOf(q) != goa2a.TaskStateCompleted || !strings.Contains(q.Output, "something else") {
		t.Fatalf("the queued prompt: %+v", q)
	}
	// A finished task takes no more answers.
	if _, err := e.b.Send(e.ctx, "api", "1", rec.ID); err == nil {
		t.Fatal("answering a finished task succeeded")
	}
}

func TestCancelInterruptsAndNeverKills(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	rec, err := e.b.Send(e.ctx, "api", "slow think it through", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(rec.ID, a2a.HerdWorking)
	got, err := e.b.Cancel(e.ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != rec.ID || got.Outcome != a2a.OutcomeCanceled || a2a.StateOf(got) != goa2a.TaskStateCanceled {
		t.Fatalf("canceled %+v", got)
	}
	if _, err := e.b.Cancel(e.ctx, rec.ID); !errors.Is(err, a2a.ErrTaskFinished) {
		t.Fatalf("cancel again: %v", err)
	}
	// Still there, and still canceled once the ledger closed the turn as idle.
	m, err := e.b.Member(e.ctx, "api")
	if err != nil || m.State == a2a.HerdGone {
		t.Fatalf("the member did not survive the cancel: %+v %v", m, err)
	}
	if _, err := e.c.Wait(e.ctx, []string{"api"}, herd.WaitOptions{States: []string{herd.StateIdle, herd.StateDone}, Timeout: safety}); err != nil {
		t.Fatal(err)
	}
	if again, err := e.b.Get(e.ctx, rec.ID, -1); err != nil || again.Outcome != a2a.OutcomeCanceled {
		t.Fatalf("after the turn closed: %+v %v", again, err)
	}
	// The member takes the next prompt: it was interrupted, not killed.
	next, err := e.b.Send(e.ctx, "api", "say hi", "")
	if err != nil {
		t.Fatal(err)
	}
	if fin := e.wait(next.ID, a2a.HerdDone, a2a.HerdIdle); a2a.StateOf(fin) != goa2a.TaskStateCompleted {
		t.Fatalf("prompt after cancel: %+v", fin)
	}

	// A finished task is not cancelable.
	if _, err := e.b.Cancel(e.ctx, next.ID); !errors.Is(err, a2a.ErrTaskFinished) {
		t.Fatalf("cancel of a finished task: %v", err)
	}
}

func TestAutonomousFlagAndGoneMember(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	e.start("yolo", true)
	m, err := e.b.Member(e.ctx, "yolo")
	if err != nil || !m.Autonomous {
		t.Fatalf("yolo %+v %v", m, err)
	}
	rec, err := e.b.Send(e.ctx, "yolo", "slow take your time", "")
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Autonomous {
		t.Fatalf("task of an autonomous member not marked: %+v", rec)
	}
	plain, err := e.b.Send(e.ctx, "api", "slow as well", "")
	if err != nil || plain.Autonomous {
		t.Fatalf("task of a plain member: %+v %v", plain, err)
	}
	// Killing the member cancels its open task (never completed); the autonomous flag outlives
	// the member.
	if _, err := e.c.Kill(e.ctx, []string{"yolo"}, false); err != nil {
		t.Fatal(err)
	}
	got, err := e.b.Get(e.ctx, rec.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != a2a.OutcomeCanceled || a2a.StateOf(got) != goa2a.TaskStateCanceled || got.Error == "" || !got.Autonomous {
		t.Fatalf("task of a killed member: %+v", got)
	}
	// The flag is the ledger's, not this server's memory: after the daemon and the server restart,
	// with both members killed (neither on any roster), the autonomous member's task is still
	// marked and the plain member's task is not.
	if _, err := e.c.Kill(e.ctx, []string{"api"}, false); err != nil {
		t.Fatal(err)
	}
	e.restart()
	for id, auto := range map[string]bool{rec.ID: true, plain.ID: false} {
		got, err := e.b.Get(e.ctx, id, -1)
		if err != nil || got.Autonomous != auto || got.Outcome != a2a.OutcomeCanceled {
			t.Fatalf("%s after both were killed and a restart: autonomous %v (want %v) %+v %v", id, got.Autonomous, auto, got, err)
		}
	}
}

// restart stops the daemon and the backend, and starts both again on the same home: nothing of
// either's memory survives.
func (e *env) restart() {
	e.t.Helper()
	if _, err := e.c.DaemonStop(e.ctx, true); err != nil {
		e.t.Fatal(err)
	}
	e.c.Close()
	e.b.Close()
	var err error
	if e.c, err = herd.Connect(e.ctx, herd.ConnectOptions{Home: e.home}); err != nil {
		e.t.Fatal(err)
	}
	bc, err := herd.Connect(e.ctx, herd.ConnectOptions{Home: e.home, NoStart: true})
	if err != nil {
		e.t.Fatal(err)
	}
	if e.b, err = New(e.ctx, bc, Options{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestReconnectsAfterTheDaemonRestarts(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	if _, err := e.b.Members(e.ctx); err != nil {
		t.Fatal(err)
	}
	// The old daemon is gone once the connection it served closes: its subscription ends.
	sub, err := e.c.Subscribe(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.DaemonStop(e.ctx, true); err != nil {
		t.Fatal(err)
	}
	for range sub.Events() {
	}
	e.c.Close()
	// Any herd verb starts a daemon again; the backend finds it by itself.
	if e.c, err = herd.Connect(e.ctx, herd.ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	// The backend redials by itself (with backoff): wait until it is up again.
	for {
		select {
		case <-e.b.k.connected():
		case <-e.ctx.Done():
			t.Fatal("the backend never reconnected")
		}
		if _, err := e.b.k.client(); err == nil {
			break
		}
	}
	e.start("web", false)
	if m, err := e.b.Member(e.ctx, "web"); err != nil || m.State != a2a.HerdIdle {
		t.Fatalf("web after reconnecting: %+v %v", m, err)
	}
	rec, err := e.b.Send(e.ctx, "web", "say hello", "")
	if err != nil {
		t.Fatal(err)
	}
	if fin := e.wait(rec.ID, a2a.HerdDone, a2a.HerdIdle); a2a.StateOf(fin) != goa2a.TaskStateCompleted {
		t.Fatalf("after reconnecting: %+v", fin)
	}
}

// A remote member exposed through herd serve: its task is canceled with kill (it has no keys),
// and it stays on the roster.
func TestCancelOfARemoteMemberCancelsItsTask(t *testing.T) {
	e := newEnv(t)
	srv := remotetest.NewA2A(t, remotetest.Options{Delay: time.Minute})
	if _, err := e.c.RemoteAdd(e.ctx, "far", srv.URL, herd.RemoteAddOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, err := e.b.Send(e.ctx, "far", "a long job", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(rec.ID, a2a.HerdWorking)
	got, err := e.b.Cancel(e.ctx, rec.ID)
	if err != nil || a2a.StateOf(got) != goa2a.TaskStateCanceled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	task, err := e.c.Task(e.ctx, rec.ID)
	if err != nil || task.Open || task.State != "canceled" {
		t.Fatalf("ledger task %+v %v", task, err)
	}
	if m, err := e.b.Member(e.ctx, "far"); err != nil || !m.Remote {
		t.Fatalf("the remote member is gone after the cancel: %+v %v", m, err)
	}
}

// A cancel is recorded in the ledger: a new server (nothing in memory) still reads it canceled.
// A queued task is canceled untyped; a follow-up to a working task joins it.
func TestCancelIsDurableAndQueuedTasksCancelUntyped(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	rec, err := e.b.Send(e.ctx, "api", "slow think it through", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(rec.ID, a2a.HerdWorking)
	follow, err := e.b.Send(e.ctx, "api", "and then this", rec.ID)
	if err != nil || follow.ID != rec.ID || len(follow.Answers) != 1 || follow.Answers[0].Text != "and then this" {
		t.Fatalf("follow-up into a working task: %+v %v", follow, err)
	}
	queued, err := e.b.Send(e.ctx, "api", "say later", "")
	if err != nil || a2a.StateOf(queued) != goa2a.TaskStateSubmitted {
		t.Fatalf("queued: %+v %v", queued, err)
	}
	got, err := e.b.Cancel(e.ctx, queued.ID)
	if err != nil || a2a.StateOf(got) != goa2a.TaskStateCanceled {
		t.Fatalf("cancel of a queued task: %+v %v", got, err)
	}
	if _, err := e.b.Cancel(e.ctx, rec.ID); err != nil {
		t.Fatal(err)
	}
	// A server that never saw the cancels reads them from the ledger.
	bc, err := herd.Connect(e.ctx, herd.ConnectOptions{Home: e.home, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := New(e.ctx, bc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for _, id := range []string{rec.ID, queued.ID} {
		got, err := fresh.Get(e.ctx, id, -1)
		if err != nil || got.Outcome != a2a.OutcomeCanceled || a2a.StateOf(got) != goa2a.TaskStateCanceled {
			t.Fatalf("%s after a restart of the server: %+v %v", id, got, err)
		}
	}
	r, err := e.c.Read(e.ctx, "api", 200)
	if err != nil || strings.Contains(r.Screen, "say later") {
		t.Fatalf("a canceled queued prompt was typed: %v\n%s", err, r.Screen)
	}
}

// A member whose process dies mid-turn: its task fails (A2A failed, never completed), with the
// exit code in the error.
func TestCrashedTaskFails(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	rec, err := e.b.Send(e.ctx, "api", "crash 7", "")
	if err != nil {
		t.Fatal(err)
	}
	got := e.wait(rec.ID, a2a.HerdDone, a2a.HerdIdle, a2a.HerdGone)
	if got.Outcome != a2a.OutcomeFailed || a2a.StateOf(got) != goa2a.TaskStateFailed || !strings.Contains(got.Error, "code 7") {
		t.Fatalf("task of a crashed member: %+v", got)
	}
}

// `herd interrupt` (Client.Interrupt, what the CLI calls) and A2A tasks/cancel go through the
// same daemon path: the daemon presses the engines table's interrupt keys — here an override
// that takes two Escapes, for an engine that ignores one (OpenCode's "esc again to interrupt")
// — and records the task interrupted or canceled. The A2A server holds no keys of its own.
func TestInterruptAndCancelGoThroughTheDaemon(t *testing.T) {
	e := newEnvWith(t, func(home string) {
		dir := filepath.Join(home, "herd")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		table := `{"engines":[{"name":"claude","interrupt":{"keys":["Escape","Escape"],"thenKeys":[]}}]}`
		if err := os.WriteFile(filepath.Join(dir, "engines.json"), []byte(table), 0o600); err != nil {
			t.Fatal(err)
		}
	}, "FAKEENGINE_ESC_TWICE=1")
	e.start("api", false)
	e.start("web", false)
	rec, err := e.b.Send(e.ctx, "api", "slow think it through", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(rec.ID, a2a.HerdWorking)
	ir, err := e.c.Interrupt(e.ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	if ir.Name != "api" || ir.Task != rec.ID || ir.TaskState != "interrupted" || !slices.Equal(ir.Keys, []string{"Escape", "Escape"}) || len(ir.Then) != 0 {
		t.Fatalf("interrupt result %+v", ir)
	}
	// One Escape would leave it working ("esc again to interrupt") for a minute: it stops only
	// because the daemon pressed the table's two.
	if _, err := e.c.Wait(e.ctx, []string{"api"}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: safety}); err != nil {
		t.Fatalf("api never stopped after the interrupt: %v", err)
	}
	if task, err := e.c.Task(e.ctx, rec.ID); err != nil || task.Open || task.State != "interrupted" {
		t.Fatalf("ledger task after interrupt: %+v %v", task, err)
	}
	if got, err := e.b.Get(e.ctx, rec.ID, -1); err != nil || got.Outcome != a2a.OutcomeCanceled {
		t.Fatalf("an interrupted task over A2A: %+v %v", got, err)
	}

	web, err := e.b.Send(e.ctx, "web", "slow take your time", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(web.ID, a2a.HerdWorking)
	if got, err := e.b.Cancel(e.ctx, web.ID); err != nil || a2a.StateOf(got) != goa2a.TaskStateCanceled {
		t.Fatalf("A2A cancel: %+v %v", got, err)
	}
	if _, err := e.c.Wait(e.ctx, []string{"web"}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: safety}); err != nil {
		t.Fatalf("web never stopped after the A2A cancel: %v", err)
	}
	if task, err := e.c.Task(e.ctx, web.ID); err != nil || task.Open || task.State != "canceled" {
		t.Fatalf("ledger task after cancel: %+v %v", task, err)
	}
	if m, err := e.b.Member(e.ctx, "web"); err != nil || m.State == a2a.HerdGone {
		t.Fatalf("the cancel killed web: %+v %v", m, err)
	}

	// Nothing to interrupt: an unknown member is exit 3; a member at rest gets the keys and no
	// task is touched.
	if _, err := e.c.Interrupt(e.ctx, "ghost"); exitcode.Of(err) != exitcode.Gone {
		t.Fatalf("interrupt ghost: %v", err)
	}
	if ir, err := e.c.Interrupt(e.ctx, "web"); err != nil || ir.Task != "" {
		t.Fatalf("interrupt of a member at rest: %+v %v", ir, err)
	}
}

// A task canceled over A2A reads canceled after the daemon restarts: the cancel is the ledger's,
// not anything in the memory of the server or of the daemon.
func TestCanceledTaskReadsCanceledAfterADaemonRestart(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	rec, err := e.b.Send(e.ctx, "api", "slow think it through", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(rec.ID, a2a.HerdWorking)
	queued, err := e.b.Send(e.ctx, "api", "say later", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{queued.ID, rec.ID} {
		if got, err := e.b.Cancel(e.ctx, id); err != nil || a2a.StateOf(got) != goa2a.TaskStateCanceled {
			t.Fatalf("cancel %s: %+v %v", id, got, err)
		}
	}
	e.restart()
	for _, id := range []string{rec.ID, queued.ID} {
		got, err := e.b.Get(e.ctx, id, -1)
		if err != nil || got.Outcome != a2a.OutcomeCanceled || a2a.StateOf(got) != goa2a.TaskStateCanceled {
			t.Fatalf("%s after a daemon restart: %+v %v", id, got, err)
		}
		if _, err := e.b.Cancel(e.ctx, id); !errors.Is(err, a2a.ErrTaskFinished) {
			t.Fatalf("cancel of %s again after the restart: %v", id, err)
		}
	}
}

// Text the herd refuses (a control character) is the caller's input to fix: ErrBadInput, which
// the A2A server answers -32602, with the herd's reason; nothing is typed.
func TestRefusedTextIsBadInput(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	_, err := e.b.Send(e.ctx, "api", "stop\x03now", "")
	if !errors.Is(err, a2a.ErrBadInput) || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("send with a Ctrl-C: %v, want ErrBadInput naming the control character", err)
	}
	if ts, err := e.c.Tasks(e.ctx, herd.TasksFilter{Member: "api"}); err != nil || len(ts) != 0 {
		t.Fatalf("a refused prompt minted tasks %+v (%v)", ts, err)
	}
}

// A follow-up to a task still queued behind another prompt (A2A submitted, not ended) is taken:
// it becomes that task's next turn, typed right after the task's first turn and before any
// prompt queued behind the task, and the task ends once both turns are done.
func TestFollowUpToAQueuedTaskIsItsNextTurn(t *testing.T) {
	e := newEnv(t)
	e.start("api", false)
	first, err := e.b.Send(e.ctx, "api", "slow think it through", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(first.ID, a2a.HerdWorking)
	queued, err := e.b.Send(e.ctx, "api", "say one", "")
	if err != nil || a2a.StateOf(queued) != goa2a.TaskStateSubmitted {
		t.Fatalf("queued: %+v %v", queued, err)
	}
	behind, err := e.b.Send(e.ctx, "api", "say three", "")
	if err != nil || a2a.StateOf(behind) != goa2a.TaskStateSubmitted {
		t.Fatalf("queued behind it: %+v %v", behind, err)
	}
	follow, err := e.b.Send(e.ctx, "api", "say two", queued.ID)
	if err != nil || follow.ID != queued.ID || a2a.StateOf(follow) != goa2a.TaskStateSubmitted {
		t.Fatalf("follow-up to a queued task: %+v %v", follow, err)
	}
	if _, err := e.b.Cancel(e.ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	got := e.wait(queued.ID)
	if a2a.StateOf(got) != goa2a.TaskStateCompleted || len(got.Answers) != 1 || got.Answers[0].Text != "say two" || !strings.Contains(got.Output, "say two") {
		t.Fatalf("the queued task with its follow-up: %s %+v", a2a.StateOf(got), got)
	}
	// It keeps both turns' output, in order.
	if a, b := strings.Index(got.Output, "say one"), strings.LastIndex(got.Output, "say two"); a < 0 || b < a {
		t.Fatalf("the continued task's output %q, want both turns", got.Output)
	}
	last := e.wait(behind.ID)
	if a2a.StateOf(last) != goa2a.TaskStateCompleted || !strings.Contains(last.Output, "say three") {
		t.Fatalf("the task queued behind: %s %+v", a2a.StateOf(last), last)
	}
	r, err := e.c.Read(e.ctx, "api", 500)
	if err != nil {
		t.Fatal(err)
	}
	one, two, three := strings.Index(r.Screen, "say one"), strings.Index(r.Screen, "say two"), strings.Index(r.Screen, "say three")
	if one < 0 || !(one < two && two < three) {
		t.Fatalf("typed out of order (one %d, two %d, three %d):\n%s", one, two, three, r.Screen)
	}
}

// Through the A2A handler over the real herd: parallel messages to the herd endpoint that name
// no member spread over the idle members (each is reserved until the herd typed its prompt),
// instead of piling onto the first idle one.
func TestParallelHerdMessagesSpreadOverIdleMembers(t *testing.T) {
	e := newEnv(t)
	names := []string{"m1", "m2", "m3"}
	for _, n := range names {
		e.start(n, false)
	}
	tokPath := filepath.Join(e.home, "a2a-token")
	tok, _, err := a2a.EnsureToken(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := a2a.NewAuthenticator(a2a.AuthConfig{TokenPath: tokPath})
	if err != nil {
		t.Fatal(err)
	}
	h, err := a2a.NewHandler(a2a.Config{Backend: e.b, Auth: auth, PublicURL: "http://herd.test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	ids := make(chan string, len(names))
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-%d","parts":[{"kind":"text","text":"say hi %d"}]}}}`, i, i, i)
			req, _ := http.NewRequestWithContext(e.ctx, http.MethodPost, srv.URL+"/a2a", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out struct {
				Result struct {
					ID string `json:"id"`
				} `json:"result"`
				Error any `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Result.ID == "" {
				t.Errorf("send %d: %v %v", i, err, out.Error)
				return
			}
			ids <- out.Result.ID
		}()
	}
	wg.Wait()
	close(ids)
	per := map[string]int{}
	for id := range ids {
		rec, err := e.b.Get(e.ctx, id, -1)
		if err != nil {
			t.Fatal(err)
		}
		per[rec.Member]++
	}
	if len(per) != len(names) {
		t.Fatalf("%d parallel messages over %d idle members landed on %v, want one each", len(names), len(names), per)
	}
}
