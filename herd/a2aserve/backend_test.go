package a2aserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/herdd"
	"github.com/mosh-dev/mosh/herd/remote/remotetest"
	"github.com/mosh-dev/mosh/runtime/exitcode"
)

// The test binary doubles as the herd daemon (Connect runs `<exe> herd daemon --foreground`).
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "herd" && os.Args[2] == "daemon" && os.Args[3] == "--foreground" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		err := herdd.Serve(ctx, "")
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(int(exitcode.Of(err)))
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "a2asrv")
	if err == nil {
		fakeDir = dir
		out, berr := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", filepath.Join(dir, "fakeengine"), "../fakeengine").CombinedOutput()
		if berr != nil {
			fakeErr = fmt.Errorf("go build ./herd/fakeengine: %v\n%s", berr, out)
		}
	} else {
		fakeErr = err
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	fakeDir string
	fakeErr error
)

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

func newEnv(t *testing.T) *env {
	t.Helper()
	if fakeErr != nil {
		t.Fatal(fakeErr)
	}
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
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
	e.b, err = New(ctx, bc, Options{Home: home, Redial: func(ctx context.Context) (*herd.Client, error) {
		return herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true})
	}})
	if err != nil {
		t.Fatal(err)
	}
	// "claude" is a script that runs the fake engine and drops the engine's own flags (the
	// autonomous --dangerously-skip-permissions among them), which the fake does not take.
	bin := t.TempDir()
	script := "#!/bin/sh\nexec '" + filepath.Join(fakeDir, "fakeengine") + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(bin, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"hooks":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.penv = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKEENGINE_TURN=200ms", "FAKEENGINE_TICK=50ms",
		"FAKEENGINE_SLOW=60s", "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0", "FAKEENGINE_SETTINGS="+settings)
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
	if !taskIDRE().MatchString(rec.ID) || rec.Member != "api" || rec.Text != "say hello" || rec.Outcome != a2a.OutcomeOpen {
		t.Fatalf("sent %+v", rec)
	}
	if st := a2a.StateOf(rec); st != a2a.StateWorking {
		t.Fatalf("a task just sent reads %s (herd %s), want working", st, rec.State)
	}
	done := e.wait(rec.ID, a2a.HerdBlocked, a2a.HerdDone, a2a.HerdIdle, a2a.HerdGone)
	if a2a.StateOf(done) != a2a.StateCompleted || !strings.Contains(done.Output, "say hello") || len(done.Transitions) < 2 {
		t.Fatalf("finished turn %+v", done)
	}

	// The member now reads done: a new prompt must not be taken as finished by that leftover.
	second, err := e.b.Send(e.ctx, "api", "say goodbye", "")
	if err != nil {
		t.Fatal(err)
	}
	if second.ID == rec.ID || a2a.StateOf(second) != a2a.StateWorking {
		t.Fatalf("second task %+v reads %s", second, a2a.StateOf(second))
	}
	got := e.wait(second.ID, a2a.HerdDone, a2a.HerdIdle)
	if !strings.Contains(got.Output, "say goodbye") {
		t.Fatalf("the wait ended on the previous turn's done: %+v", got)
	}
	if !slices.ContainsFunc(got.Transitions, func(tr a2a.Transition) bool { return tr.State == a2a.HerdWorking && !tr.At.Before(got.Submitted) }) {
		t.Fatalf("no working seen after the second prompt: %+v", got.Transitions)
	}

	// A finished task is served from the cache until its member has an event.
	if _, err := e.b.Get(e.ctx, rec.ID, -1); err != nil {
		t.Fatal(err)
	}
	e.b.k.mu.Lock()
	entry, cached := e.b.k.tasks[rec.ID]
	valid := cached && entry.gen == e.b.k.memberGen["api"]
	e.b.k.mu.Unlock()
	if !valid {
		t.Fatal("a closed task was not cached")
	}
	third, err := e.b.Send(e.ctx, "api", "say more", "")
	if err != nil {
		t.Fatal(err)
	}
	e.wait(third.ID, a2a.HerdDone, a2a.HerdIdle)
	e.b.k.mu.Lock()
	stale := e.b.k.tasks[rec.ID].gen != e.b.k.memberGen["api"]
	e.b.k.mu.Unlock()
	if !stale {
		t.Fatal("the member's events did not invalidate its cached tasks")
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
	if a2a.StateOf(asked) != a2a.StateInputRequired || asked.BlockedOn != "permission" || !strings.Contains(asked.Output, "touch perm.txt") {
		t.Fatalf("permission dialog: %+v", asked)
	}
	// A new message to a blocked member is queued (submitted), not refused: it is typed once
	// the member is at rest again.
	queued, err := e.b.Send(e.ctx, "api", "something else", "")
	if err != nil || queued.ID == rec.ID || a2a.StateOf(queued) != a2a.StateSubmitted {
		t.Fatalf("a new prompt to a blocked member: %+v %v", queued, err)
	}

	answered, err := e.b.Send(e.ctx, "api", "1", rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if answered.ID != rec.ID || len(answered.Answers) != 1 || answered.Answers[0].Text != "1" {
		t.Fatalf("answer: %+v", answered)
	}
	if st := a2a.StateOf(answered); st == a2a.StateInputRequired {
		t.Fatalf("the answer was returned before the member took it: %+v", answered)
	}
	final := e.wait(rec.ID, a2a.HerdDone, a2a.HerdIdle, a2a.HerdBlocked)
	if a2a.StateOf(final) != a2a.StateCompleted || !strings.Contains(final.Output, "Created the file") {
		t.Fatalf("after the answer: %+v", final)
	}
	if q := e.wait(queued.ID, a2a.HerdDone, a2a.HerdIdle); a2a.StateOf(q) != a2a.StateCompleted || !strings.Contains(q.Output, "something else") {
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
	if got.ID != rec.ID || got.Outcome != a2a.OutcomeCanceled || a2a.StateOf(got) != a2a.StateCanceled {
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
	if fin := e.wait(next.ID, a2a.HerdDone, a2a.HerdIdle); a2a.StateOf(fin) != a2a.StateCompleted {
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
	if got.Outcome != a2a.OutcomeCanceled || a2a.StateOf(got) != a2a.StateCanceled || got.Error == "" || !got.Autonomous {
		t.Fatalf("task of a killed member: %+v", got)
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
	if e.c, err = herd.Connect(e.ctx, herd.ConnectOptions{Home: e.home}); err != nil {
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
	if fin := e.wait(rec.ID, a2a.HerdDone, a2a.HerdIdle); a2a.StateOf(fin) != a2a.StateCompleted {
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
	if err != nil || a2a.StateOf(got) != a2a.StateCanceled {
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
	if err != nil || a2a.StateOf(queued) != a2a.StateSubmitted {
		t.Fatalf("queued: %+v %v", queued, err)
	}
	got, err := e.b.Cancel(e.ctx, queued.ID)
	if err != nil || a2a.StateOf(got) != a2a.StateCanceled {
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
	fresh, err := New(e.ctx, bc, Options{Home: e.home})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for _, id := range []string{rec.ID, queued.ID} {
		got, err := fresh.Get(e.ctx, id, -1)
		if err != nil || got.Outcome != a2a.OutcomeCanceled || a2a.StateOf(got) != a2a.StateCanceled {
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
	if got.Outcome != a2a.OutcomeFailed || a2a.StateOf(got) != a2a.StateFailed || !strings.Contains(got.Error, "code 7") {
		t.Fatalf("task of a crashed member: %+v", got)
	}
}
