package evalconf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines"
	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/conformance/internal/realengines"
)

// cliSafety bounds a CLI call that is not an eval (start, wait, remote add): a safety net so a
// broken daemon fails the test instead of hanging it, not an assertion about speed.
const cliSafety = 5 * time.Minute

// world is the whole set-up: the fake model API, the local herd whose eval runs, the remote
// herd serving one member over A2A, and the environment every engine needs.
type world struct {
	t       *testing.T
	engines []*engines.Engine
	out     string
	fake    *fakeapi.Server
	local   *engines.Herd
	remote  *engines.Herd
	// extra is the engines' environment, added to every command's (see doc.go).
	extra []string
	// args are each engine's launch arguments from its Setup, by engine name.
	args map[string][]string
	// remoteEngine runs as member "api" of the remote herd, added locally as "far".
	remoteEngine *engines.Engine
}

// result is one finished mosh command.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("mosh %s → exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, clip(r.stdout, 20000), clip(r.stderr, 20000))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…(cut)"
	}
	return s
}

// run runs mosh in herd h's environment plus the engines' (and env), in the project directory.
func (w *world) run(ctx context.Context, h *engines.Herd, env []string, args ...string) result {
	w.t.Helper()
	cmd := exec.CommandContext(ctx, h.Mosh, args...)
	cmd.Dir = h.Project
	cmd.Env = h.Env(append(append([]string(nil), w.extra...), env...)...)
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{args: args, stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		r.code = ee.ExitCode()
	default:
		w.t.Fatalf("mosh %s: %v (context: %v)\n%s", strings.Join(args, " "), err, ctx.Err(), r)
	}
	return r
}

// must runs a command that has to succeed within cliSafety and returns its stdout.
func (w *world) must(h *engines.Herd, env []string, args ...string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliSafety)
	defer cancel()
	r := w.run(ctx, h, env, args...)
	if r.code != 0 {
		w.t.Fatalf("%s", r)
	}
	return r.stdout
}

// engineList reads MOSH_EVAL_ENGINES ("" skips the suite).
func engineList(t *testing.T) []*engines.Engine {
	spec := strings.TrimSpace(os.Getenv("MOSH_EVAL_ENGINES"))
	if spec == "" {
		t.Skip("real-engine eval conformance is off: set MOSH_EVAL_ENGINES=claude,codex,opencode,pi (or all) after conformance/engines/install.sh")
	}
	if spec == "all" {
		return engines.Engines
	}
	var out []*engines.Engine
	for _, name := range strings.Split(spec, ",") {
		e, err := engines.Lookup(strings.TrimSpace(name))
		if err != nil {
			t.Fatalf("MOSH_EVAL_ENGINES=%s: %v", spec, err)
		}
		out = append(out, e)
	}
	return out
}

// newWorld builds everything up to the eval: binaries, the fake API, the local herd with the
// engines configured and hooked and, with remote, the remote herd whose member is served and
// added as "far".
func newWorld(t *testing.T, list []*engines.Engine, remote bool) *world {
	realengines.Lock(t) // the real-engine suites take turns on this machine
	cache := engines.CacheDir()
	bins := map[string]string{}
	for _, e := range list {
		bin, err := e.BinaryPath(cache)
		if err != nil {
			t.Fatal(err) // a named engine that cannot run fails the suite
		}
		bins[e.Name] = bin
	}
	out := os.Getenv("MOSH_EVAL_OUT")
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "mosh-eval-out-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("reports, the fake API's log and the daemons' logs go to %s", out)

	mosh, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}

	apiLog, err := os.Create(filepath.Join(out, "api.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { apiLog.Close() })
	fake := fakeapi.New(fakeapi.Options{Log: &lockedWriter{w: apiLog}})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)

	local, err := engines.NewHerd(mosh, bins[list[0].Name], list[0].Bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list[1:] {
		if err := os.Symlink(bins[e.Name], filepath.Join(local.BinDir, e.Bin)); err != nil {
			t.Fatal(err)
		}
	}
	w := &world{t: t, engines: list, out: out, fake: fake, local: local, args: map[string][]string{}}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = local.Remove()
		} else {
			t.Logf("the herds' directory is kept for a look: %s", local.Root)
		}
	})
	w.gitRepo(local.Project)

	// One HOME for every engine and both herds: each Setup writes its own files.
	w.extra = []string{"IS_SANDBOX=1"}
	for _, e := range list {
		args, env, err := e.Setup(engines.SetupEnv{Home: local.Home, Project: local.Project, APIURL: srv.URL, Model: "gpt-fake", Cache: cache})
		if err != nil {
			t.Fatalf("%s: writing its offline configuration: %v", e.Name, err)
		}
		w.args[e.Name] = args
		w.extra = append(w.extra, env...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliSafety)
	defer cancel()
	for _, e := range list {
		if _, _, err := local.InstallHooks(ctx, e.Name); err != nil {
			t.Fatal(err)
		}
	}
	if err := local.StartDaemon(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.stopHerd(local, "local") })

	w.remoteEngine = list[0]
	for _, e := range list {
		if e.Name == "pi" {
			w.remoteEngine = e
		}
	}
	if name := os.Getenv("MOSH_EVAL_REMOTE"); name != "" {
		e, err := engines.Lookup(name)
		if err != nil || bins[name] == "" {
			t.Fatalf("MOSH_EVAL_REMOTE=%s: name one of the engines in MOSH_EVAL_ENGINES (%v)", name, err)
		}
		w.remoteEngine = e
	}
	if remote {
		w.startRemote(ctx)
	}
	return w
}

var (
	buildMu  sync.Mutex
	builtDir string // removed by TestMain
	built    string
)

// buildOnce builds ./cmd/mosh once for every test of the package (or takes MOSH_ENGINES_MOSH).
func buildOnce() (string, error) {
	if p := os.Getenv("MOSH_ENGINES_MOSH"); p != "" {
		return p, nil
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if built != "" {
		return built, nil
	}
	dir, err := os.MkdirTemp("", "mosh-eval-bin-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := engines.BuildMosh(ctx, dir)
	if err != nil {
		return "", err
	}
	built = p
	return p, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// gitRepo makes dir a git repository with one commit (what --isolated makes worktrees of).
func (w *world) gitRepo(dir string) {
	w.git(dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# eval conformance project\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.git(dir, "add", "README.md")
	w.git(dir, "commit", "-q", "-m", "init")
}

func (w *world) git(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = w.local.Env("GIT_AUTHOR_NAME=eval", "GIT_AUTHOR_EMAIL=eval@example.invalid",
		"GIT_COMMITTER_NAME=eval", "GIT_COMMITTER_EMAIL=eval@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, b)
	}
	return string(b)
}

// startRemote starts the second herd (same HOME, its own MOSH_HOME), its member "api" running
// remoteEngine in the project, `mosh herd serve` on loopback, and adds the member to
// the local herd as "far".
func (w *world) startRemote(ctx context.Context) {
	t, l := w.t, w.local
	r := &engines.Herd{Root: filepath.Join(l.Root, "r"), Home: l.Home, MoshHome: filepath.Join(l.Root, "rmh"),
		Project: l.Project, BinDir: l.BinDir, Mosh: l.Mosh}
	for _, d := range []string{r.Root, r.MoshHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.StartDaemon(ctx); err != nil {
		t.Fatal(err)
	}
	w.remote = r
	t.Cleanup(func() { w.stopHerd(r, "remote") })

	e := w.remoteEngine
	// Not --agent: `herd serve` never exposes an autonomous member.
	args := append([]string{"herd", "start", e.Name, "--name", "api"}, dashArgs(w.args[e.Name])...)
	w.must(r, nil, args...)
	w.must(r, nil, "herd", "wait", "api", "--state", "idle", "--timeout", fmt.Sprint(int((e.StartTimeout + time.Minute).Seconds())))

	token := strings.TrimSpace(w.must(r, nil, "herd", "token", "--show"))
	base := w.serve(r)
	w.must(l, []string{"MOSH_REMOTE_FAR_TOKEN=" + token}, "herd", "remote", "add", "far", base+"/a2a/members/api/")
}

func dashArgs(a []string) []string {
	if len(a) == 0 {
		return nil
	}
	return append([]string{"--"}, a...)
}

// serve runs `mosh herd serve --port 0` for herd h and returns its base URL; it is stopped
// (SIGTERM, then killed) when the test ends.
func (w *world) serve(h *engines.Herd) string {
	t := w.t
	cmd := exec.Command(h.Mosh, "herd", "serve", "--port", "0")
	cmd.Dir = h.Project
	cmd.Env = h.Env(w.extra...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first, exited := make(chan string, 1), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for n := 0; sc.Scan(); n++ {
			if n == 0 {
				first <- sc.Text()
			}
		}
		close(first)
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case line := <-first:
		base, ok := strings.CutPrefix(line, "mosh herd serve: listening on ")
		if !ok {
			t.Fatalf("mosh herd serve printed %q first, want its URL; stderr:\n%s", line, stderr.String())
		}
		return strings.TrimSpace(base)
	case <-time.After(cliSafety):
		t.Fatalf("mosh herd serve printed nothing within %s; stderr:\n%s", cliSafety, stderr.String())
	}
	return ""
}

// stopHerd stops a herd's daemon (its members with it) and keeps its log in the output dir.
func (w *world) stopHerd(h *engines.Herd, label string) {
	h.Stop()
	if b, err := os.ReadFile(h.DaemonLog()); err == nil {
		_ = os.WriteFile(filepath.Join(w.out, label+"-daemon.log"), b, 0o644)
	}
}

// engineArgs is the --engine-args flags giving each engine its Setup's launch arguments. With
// --agent, Claude Code's `--permission-mode default` is left out: it would override the
// engine's autonomous flag (--dangerously-skip-permissions) and ask anyway.
func (w *world) engineArgs(agent bool) []string {
	var out []string
	for _, e := range w.engines {
		a := w.args[e.Name]
		if agent {
			a = withoutPermissionMode(a)
		}
		if len(a) > 0 {
			out = append(out, "--engine-args", e.Name+"="+shellJoin(a))
		}
	}
	return out
}

// withoutPermissionMode drops a `--permission-mode X` pair from args.
func withoutPermissionMode(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--permission-mode" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// shellJoin quotes each word for a POSIX shell split.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, s := range words {
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// lockedWriter serialises writes from the fake API's handlers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
