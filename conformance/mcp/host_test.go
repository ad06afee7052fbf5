package mcpconf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// TestRealClaudeDelegates: the real Claude Code, headless, is the MCP host. Its --mcp-config
// starts `mosh herd mcp` (this build) in a herd whose daemon runs herd/fakeengine as engine
// claude; the fake Anthropic API scripts the model (fakeapi.TriggerDelegate): ToolSearch for the
// deferred MCP tools, mcp__herd__herd_spawn_agent, mcp__herd__herd_get_agent_result on the
// taskId it returned, then a final answer carrying the AgentResult's finalMessage. The
// permission mode is dontAsk, so the two calls run only because --allowedTools names them.
//
// It checks the delegation end to end: Claude's final text is the answer built from
// get_agent_result's AgentResult (status completed); that finalMessage is the member's own
// final message (the herd ledger's task artifact, from its Stop hook); the member exists with
// engine claude in the requested cwd; the adapter's task record names the member and the ledger
// task.
func TestRealClaudeDelegates(t *testing.T) {
	if !claudeRequested() {
		t.Skip("real-host MCP conformance is off: set MOSH_ENGINES=claude (or all) after conformance/engines/install.sh claude")
	}
	eng, err := engines.Lookup("claude")
	if err != nil {
		t.Fatal(err)
	}
	claudeBin, err := eng.BinaryPath(engines.CacheDir())
	if err != nil {
		t.Fatal(err)
	}
	h := newHerd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	// The member's HOME gets the herd's Claude hooks: the fake engine fires Stop with its final
	// message, which the ledger keeps as the task's artifact.
	if out, _, err := h.InstallHooks(ctx, "claude"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := h.StartDaemon(ctx); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	if d := os.Getenv("MOSH_MCP_OUT"); d != "" {
		out = d
	}
	apiLog, err := os.Create(filepath.Join(out, "api.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer apiLog.Close()
	dumps := filepath.Join(out, "requests")
	if err := os.MkdirAll(dumps, 0o700); err != nil {
		t.Fatal(err)
	}
	api := fakeapi.New(fakeapi.Options{Log: apiLog, DumpDir: dumps})
	srv := httptest.NewServer(api)
	defer srv.Close()

	// The host has a HOME of its own (Claude Code's offline configuration); the MCP server's
	// environment is the herd's, so the daemon, the members and their hooks never see it.
	hostHome := filepath.Join(h.Root, "host")
	_, hostEnv, err := eng.Setup(engines.SetupEnv{Home: hostHome, Project: h.Project, APIURL: srv.URL, Model: "claude-opus-5-5", Cache: engines.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	serverEnv := map[string]string{}
	for _, kv := range h.Env() {
		k, v, _ := strings.Cut(kv, "=")
		serverEnv[k] = v
	}
	cfg := map[string]any{"mcpServers": map[string]any{serverName: map[string]any{
		"type": "stdio", "command": h.Mosh, "args": []string{"herd", "mcp"}, "env": serverEnv,
	}}}
	cfgPath := filepath.Join(h.Root, "mcp.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}

	debugLog := filepath.Join(out, "claude-debug.log")
	// diag is what a failure shows: Claude Code's MCP lines (the server's start, its tools, the
	// calls) and the daemon's log.
	diag := func() string {
		var mcpLines []string
		for _, l := range strings.Split(readFile(debugLog), "\n") {
			if strings.Contains(strings.ToLower(l), "mcp") {
				mcpLines = append(mcpLines, l)
			}
		}
		if len(mcpLines) > 60 {
			mcpLines = mcpLines[len(mcpLines)-60:]
		}
		return "\nClaude Code's MCP log lines:\n" + strings.Join(mcpLines, "\n") + "\ndaemon log:\n" + readFile(h.DaemonLog())
	}
	spawnArgs, _ := json.Marshal(map[string]any{"prompt": memberAnswer, "kind": "claude", "cwd": h.Project, "timeout_ms": 120000})
	spawnTool, resultTool := "mcp__"+serverName+"__herd_spawn_agent", "mcp__"+serverName+"__herd_get_agent_result"
	cmd := exec.CommandContext(ctx, claudeBin, "-p", fakeapi.TriggerDelegate+" "+string(spawnArgs),
		"--mcp-config", cfgPath, "--strict-mcp-config",
		"--permission-mode", "dontAsk", "--allowedTools", spawnTool+","+resultTool,
		"--output-format", "json", "--debug-file", debugLog)
	cmd.Dir = h.Project
	cmd.Env = append([]string{"HOME=" + hostHome, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "USER=" + orDefault(os.Getenv("USER"), "root"),
		"TMPDIR=" + filepath.Join(h.Home, "tmp")}, hostEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("claude -p took %s; API log:\n%s", time.Since(start).Round(time.Millisecond), readFile(apiLog.Name()))
	if runErr != nil {
		t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s%s", runErr, stdout.String(), stderr.String(), diag())
	}
	var res claudeOutput
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("claude -p --output-format json printed %q: %v", stdout.String(), err)
	}

	// The model's calls, as the fake API served them.
	var calls []fakeapi.Entry
	for _, e := range api.Requests() {
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
		t.Fatalf("the model's turns were %v, want spawn, get_result, final; Claude answered %q (denials %s)%s", kinds, res.Result, res.PermissionDenials, diag())
	}
	if !strings.HasPrefix(calls[0].Detail, spawnTool+" ") || !strings.HasPrefix(calls[1].Detail, resultTool+" ") {
		t.Fatalf("tool calls %q, %q: want %s then %s", calls[0].Detail, calls[1].Detail, spawnTool, resultTool)
	}
	var target struct{ Target string }
	if err := json.Unmarshal([]byte(strings.TrimPrefix(calls[1].Detail, resultTool+" ")), &target); err != nil || target.Target == "" {
		t.Fatalf("get_agent_result arguments %q: %v", calls[1].Detail, err)
	}
	taskID := target.Target
	if res.IsError || len(res.PermissionDenials) != 0 {
		t.Fatalf("claude -p: is_error %v, permission denials %s", res.IsError, res.PermissionDenials)
	}

	// The adapter's task record, and the member and ledger task it names.
	recPath := filepath.Join(h.MoshHome, "mcp", "runs", taskID, "task.json")
	var rec mcpRecord
	if b, err := os.ReadFile(recPath); err != nil {
		t.Fatalf("the task record of %s: %v%s", taskID, err, diag())
	} else if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v\n%s", recPath, err, b)
	}
	if rec.TaskID != taskID || rec.Kind != "claude" || rec.Name == "" || rec.HerdTask == "" {
		t.Fatalf("task record %+v: want task %s of kind claude naming its member and ledger task", rec, taskID)
	}
	members, err := h.Client.List(ctx)
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
	task, err := h.Client.Task(ctx, rec.HerdTask)
	if err != nil {
		t.Fatalf("ledger task %s: %v", rec.HerdTask, err)
	}
	if task.Member != rec.Name || task.Open || task.Artifact == nil || task.Artifact.Source != "hook" || task.Artifact.Text == "" {
		t.Fatalf("ledger task %+v (artifact %+v): want %s's closed task with the hook's final message", task, task.Artifact, rec.Name)
	}
	if !strings.Contains(task.Artifact.Text, "delegated-ok") {
		t.Fatalf("the member's final message %q does not come from the prompt %q", task.Artifact.Text, memberAnswer)
	}

	// Both AgentResults, as Claude Code handed them to the model (the final request's tool
	// results), are valid against the published schema.
	schema := agentResultSchema(t)
	body, err := os.ReadFile(filepath.Join(dumps, fmt.Sprintf("%04d-anthropic.json", calls[2].Seq)))
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

	// Claude's answer: the text the model built from get_agent_result's AgentResult, so the
	// finalMessage went member → ledger → mosh herd mcp → Claude Code → model → Claude's output.
	if want := fakeapi.DelegateAnswer(taskID, "completed", task.Artifact.Text); strings.TrimSpace(res.Result) != want {
		t.Fatalf("Claude answered %q\nwant %q", res.Result, want)
	}
	t.Logf("Claude answered: %s\ntask record: %+v\nledger task %s on %s: artifact %q by %s", res.Result, rec, task.ID, task.Member, task.Artifact.Text, task.Artifact.Source)
	if rec.Status != "completed" {
		t.Errorf("task record status %q, want completed", rec.Status)
	}
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
