package mcpconf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/mosh-dev/mosh/conformance/internal/realengines"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/conformance/engines"
	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/herd"
)

// claudeRequested reports whether MOSH_ENGINES names claude (or is "all"), the gate
// conformance/engines uses for the real engines.
func claudeRequested() bool {
	spec := strings.TrimSpace(os.Getenv("MOSH_ENGINES"))
	if spec == "all" {
		return true
	}
	for _, n := range strings.Split(spec, ",") {
		if strings.TrimSpace(n) == "claude" {
			return true
		}
	}
	return false
}

// serverName is the MCP server's name in --mcp-config: Claude Code calls its tools
// mcp__herd__<tool>.
const serverName = "herd"

// memberAnswer is what the spawned member is asked; herd/fakeengine answers a prompt with its
// first line, so its final message is built from it (no word the fake engine scripts on: perm,
// ask, fail, slow, nested, exit).
const memberAnswer = "Reply with the word delegated-ok"

// claudeOutput is the part of `claude -p --output-format json` the test reads.
type claudeOutput struct {
	Result            string            `json:"result"`
	IsError           bool              `json:"is_error"`
	NumTurns          int               `json:"num_turns"`
	PermissionDenials []json.RawMessage `json:"permission_denials"`
}

// mcpRecord is the part of the adapter's owned-task record ($MOSH_HOME/mcp/runs/<taskId>/task.json)
// the test reads.
type mcpRecord struct {
	TaskID   string `json:"taskId"`
	Status   string `json:"status"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Cwd      string `json:"cwd"`
	HerdTask string `json:"herdTask"`
}

// world is one real-host run: a herd whose bin/claude is the fake engine (hooks installed in
// its HOME, daemon started), the fake Anthropic API, the real Claude Code binary and its
// offline configuration, and an --mcp-config file that starts `mosh herd mcp` in the herd.
type world struct {
	t         *testing.T
	ctx       context.Context
	h         *engines.Herd
	claudeBin string
	api       *fakeapi.Server
	apiLog    string
	dumps     string // every request body (fakeapi DumpDir)
	debugLog  string // Claude Code's --debug-file
	cfgPath   string // the --mcp-config file
	claudeEnv []string
	claudeCfg string // the HOME whose .claude.json the Claude Code host reads
	serverEnv map[string]string
	mirror    *engines.Mirror // the host member's screen, when the host is a member
}

// The two tools the host calls, as Claude Code names them.
var (
	spawnTool  = "mcp__" + serverName + "__herd_spawn_agent"
	resultTool = "mcp__" + serverName + "__herd_get_agent_result"
)

// newWorld builds a world; hostHome is the HOME the Claude Code host runs with (its offline
// configuration is written there).
func newWorld(t *testing.T, ctx context.Context, hostHome func(h *engines.Herd) string) *world {
	t.Helper()
	if !claudeRequested() {
		t.Skip("real-host MCP conformance is off: set MOSH_ENGINES=claude (or all) after conformance/engines/install.sh claude")
	}
	eng, err := engines.Lookup("claude")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, ctx: ctx}
	if w.claudeBin, err = eng.BinaryPath(engines.CacheDir()); err != nil {
		t.Fatal(err)
	}
	w.h = newHerd(t)
	if err := w.h.StartDaemon(ctx); err != nil {
		t.Fatal(err)
	}

	// Under the herd's root, which is removed after the daemon and its members are stopped
	// (a t.TempDir would be removed first, while the Claude Code member still writes its log).
	out := filepath.Join(w.h.Root, "out")
	if d := os.Getenv("MOSH_MCP_OUT"); d != "" {
		out = filepath.Join(d, t.Name())
	}
	w.apiLog, w.dumps, w.debugLog = filepath.Join(out, "api.log"), filepath.Join(out, "requests"), filepath.Join(out, "claude-debug.log")
	if err := os.MkdirAll(w.dumps, 0o700); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(w.apiLog)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	w.api = fakeapi.New(fakeapi.Options{Log: logf, DumpDir: w.dumps})
	srv := httptest.NewServer(w.api)
	t.Cleanup(srv.Close)

	w.claudeCfg = hostHome(w.h)
	if _, w.claudeEnv, err = eng.Setup(engines.SetupEnv{Home: w.claudeCfg, Project: w.h.Project, APIURL: srv.URL, Model: "claude-opus-5-5", Cache: engines.CacheDir()}); err != nil {
		t.Fatal(err)
	}
	// The herd's HOME gets the herd's Claude hooks, after the engine's setup wrote its settings
	// there: the fake engine and a Claude Code member fire Stop with their final message, which
	// the ledger keeps as the task's artifact.
	if out, _, err := w.h.InstallHooks(ctx, "claude"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The MCP server runs with the herd's environment laid over the host's (Claude Code merges
	// the config's env into its own): HOME, MOSH_HOME and PATH (bin/claude is the fake engine).
	serverEnv := map[string]string{}
	for _, kv := range w.h.Env() {
		k, v, _ := strings.Cut(kv, "=")
		serverEnv[k] = v
	}
	w.serverEnv = serverEnv
	w.cfgPath = filepath.Join(w.h.Root, "mcp.json")
	w.writeConfig(w.h.Mosh, []string{"herd", "mcp"})
	return w
}

// writeConfig writes the --mcp-config file: one stdio server, serverName.
func (w *world) writeConfig(command string, args []string) {
	cfg := map[string]any{"mcpServers": map[string]any{serverName: map[string]any{
		"type": "stdio", "command": command, "args": args, "env": w.serverEnv,
	}}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(w.cfgPath, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// probeUntilToolsListed prompts the host with plain turns (fakeapi's plain answer) until a
// request it sends the model names the MCP server's spawn tool — the host's tool list includes
// the server — and returns how many probes it took. Claude Code's interactive REPL takes a prompt
// before its MCP servers' tools are in the list it sends: observed with 2.1.332, a prompt typed at
// the first idle screen, or even 0.1 s after the server had answered tools/list, went to the
// model without them (MCP_CONNECTION_NONBLOCKING=0 did not change it). Each probe waits for its
// turn's done; the condition is read from the request bodies, not from the clock.
func (w *world) probeUntilToolsListed(host string, max int) int {
	t := w.t
	for i := 1; i <= max; i++ {
		before := len(w.api.Requests())
		w.promptTask(host, "probe "+fakeapi.TriggerPlain)
		for _, e := range w.api.Requests()[before:] {
			body, _ := os.ReadFile(filepath.Join(w.dumps, fmt.Sprintf("%04d-anthropic.json", e.Seq)))
			if e.Kind == fakeapi.KindPlain && bytes.Contains(body, []byte(spawnTool)) {
				return i
			}
		}
	}
	t.Fatalf("after %d probes the host's requests still do not name %s%s", max, spawnTool, w.diag())
	return 0
}

// promptTask prompts a member and waits, on the daemon's events, until the prompt's own ledger
// task has ended; it returns that task. (A prompt --wait for "done" typed into a member that
// already reads done could match an event of the screen before the engine took the prompt up:
// seen once with the real Claude Code, the prompt still in its input box.)
func (w *world) promptTask(member, text string) *herd.Task {
	t := w.t
	t.Helper()
	sub, err := w.h.Client.Subscribe(w.ctx, member)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if w.mirror != nil {
		// Like conformance/engines: type only once the screen has rested a second after the
		// last turn (an Enter typed right after Claude Code's previous turn was lost once).
		w.mirror.WaitStable(w.ctx, time.Second, time.Minute)
	}
	pr, err := w.h.Client.Prompt(w.ctx, member, text, herd.PromptOptions{})
	if err != nil || pr.Task == "" {
		t.Fatalf("prompting %s: %+v %v%s", member, pr, err, w.diag())
	}
	ended := false
	// Once the task has ended, its record is re-read on every event and on a tick: the hook's
	// report that replaces a screen artifact need not change the member's state (no event).
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if !ended {
				continue
			}
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("the event stream ended (%v) before task %s ended%s", sub.Err(), pr.Task, w.diag())
			}
			if !ended && (e.Task != pr.Task || !e.TaskEnded) {
				continue
			}
			ended = true
		case <-w.ctx.Done():
			t.Fatalf("task %s of %s did not end with the Stop hook's final message: %v%s", pr.Task, member, w.ctx.Err(), w.diag())
		}
		task, err := w.h.Client.Task(w.ctx, pr.Task)
		if err != nil {
			t.Fatal(err)
		}
		if !task.Open && task.State == "done" && task.Artifact != nil && task.Artifact.Source == "screen" {
			// The screen's done closed the task before the Stop hook's report arrived (a loaded
			// machine delays hook processes; an open daemon fault): the daemon puts the hook's
			// final message in place when it comes. Wait for that.
			continue
		}
		if task.Open || task.State != "done" || task.Artifact == nil || task.Artifact.Source != "hook" {
			t.Fatalf("%s's task %s ended %s (open %v, artifact %+v), want done with the Stop hook's final message%s",
				member, task.ID, task.State, task.Open, task.Artifact, w.diag())
		}
		return task
	}
}

// prompt is what the host is told: the trigger and the spawn arguments.
func (w *world) prompt() string {
	args, _ := json.Marshal(map[string]any{"prompt": memberAnswer, "kind": "claude", "cwd": w.h.Project, "timeout_ms": 120000})
	return fakeapi.TriggerDelegate + " " + string(args)
}

// hostArgs are the host's MCP and permission flags: only this server, dontAsk, and the two
// tools allowed by name (so the calls run only because --allowedTools names them).
func (w *world) hostArgs() []string {
	return []string{"--mcp-config", w.cfgPath, "--strict-mcp-config",
		"--permission-mode", "dontAsk", "--allowedTools", spawnTool + "," + resultTool, "--debug-file", w.debugLog}
}

// diag is what a failure shows: the fake API's log, Claude Code's MCP lines (the server's
// start, its tools, the calls) and the daemon's log.
func (w *world) diag() string {
	var mcpLines []string
	for _, l := range strings.Split(readFile(w.debugLog), "\n") {
		if strings.Contains(strings.ToLower(l), "mcp") {
			mcpLines = append(mcpLines, l)
		}
	}
	if len(mcpLines) > 60 {
		mcpLines = mcpLines[len(mcpLines)-60:]
	}
	return "\nfake API log:\n" + readFile(w.apiLog) + "\nClaude Code's MCP log lines:\n" + strings.Join(mcpLines, "\n") +
		"\ndaemon log:\n" + readFile(w.h.DaemonLog())
}

// checkDelegation checks a finished delegation end to end, given the host's final answer:
// the model's turns (spawn, get_result on the spawn's taskId, final) as the fake API served them;
// the adapter's task record, the member and the ledger task it names, whose artifact (the
// member's own final message, from its Stop hook) comes from the prompt; both AgentResults, as
// Claude Code handed them to the model, valid against the published schema; and the answer is
// the text the model built from get_agent_result's AgentResult (status completed), so the
// finalMessage went member → ledger → mosh herd mcp → Claude Code → model → the host's answer.
func (w *world) checkDelegation(answer string) {
	t, h := w.t, w.h
	t.Helper()
	var calls []fakeapi.Entry
	for _, e := range w.api.Requests() {
		switch e.Kind {
		case fakeapi.KindDelegateSpawn, fakeapi.KindDelegateResult, fakeapi.KindDelegateFinal, fakeapi.KindDelegateFailed:
			calls = append(calls, e)
		}
	}
	var kinds []string
	for _, e := range calls {
		kinds = append(kinds, string(e.Kind))
	}
	if strings.Join(kinds, ",") != "delegate-spawn,delegate-result,delegate-final" {
		t.Fatalf("the model's turns were %v, want spawn, get_result, final; the host answered %q%s", kinds, answer, w.diag())
	}
	if !strings.HasPrefix(calls[0].Detail, spawnTool+" ") || !strings.HasPrefix(calls[1].Detail, resultTool+" ") {
		t.Fatalf("tool calls %q, %q: want %s then %s", calls[0].Detail, calls[1].Detail, spawnTool, resultTool)
	}
	var target struct{ Target string }
	if err := json.Unmarshal([]byte(strings.TrimPrefix(calls[1].Detail, resultTool+" ")), &target); err != nil || target.Target == "" {
		t.Fatalf("get_agent_result arguments %q: %v", calls[1].Detail, err)
	}
	taskID := target.Target

	// The adapter's task record, and the member and ledger task it names.
	recPath := filepath.Join(h.MoshHome, "mcp", "runs", taskID, "task.json")
	var rec mcpRecord
	if b, err := os.ReadFile(recPath); err != nil {
		t.Fatalf("the task record of %s: %v%s", taskID, err, w.diag())
	} else if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v\n%s", recPath, err, b)
	}
	if rec.TaskID != taskID || rec.Kind != "claude" || rec.Name == "" || rec.HerdTask == "" {
		t.Fatalf("task record %+v: want task %s of kind claude naming its member and ledger task", rec, taskID)
	}
	members, err := h.Client.List(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var member *herd.Member
	for i := range members {
		if members[i].Name == rec.Name {
			member = &members[i]
		}
	}
	if member == nil || member.Engine != "claude" || member.Cwd != h.Project {
		t.Fatalf("member %q (from the task record) in the herd: %+v; want engine claude in %s; members: %+v", rec.Name, member, h.Project, members)
	}
	task, err := h.Client.Task(w.ctx, rec.HerdTask)
	if err != nil {
		t.Fatalf("ledger task %s: %v", rec.HerdTask, err)
	}
	if task.Member != rec.Name || task.Open || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text == "" {
		t.Fatalf("ledger task %+v (artifact %+v): want %s's closed task with the hook's final message", task, task.Artifact, rec.Name)
	}
	if !strings.Contains(task.Artifact.Text, "delegated-ok") {
		t.Fatalf("the member's final message %q does not come from the prompt %q", task.Artifact.Text, memberAnswer)
	}

	schema := agentResultSchema(t)
	body, err := os.ReadFile(filepath.Join(w.dumps, fmt.Sprintf("%04d-anthropic.json", calls[2].Seq)))
	if err != nil {
		t.Fatal(err)
	}
	results, err := toolResults(body, spawnTool, resultTool)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{spawnTool, resultTool} {
		if err := validAgentResult(schema, results[tool]); err != nil {
			t.Errorf("%s's result as the model got it: %v", tool, err)
		}
	}

	if want := fakeapi.DelegateAnswer(taskID, "completed", task.Artifact.Text); strings.TrimSpace(answer) != want {
		t.Fatalf("the host answered %q\nwant %q", answer, want)
	}
	t.Logf("the host answered: %s\ntask record: %+v\nledger task %s on %s: artifact %q by %s", answer, rec, task.ID, task.Member, task.Artifact.Text, task.Artifact.Source)
	if rec.Status != "completed" {
		t.Errorf("task record status %q, want completed", rec.Status)
	}
}

// TestRealClaudeDelegates: the real Claude Code, headless (`claude -p`), is the MCP host. Its
// --mcp-config starts `mosh herd mcp` (this build) in a herd whose daemon runs herd/fakeengine
// as engine claude; the fake Anthropic API scripts the model (fakeapi.TriggerDelegate):
// ToolSearch for the deferred MCP tools, the spawn tool, get_agent_result on the taskId it
// returned, then a final answer carrying the AgentResult's finalMessage. checkDelegation checks
// it end to end; Claude's own output (--output-format json) is the answer, with no permission
// denied. The host has a HOME of its own: the herd, its members and their hooks never see it.
func TestRealClaudeDelegates(t *testing.T) {
	realengines.Lock(t) // before its six-minute context starts
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	w := newWorld(t, ctx, func(h *engines.Herd) string { return filepath.Join(h.Root, "host") })
	cmd := exec.CommandContext(ctx, w.claudeBin, append([]string{"-p", w.prompt(), "--output-format", "json"}, w.hostArgs()...)...)
	cmd.Dir = w.h.Project
	cmd.Env = append([]string{"HOME=" + w.claudeCfg, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "USER=" + orDefault(os.Getenv("USER"), "root"),
		"TMPDIR=" + filepath.Join(w.h.Home, "tmp")}, w.claudeEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("claude -p took %s", time.Since(start).Round(time.Millisecond))
	if runErr != nil {
		t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s%s", runErr, stdout.String(), stderr.String(), w.diag())
	}
	var res claudeOutput
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("claude -p --output-format json printed %q: %v", stdout.String(), err)
	}
	if res.IsError || len(res.PermissionDenials) != 0 {
		t.Fatalf("claude -p: is_error %v, permission denials %s, answer %q%s", res.IsError, res.PermissionDenials, res.Result, w.diag())
	}
	w.checkDelegation(res.Result)
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return string(b)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestRealClaudeMemberDelegates: the MCP host is itself a herd member — the real Claude Code,
// interactive in the member's pty, with the same --mcp-config and permission flags, its hooks
// installed by `mosh herd hooks install claude`. The test prompts it through the daemon like any
// member; the delegation it runs (checkDelegation) spawns a second member through `mosh herd mcp`
// in the same herd. The host's answer is its own ledger task's artifact: the final message
// Claude Code's Stop hook reported.
func TestRealClaudeMemberDelegates(t *testing.T) {
	realengines.Lock(t) // before its six-minute context starts
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	w := newWorld(t, ctx, func(h *engines.Herd) string { return h.Home })
	h := w.h
	const host = "host"
	if _, err := h.Client.Run(ctx, herd.RunParams{Name: host, Engine: "claude", Cwd: h.Project,
		Argv: append([]string{w.claudeBin}, w.hostArgs()...), Env: h.Env(w.claudeEnv...)}); err != nil {
		t.Fatal(err)
	}
	screen := func() string {
		r, err := h.Client.Read(ctx, host, 40)
		if err != nil {
			return fmt.Sprintf("(read: %v)", err)
		}
		return fmt.Sprintf("state %s/%s by %s\n%s", r.State, r.BlockedOn, r.Authority, r.Screen)
	}
	wr, err := h.Client.Wait(ctx, []string{host}, herd.WaitOptions{States: []string{"idle"}, Timeout: 2 * time.Minute})
	if err != nil || wr.Outcome != herd.OutcomeMatched {
		t.Fatalf("the Claude Code host did not come up idle: %+v %v\nscreen: %s%s", wr, err, screen(), w.diag())
	}
	if w.mirror, err = engines.AttachMirror(ctx, h.Client, host, nil); err != nil {
		t.Fatal(err)
	}
	defer w.mirror.Close()
	t.Logf("the host's requests named the MCP tools after %d probe(s)", w.probeUntilToolsListed(host, 20))
	start := time.Now()
	task := w.promptTask(host, w.prompt())
	t.Logf("the host's turn took %s", time.Since(start).Round(time.Millisecond))
	if task.Artifact == nil || task.Artifact.Source != "hook" {
		t.Fatalf("the host's task %+v: want the final message from its Stop hook (artifact %+v)\nscreen: %s%s", task, task.Artifact, screen(), w.diag())
	}
	w.checkDelegation(task.Artifact.Text)
}
