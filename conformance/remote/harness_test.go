// Package remoteconf drives remote members end to end through the REAL mosh binary: herds in
// private MOSH_HOMEs, a second `mosh herd serve` on loopback as a remote herd, and the fakes of
// herd/remote/remotetest (an a2a-go a2asrv agent, an ADK-shaped agent, a POST /run endpoint).
//
// Local members are herd/fakeengine (Claude-Code-like screens; "slow" makes a long turn), so
// nothing here needs a model or the network beyond 127.0.0.1.
package remoteconf

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/internal/fakeherd"
)

// cliSafety bounds every CLI call and every wait a test makes, so a broken daemon fails the
// test instead of hanging it. It is a safety net, not an assertion about speed.
const cliSafety = 90 * time.Second

var (
	binDir   string // mosh, fakeengine and the "claude" wrapper
	moshBin  string
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mrbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if repoRoot, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := fakeherd.Build(repoRoot, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir, moshBin = dir, filepath.Join(dir, "mosh")
	return m.Run()
}

// herdHome is one herd: a private MOSH_HOME (short, the socket lives inside) and the
// environment every mosh command of this herd runs with.
type herdHome struct {
	t    *testing.T
	home string
	env  []string
}

func newHerd(t *testing.T) *herdHome {
	t.Helper()
	home, err := os.MkdirTemp("", "mr")
	if err != nil {
		t.Fatal(err)
	}
	env, err := fakeherd.Env(home, binDir)
	if err != nil {
		t.Fatal(err)
	}
	h := &herdHome{t: t, home: home, env: env}
	t.Cleanup(func() {
		h.run(nil, "herd", "daemon", "stop", "--yes")
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(home, "herd", "daemon.log")); err == nil {
				t.Logf("daemon.log of %s:\n%s", home, b)
			}
		}
		os.RemoveAll(home)
	})
	return h
}

// on is the same herd reporting to t (a subtest must fail its own test, not its parent's).
func (h *herdHome) on(t *testing.T) *herdHome {
	c := *h
	c.t = t
	return &c
}

// result is one finished mosh command.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("mosh %s → exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// cmd builds a mosh command of this herd; extra is added to its environment (tokens).
func (h *herdHome) cmd(ctx context.Context, extra []string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, moshBin, args...)
	c.Env = append(append([]string(nil), h.env...), extra...)
	c.Dir = repoRoot // the examples are addressed from the repository root
	return c
}

func (h *herdHome) run(extra []string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), cliSafety)
	defer cancel()
	var out, errb bytes.Buffer
	c := h.cmd(ctx, extra, args...)
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := result{args: args, stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ctx.Err() != nil {
			h.t.Fatalf("mosh %s did not finish within %s\n%s", strings.Join(args, " "), cliSafety, r)
		}
	default:
		h.t.Fatalf("mosh %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// must runs a command that has to succeed and returns its stdout.
func (h *herdHome) must(extra []string, args ...string) string {
	h.t.Helper()
	r := h.run(extra, args...)
	if r.code != 0 {
		h.t.Fatalf("%s", r)
	}
	return r.stdout
}

// mustJSON runs a command that has to succeed and decodes its stdout into v.
func (h *herdHome) mustJSON(v any, extra []string, args ...string) {
	h.t.Helper()
	out := h.must(extra, args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		h.t.Fatalf("mosh %s: stdout is not the documented JSON (%v):\n%s", strings.Join(args, " "), err, out)
	}
}

// startLocal starts a fake-engine member and waits until it is idle.
func (h *herdHome) startLocal(name string) {
	h.t.Helper()
	h.must(nil, "herd", "start", "claude", "--name", name)
	h.must(nil, "herd", "wait", name, "--state", "idle", "--timeout", "60")
}

// served is one `mosh herd serve` process of a herd.
type served struct {
	base   string // http://127.0.0.1:PORT
	token  string // the herd token its clients send
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	exited chan struct{}
}

// memberURL is the A2A base of one member of the served herd: what `remote add` takes.
func (s *served) memberURL(name string) string { return s.base + "/a2a/members/" + name + "/" }

// serve runs `mosh herd serve --port 0` for this herd and reads its URL; the token is made first
// so the URL is the first line printed.
func (h *herdHome) serve() *served {
	h.t.Helper()
	tok := strings.TrimSpace(h.must(nil, "herd", "token", "--show"))
	c := h.cmd(context.Background(), nil, "herd", "serve", "--port", "0")
	stdout, err := c.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	s := &served{token: tok, cmd: c, stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	c.Stderr = s.stderr
	if err := c.Start(); err != nil {
		h.t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for n := 0; sc.Scan(); n++ {
			if n == 0 {
				first <- sc.Text()
			}
		}
		close(first)
		c.Wait()
		close(s.exited)
	}()
	select {
	case line := <-first:
		base, ok := strings.CutPrefix(line, "mosh herd serve: listening on ")
		if !ok {
			c.Process.Kill()
			h.t.Fatalf("mosh herd serve printed %q first, want its URL; stderr:\n%s", line, s.stderr)
		}
		s.base = strings.TrimSpace(base)
	case <-time.After(cliSafety):
		c.Process.Kill()
		h.t.Fatalf("mosh herd serve did not start; stderr:\n%s", s.stderr)
	}
	h.t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(cliSafety):
			c.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// ---- the documented JSON shapes the tests read (docs/protocol.md) ----

type remoteInfo struct {
	Kind        string `json:"kind"`
	URL         string `json:"url"`
	Host        string `json:"host"`
	Endpoint    string `json:"endpoint"`
	TimeoutMs   int64  `json:"timeoutMs"`
	ObservedMs  int64  `json:"observedMs"`
	RemoteState string `json:"remoteState"`
	RemoteTask  string `json:"remoteTask"`
	Token       bool   `json:"token"`
	TokenVar    string `json:"tokenVar"`
	Error       string `json:"error"`
}

type member struct {
	Name      string      `json:"name"`
	Kind      string      `json:"kind"`
	State     string      `json:"state"`
	BlockedOn string      `json:"blockedOn"`
	Authority string      `json:"authority"`
	Cwd       string      `json:"cwd"`
	Remote    *remoteInfo `json:"remote"`
}

type addResult struct {
	Member member `json:"member"`
	Probe  struct {
		OK    bool   `json:"ok"`
		Agent string `json:"agent"`
		Error string `json:"error"`
	} `json:"probe"`
}

type promptResult struct {
	Name    string `json:"name"`
	Sent    bool   `json:"sent"`
	Task    string `json:"task"`
	Outcome string `json:"outcome"`
	State   string `json:"state"`
}

type task struct {
	ID              string `json:"id"`
	Member          string `json:"member"`
	Text            string `json:"text"`
	State           string `json:"state"`
	Open            bool   `json:"open"`
	Note            string `json:"note"`
	RemoteTaskID    string `json:"remoteTaskId"`
	RemoteContextID string `json:"remoteContextId"`
	Artifact        *struct {
		Text   string `json:"text"`
		Source string `json:"source"`
	} `json:"artifact"`
}

type killResult struct {
	Killed   []string `json:"killed"`
	Canceled []string `json:"canceled"`
	Missing  []string `json:"missing"`
}

func (h *herdHome) ps() []member {
	h.t.Helper()
	var ms []member
	h.mustJSON(&ms, nil, "ps", "--json")
	return ms
}

func (h *herdHome) row(name string) *member {
	h.t.Helper()
	for _, m := range h.ps() {
		if m.Name == name {
			return &m
		}
	}
	return nil
}

func (h *herdHome) task(id string) task {
	h.t.Helper()
	var tk task
	h.mustJSON(&tk, nil, "herd", "task", id, "--json")
	return tk
}

func (h *herdHome) remotes() []member {
	h.t.Helper()
	var ms []member
	h.mustJSON(&ms, nil, "herd", "remote", "list", "--json")
	return ms
}

func names(ms []member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tokenEnv is the environment that hands a remote member its bearer token.
func tokenEnv(varName, token string) []string {
	if token == "" {
		return nil
	}
	return []string{varName + "=" + token}
}
