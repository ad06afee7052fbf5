package mcpconf

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// inspectorDir is the installed @modelcontextprotocol/inspector-cli (js/package.json pins it).
// Its 1.0.3 is the Inspector's CLI mode as a package of its own; the Inspector 2.x package needs
// Node >= 22.19 and this project's machines have Node 20.
var inspectorDir = filepath.Join("js", "node_modules", "@modelcontextprotocol", "inspector-cli")

// inspector returns node and the CLI's entry point, or skips (fails under
// MOSH_MCP_INSPECTOR_REQUIRED=1) when either is missing.
func inspector(t *testing.T) (node, cli string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(inspectorDir, "build", "cli.js"))
	}
	if err != nil {
		msg := "node or the MCP Inspector CLI missing (%v): install node and run `npm ci --prefix conformance/mcp/js`"
		if os.Getenv("MOSH_MCP_INSPECTOR_REQUIRED") == "1" {
			t.Fatalf(msg, err)
		}
		t.Skipf(msg, err)
	}
	cli, err = filepath.Abs(filepath.Join(inspectorDir, "build", "cli.js"))
	if err != nil {
		t.Fatal(err)
	}
	return node, cli
}

// inspectorTool is one tool as `--method tools/list` prints it.
type inspectorTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	} `json:"inputSchema"`
}

// TestInspectorListsTools runs the MCP Inspector's CLI against `mosh herd mcp` as its stdio
// server (`--cli MOSH herd mcp --method tools/list`) and checks the nine tool names, with the
// default prefix and with --tool-prefix herdr_ (the seed's exact names), and the spawn tool's
// input schema.
func TestInspectorListsTools(t *testing.T) {
	node, cli := inspector(t)
	h := newHerd(t)
	for _, prefix := range []string{"", "herdr_"} {
		args := []string{cli, "--cli", h.Mosh, "herd", "mcp", "--method", "tools/list"}
		want := "herd_"
		if prefix != "" {
			// Options the Inspector does not know go to the server; they must follow --method.
			args = append(args, "--tool-prefix", prefix)
			want = prefix
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, node, args...)
		// inspector-cli 1.0.3 checks for its package.json at "../package.json" from the working
		// directory but imports it relative to its module: run it from its build directory.
		cmd.Dir = filepath.Dir(cli)
		cmd.Env = h.Env()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("inspector --cli %s herd mcp --method tools/list %s: %v\nstdout: %s\nstderr: %s", h.Mosh, prefix, err, out.String(), errb.String())
		}
		var list struct {
			Tools []inspectorTool `json:"tools"`
		}
		if err := json.Unmarshal(out.Bytes(), &list); err != nil {
			t.Fatalf("tools/list output is not JSON: %v\n%s\nstderr: %s", err, out.String(), errb.String())
		}
		var got, expect []string
		byName := map[string]inspectorTool{}
		for _, tl := range list.Tools {
			got = append(got, tl.Name)
			byName[tl.Name] = tl
		}
		for _, n := range toolNames {
			expect = append(expect, want+n)
		}
		sort.Strings(got)
		sort.Strings(expect)
		if strings.Join(got, ",") != strings.Join(expect, ",") {
			t.Fatalf("prefix %q: the Inspector lists %v, want %v", want, got, expect)
		}
		for _, tl := range list.Tools {
			if tl.Description == "" || tl.InputSchema.Type != "object" {
				t.Errorf("%s: description %q, input schema type %q: every tool needs both", tl.Name, tl.Description, tl.InputSchema.Type)
			}
		}
		checkSpawnSchema(t, byName[want+"spawn_agent"])
	}
}

// checkSpawnSchema: the spawn tool's input schema as an MCP host sees it — the seed's
// parameters, prompt required and a string, unknown arguments refused.
func checkSpawnSchema(t *testing.T, tl inspectorTool) {
	t.Helper()
	s := tl.InputSchema
	for _, p := range []string{"prompt", "kind", "model", "thinking", "name", "cwd", "role", "wait", "timeout_ms",
		"agent_args", "client_task_id", "isolated", "machine"} {
		if _, ok := s.Properties[p]; !ok {
			t.Errorf("%s: input schema has no parameter %q (seed 002): %v", tl.Name, p, keys(s.Properties))
		}
	}
	if len(s.Required) != 1 || s.Required[0] != "prompt" {
		t.Errorf("%s: required = %v, want [prompt]", tl.Name, s.Required)
	}
	var prompt struct{ Type any }
	_ = json.Unmarshal(s.Properties["prompt"], &prompt)
	if prompt.Type != "string" {
		t.Errorf("%s: prompt has type %v, want string", tl.Name, prompt.Type)
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("%s: additionalProperties is not false: unknown arguments must be errors", tl.Name)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
