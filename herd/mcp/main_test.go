package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/herdtest"
)

// The test binary doubles as the herd daemon (Connect runs `<exe> herd daemon --foreground`).
func TestMain(m *testing.M) {
	herdtest.ServeDaemonIfAsked()
	fake = herdtest.BuildFakeEngine("mcpfake")
	code := m.Run()
	os.RemoveAll(fake.Dir)
	os.Exit(code)
}

var fake herdtest.FakeEngine

// safety bounds every blocking step so a broken daemon fails the test instead of hanging it.
const safety = 60 * time.Second

type env struct {
	t    testing.TB
	home string
	env  []string // the environment of the daemon, the MCP server and its members, and git
	ctx  context.Context
	c    *herd.Client // the test's own client
	s    *Server
	cs   *sdk.ClientSession
	sch  *jsonschema.Schema
	defs map[string]*jsonschema.Schema
}

// newEnv starts a daemon in a fresh MOSH_HOME, the MCP server over it, and the SDK's client on an
// in-memory transport. "claude" on PATH is the fake engine. cfg, when not empty, is written as
// $MOSH_HOME/mcp/config.json first. extra (KEY=value) goes into the environment the daemon, the
// server and the members take. A test (not a benchmark) runs in parallel with the others: the
// environment goes through herd.Options.Env, never this process's.
func newEnv(t testing.TB, cfg string, extra ...string) *env {
	t.Helper()
	if pt, ok := t.(*testing.T); ok {
		pt.Parallel()
	}
	// Paths the envelope mentions must not hold the fake engine's trigger words (t.TempDir has
	// the test's name in it): MkdirTemp with a neutral pattern.
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	// "claude" on PATH is the fake engine; the daemon and its members take this environment.
	set := map[string]string{"HOME": home, "MOSH_HOME": home, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
	for _, kv := range append(fake.AsClaude(t, filepath.Join(home, "bin"), "120s"), extra...) {
		k, v, _ := strings.Cut(kv, "=")
		set[k] = v
	}
	var environ []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, mine := set[k]; mine || k == "MOSH_HERD_NAME" || k == "MOSH_HERD_DIR" || k == herd.EnvNonce || k == "CLAUDE_CONFIG_DIR" || k == "PI_CODING_AGENT_DIR" {
			continue
		}
		environ = append(environ, kv)
	}
	for k, v := range set {
		environ = append(environ, k+"="+v)
	}
	if cfg != "" {
		if err := os.MkdirAll(filepath.Join(home, "mcp"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ConfigPath(home), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*safety)
	e := &env{t: t, home: home, ctx: ctx, env: environ}
	e.c, err = herd.Connect(ctx, herd.ConnectOptions{Home: home, Env: environ})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	sc, err := herd.Connect(ctx, herd.ConnectOptions{Home: home, NoStart: true, Env: environ})
	if err != nil {
		t.Fatal(err)
	}
	e.s, err = New(Options{Client: sc, Home: home, Cwd: home})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	sctx, scancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- e.s.Run(sctx, st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil)
	e.cs, err = client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.loadSchema()
	t.Cleanup(func() {
		e.cs.Close()
		scancel()
		<-served
		e.s.Close()
		sc.Close()
		dctx, dcancel := context.WithTimeout(context.Background(), safety)
		_, _ = e.c.DaemonStop(dctx, true)
		dcancel()
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

// getenv reads the test's environment (e.env), as the server does through its client.
func (e *env) getenv(k string) string {
	v := ""
	for _, kv := range e.env {
		if key, val, _ := strings.Cut(kv, "="); key == k {
			v = val
		}
	}
	return v
}

func (e *env) loadSchema() {
	e.t.Helper()
	c := jsonschema.NewCompiler()
	f, err := os.Open("agentresult.schema.json")
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		e.t.Fatal(err)
	}
	const url = "https://mosh.dev/schema/herd-mcp/agentresult.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		e.t.Fatal(err)
	}
	e.defs = map[string]*jsonschema.Schema{}
	for _, d := range []string{"AgentResult", "FleetList", "InboxResult", "TranscriptPage", "DoctorResult"} {
		s, err := c.Compile(url + "#/$defs/" + d)
		if err != nil {
			e.t.Fatal(err)
		}
		e.defs[d] = s
	}
}

// call calls a tool (name without prefix) and returns its result; a tool error fails the test
// unless wantErr.
func (e *env) call(tool string, args any) *sdk.CallToolResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 2*safety)
	defer cancel()
	r, err := e.cs.CallTool(ctx, &sdk.CallToolParams{Name: DefaultPrefix + tool, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: protocol error %v", tool, err)
	}
	return r
}

// ok calls a tool that must succeed and validates its structured result against the schema's
// definition def, decoding it into out.
func (e *env) ok(tool string, args any, def string, out any) string {
	e.t.Helper()
	r := e.call(tool, args)
	text := resultText(r)
	if r.IsError {
		e.t.Fatalf("%s(%v) failed: %s", tool, args, text)
	}
	raw, err := json.Marshal(r.StructuredContent)
	if err != nil {
		e.t.Fatal(err)
	}
	e.validate(def, raw)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatal(err)
		}
	}
	return text
}

func (e *env) validate(def string, raw []byte) {
	e.t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.defs[def].Validate(inst); err != nil {
		e.t.Fatalf("result does not match %s: %v\n%s", def, err, raw)
	}
}

// fails calls a tool that must fail and returns its error text.
func (e *env) fails(tool string, args any) string {
	e.t.Helper()
	r := e.call(tool, args)
	if !r.IsError {
		raw, _ := json.Marshal(r.StructuredContent)
		e.t.Fatalf("%s(%v) succeeded, want an error: %s", tool, args, raw)
	}
	return resultText(r)
}

func resultText(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// repo makes a git repository with one commit (a.txt) in a neutral temp path.
func (e *env) repo() string {
	e.t.Helper()
	dir, err := os.MkdirTemp("", "repo")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { os.RemoveAll(dir) })
	dir, _ = filepath.EvalSymlinks(dir)
	e.git(dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.git(dir, "add", "a.txt")
	e.git(dir, "commit", "-q", "-m", "first")
	return dir
}

func (e *env) git(dir string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = e.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// startForeign starts a member directly through the herd (not through the adapter).
func (e *env) startForeign(name string) {
	e.t.Helper()
	if _, err := e.c.Start(e.ctx, herd.StartParams{Engine: "claude", Name: name, Cwd: e.home}); err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	if _, err := e.c.Wait(e.ctx, []string{name}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: safety}); err != nil {
		e.t.Fatalf("%s never reached idle: %v", name, err)
	}
}

func herdFilter(member string) herd.TasksFilter { return herd.TasksFilter{Member: member, Limit: -1} }
