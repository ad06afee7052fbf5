package engines

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/conformance/internal/realengines"
	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/screen"
)

// Issue 22 on the real engines, each a focused test run with -run (MOSH_ENGINES names the
// engines, as for TestEngines):
//
//	MOSH_ENGINES=claude,codex,pi go test ./conformance/engines -run 'TestFailedTurn|TestCodexStartUp' -v -count=1

// enginesFromEnv lists the engines MOSH_ENGINES names among only (all of them when only is
// empty), skipping the test when it is unset or names none of them.
func enginesFromEnv(t *testing.T, only ...string) []*Engine {
	t.Helper()
	spec := strings.TrimSpace(os.Getenv("MOSH_ENGINES"))
	if spec == "" {
		t.Skip("real-engine conformance is off: set MOSH_ENGINES=claude,codex (or all) after conformance/engines/install.sh")
	}
	var out []*Engine
	for _, e := range Engines {
		if (spec == "all" || strings.Contains(","+spec+",", ","+e.Name+",")) && (len(only) == 0 || strings.Contains(","+strings.Join(only, ",")+",", ","+e.Name+",")) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		t.Skipf("MOSH_ENGINES=%s names none of %v", spec, only)
	}
	return out
}

func moshForTest(t *testing.T) string {
	t.Helper()
	if m := os.Getenv("MOSH_ENGINES_MOSH"); m != "" {
		return m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, err := BuildMosh(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// member is one real engine started as a member of a fresh herd, its hooks installed.
type liveMember struct {
	h      *Herd
	e      *Engine
	fake   *fakeapi.Server
	mirror *Mirror
}

// startMember lays out a herd for e, installs its hooks, starts the daemon and the engine, and
// waits until its screen says start-up is over. With noMoshOnPath the members' PATH holds no mosh
// (the hooks verb and the daemon run by absolute path, as ./bin/mosh of the Quick start does).
func startMember(t *testing.T, ctx context.Context, mosh string, e *Engine, noMoshOnPath bool, events func(herd.Event)) *liveMember {
	t.Helper()
	bin, err := e.BinaryPath(CacheDir())
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeapi.New(fakeapi.Options{SlowFor: 5 * time.Second})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	h, err := NewHerd(mosh, bin, e.Bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Remove() })
	if noMoshOnPath {
		if err := os.Remove(filepath.Join(h.BinDir, "mosh")); err != nil {
			t.Fatal(err)
		}
		if p, err := herd.LookPath("mosh", h.Project, h.Env()); err == nil {
			t.Fatalf("a mosh is on the PATH the member gets (%s): this test needs none", p)
		}
	}
	args, extra, err := e.Setup(SetupEnv{Home: h.Home, Project: h.Project, APIURL: srv.URL, Model: "gpt-fake", Cache: CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := h.InstallHooks(ctx, e.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", e.Name, strings.TrimSpace(out))
	if err := h.StartDaemon(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Stop()
		if t.Failed() {
			if b, err := os.ReadFile(h.DaemonLog()); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	})
	if events != nil {
		sub, err := h.Client.Subscribe(ctx, e.Name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Close() })
		go func() {
			for ev := range sub.Events() {
				events(ev)
			}
		}()
	}
	m, err := h.Client.Start(ctx, herd.StartParams{Engine: e.Name, Name: e.Name, Cwd: h.Project, Args: args, Env: h.Env(extra...), Cols: Cols, Rows: Rows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.KillMember(e.Name, m.Pid) })
	mirror, err := AttachMirror(ctx, h.Client, e.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mirror.Close)
	if _, err := mirror.WaitScreen(ctx, e.StartTimeout, func(s screen.Snapshot) bool { return e.Ready(s.Text()) }); err != nil {
		t.Fatalf("%s did not start: %v", e.Name, err)
	}
	return &liveMember{h: h, e: e, fake: fake, mirror: mirror}
}

// failureEvent is each engine's own word that a turn failed (the engines table's failures), or
// "" where the engine has none: Codex fires no hook after an API error (facts/engines.md §9).
// OpenCode's is session.idle whose last assistant message carries the error (the plugin sends it).
var failureEvent = map[string]string{"claude": "StopFailure", "opencode": "session.idle", "pi": "agent_end", "codex": ""}

// TestFailedTurnWithoutMoshOnPath: with no mosh on the member's PATH (issue 22 item 1) the
// installed hooks still report, through the daemon's MOSH_HERD_BIN; an API error (HTTP 400 from
// the fake model API) ends the turn's task failed, with the error as its artifact and the
// engine's failure event as its end (item 2), and prompt --wait says so (exit 3); the next turn
// ends done on the engine's own hook. Codex, which fires no hook after an API error, ends that
// task done on the screen's word: it has no failure event to map.
func TestFailedTurnWithoutMoshOnPath(t *testing.T) {
	engines := enginesFromEnv(t, "claude", "codex", "opencode", "pi")
	realengines.Lock(t)
	mosh := moshForTest(t)
	for _, e := range engines {
		t.Run(e.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			m := startMember(t, ctx, mosh, e, true, nil)
			c := m.h.Client
			r, err := c.Prompt(ctx, e.Name, "fail please "+fakeapi.TriggerAPIError, herd.PromptOptions{Wait: true, Timeout: e.FirstTurnTimeout})
			task, terr := c.Task(ctx, r.Task)
			if terr != nil {
				t.Fatal(terr)
			}
			t.Logf("%s: the API error's task: %s, artifact %+v, transitions %+v (prompt --wait: %v)", e.Name, task.State, task.Artifact, task.Transitions, err)
			if ev := failureEvent[e.Name]; ev != "" {
				if exitcode.Of(err) != exitcode.Gone || r.TaskState != "failed" {
					t.Errorf("prompt --wait on the failed turn: %+v %v; want exit 3, task failed", r, err)
				}
				last := task.Transitions[len(task.Transitions)-1]
				if task.State != "failed" || task.Artifact == nil || task.Artifact.Source != "error" ||
					!strings.Contains(task.Artifact.Text, fakeapi.ErrorMessage) || last.Authority != herd.AuthorityHook || !strings.Contains(last.Note, ev) {
					t.Errorf("the failed turn's task: %s, artifact %+v, end %+v; want failed by the %s hook with the API's error", task.State, task.Artifact, last, ev)
				}
			} else if err != nil || task.State == "failed" {
				t.Errorf("%s has no failure event: the task should end on the screen, got %s (%v)", e.Name, task.State, err)
			}
			r, err = c.Prompt(ctx, e.Name, "say "+fakeapi.TriggerEcho+" after", herd.PromptOptions{Wait: true, Timeout: e.FirstTurnTimeout})
			if err != nil {
				t.Fatalf("the turn after: %+v %v", r, err)
			}
			task, err = c.Task(ctx, r.Task)
			if err != nil {
				t.Fatal(err)
			}
			if task.State != herd.StateDone || task.Artifact == nil || task.Artifact.Source != "hook" || !strings.Contains(task.Artifact.Text, fakeapi.EchoPrefix+"after") {
				t.Errorf("the turn after, with no mosh on PATH: %s, artifact %+v, transitions %+v; want done with the engine's answer from its hook",
					task.State, task.Artifact, task.Transitions)
			}
		})
	}
}

// TestCodexStartUpSettles (issue 22 item 5): the real Codex puts a spinner in its title 0–75 ms
// after its first idle frame; the member's first idle is the settled one, so it is never
// followed by working before a prompt. The window watched after it is 3 s, far past the flap.
func TestCodexStartUpSettles(t *testing.T) {
	engines := enginesFromEnv(t, "codex")
	realengines.Lock(t)
	mosh := moshForTest(t)
	e := engines[0]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	states := make(chan herd.Event, 256)
	m := startMember(t, ctx, mosh, e, false, func(ev herd.Event) {
		if ev.Type == herd.EventState {
			states <- ev
		}
	})
	var seen []string
	idleAt := time.Time{}
	window := time.After(time.Hour)
	for {
		select {
		case ev := <-states:
			seen = append(seen, ev.State+"/"+ev.Authority)
			if ev.State == herd.StateIdle && idleAt.IsZero() {
				idleAt = time.Now()
				window = time.After(3 * time.Second)
			}
			if !idleAt.IsZero() && ev.State != herd.StateIdle {
				t.Fatalf("after its first idle the member read %s (states %v): the start-up flap was reported", ev.State, seen)
			}
		case <-window:
			t.Logf("codex start-up states: %v; title now %q", seen, m.mirror.Snapshot().Title)
			return
		case <-ctx.Done():
			t.Fatalf("codex never read idle: %v (states %v)", ctx.Err(), seen)
		}
	}
}
