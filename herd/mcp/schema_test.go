package mcp

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The tools' input schemas are pinned in testdata/tools.golden.json (regenerate with
// go test ./herd/mcp -run TestInputSchemas -update), and they check what the tools check: a host
// that validates arguments against them refuses a bad member name before it calls (Claude Code
// sent "Bad Name" unchecked), and reads every optional parameter's default.
func TestInputSchemas(t *testing.T) {
	e := newEnv(t, "")
	tools, err := e.cs.ListTools(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]json.RawMessage{}
	for _, tl := range tools.Tools {
		raw, err := json.Marshal(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		schemas[strings.TrimPrefix(tl.Name, DefaultPrefix)] = raw
	}
	got, err := json.MarshalIndent(schemas, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./herd/mcp -run TestInputSchemas -update to create it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("the input schemas differ from %s (rerun with -update if the change is intended)\n%s", golden, got)
	}

	compile := func(tool string) *jsonschema.Schema {
		t.Helper()
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas[tool]))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mem:///"+tool+".json", doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("mem:///" + tool + ".json")
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return s
	}
	check := func(tool, args string, valid bool) {
		t.Helper()
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		if err := compile(tool).Validate(inst); (err == nil) != valid {
			t.Errorf("%s %s: valid %v, want %v (%v)", tool, args, err == nil, valid, err)
		}
	}
	check("spawn_agent", `{"prompt":"x","name":"Bad Name"}`, false)
	check("spawn_agent", `{"prompt":"x","name":"api-2"}`, true)

	defaults := map[string]map[string]any{
		"spawn_agent":      {"wait": true, "timeout_ms": float64(DefaultConfig().DefaultTimeoutMs), "kind": DefaultConfig().DefaultKind, "role": "worker", "isolated": false},
		"get_agent_result": {"timeout_ms": float64(defaultWaitMs), "lines": float64(defaultLines)},
		"message_agent":    {"kind": "NOTE", "round": float64(1), "wait": false, "timeout_ms": float64(defaultWaitMs)},
		"list_agents":      {"owned_only": false},
		"inbox":            {"wait": false, "timeout_ms": float64(defaultInboxWaitMs), "consume": true, "limit": float64(defaultInboxLimit)},
		"read_agent":       {"from": float64(0), "limit": float64(defaultPage)},
		"close_agent":      {"force": false, "remove_worktree": false},
	}
	for tool, params := range defaults {
		var s struct {
			Properties map[string]struct {
				Default any `json:"default"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(schemas[tool], &s); err != nil {
			t.Fatal(err)
		}
		for p, want := range params {
			if got := s.Properties[p].Default; got != want {
				t.Errorf("%s.%s: default %v, want %v", tool, p, got, want)
			}
		}
	}
}
