package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// `mosh herd mcp --tool-prefix herdr_` over real stdio: an MCP host (the SDK's client on a
// command transport) sees seed 002's nine tool names, spawns a fake Claude, gets its result back
// and finds it owned in the fleet.
func TestHerdMCPOverStdio(t *testing.T) {
	e := newHerdEnv(t)
	bin := filepath.Join(e.home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexec '"+e.fake+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(bin, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"hooks":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	e.env = append(e.env, "FAKEENGINE_TURN=100ms", "FAKEENGINE_NOTIFY_AFTER=0", "FAKEENGINE_IDLE_NOTIFY=0", "FAKEENGINE_SETTINGS="+settings)

	_, errs := e.expect(1, "herd", "mcp", "--tool-prefix", "no spaces")
	if !strings.Contains(errs, "--tool-prefix") {
		t.Fatalf("bad prefix: %s", errs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(e.mosh, "herd", "mcp", "--tool-prefix", "herdr_")
	cmd.Env, cmd.Dir = e.env, e.home
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	want := []string{"herdr_close_agent", "herdr_doctor", "herdr_get_agent_result", "herdr_inbox", "herdr_interrupt_agent",
		"herdr_list_agents", "herdr_message_agent", "herdr_read_agent", "herdr_spawn_agent"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}
	// Every result is validated against the published schema (its $defs for the non-AgentResult tools).
	sc := jsonschema.NewCompiler()
	const schemaURL = "https://mosh.dev/schema/herd-mcp/agentresult.schema.json"
	f, err := os.Open("../../herd/mcp/agentresult.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil || sc.AddResource(schemaURL, doc) != nil {
		t.Fatal(err)
	}
	defs := map[string]string{"herdr_list_agents": "FleetList"}
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		def := defs[name]
		if def == "" {
			def = "AgentResult"
		}
		sch, err := sc.Compile(schemaURL + "#/$defs/" + def)
		if err != nil {
			t.Fatal(err)
		}
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw, _ := json.Marshal(r.StructuredContent)
		if r.IsError {
			t.Fatalf("%s: %+v", name, r.Content)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("%s result does not match %s: %v\n%s", name, def, err, raw)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v %s", name, err, raw)
		}
	}
	var res struct {
		TaskID, Status, FinalMessage string
		Agent                        struct{ Name string }
	}
	call("herdr_spawn_agent", map[string]any{"prompt": "Say hello", "kind": "claude"}, &res)
	if res.Status != "completed" || !strings.Contains(res.FinalMessage, "Say hello") {
		t.Fatalf("spawn %+v", res)
	}
	var got struct{ TaskID, Status string }
	call("herdr_get_agent_result", map[string]any{"target": res.TaskID}, &got)
	if got.TaskID != res.TaskID || got.Status != "completed" {
		t.Fatalf("get %+v", got)
	}
	var fl struct {
		Agents []struct {
			Name   string
			Owned  bool
			TaskID string
		}
	}
	call("herdr_list_agents", map[string]any{}, &fl)
	if len(fl.Agents) != 1 || !fl.Agents[0].Owned || fl.Agents[0].TaskID != res.TaskID || fl.Agents[0].Name != res.Agent.Name {
		t.Fatalf("fleet %+v", fl)
	}
	if fi, err := os.Stat(filepath.Join(e.home, "mcp", "runs", res.TaskID, "task.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record %v %v", fi, err)
	}
}
