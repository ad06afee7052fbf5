package mcpconf

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaPath is the AgentResult JSON Schema herd/mcp publishes.
var schemaPath = filepath.Join("..", "..", "herd", "mcp", "agentresult.schema.json")

// agentResultSchema compiles the schema's AgentResult definition.
func agentResultSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	if id == "" {
		t.Fatalf("%s has no $id", schemaPath)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id + "#/$defs/AgentResult")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// toolResults reads a dumped Anthropic request body and returns, for each tool_use of the
// named tools, the text of its tool_result: what the MCP host handed the model.
func toolResults(body []byte, names ...string) (map[string]string, error) {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	idTool := map[string]string{}
	out := map[string]string{}
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string message
		}
		for _, b := range blocks {
			switch {
			case b.Type == "tool_use" && want[b.Name]:
				idTool[b.ID] = b.Name
			case b.Type == "tool_result" && idTool[b.ToolUseID] != "":
				out[idTool[b.ToolUseID]] = contentText(b.Content)
			}
		}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return out, fmt.Errorf("no result of %s in the request", n)
		}
	}
	return out, nil
}

// contentText flattens tool_result content: a string, or text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// validAgentResult checks that text is one JSON document valid against the AgentResult schema.
func validAgentResult(s *jsonschema.Schema, text string) error {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("not one JSON document: %v: %.300q", err, text)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%v\n%.1000s", err, text)
	}
	return nil
}

// TestToolResultsAgainstSchema checks the checker the real-host test uses, without an engine:
// an Anthropic request carrying the two results as Claude Code 2.1.332 sent them (content a
// JSON string, or text blocks) passes; a result with a status outside the contract, without a
// taskId, or with text around the JSON fails; a missing result is an error.
func TestToolResultsAgainstSchema(t *testing.T) {
	schema := agentResultSchema(t)
	// Recorded from a run (paths shortened).
	good := `{"schemaVersion":1,"taskId":"tk29733b7ea9","status":"completed","recordStatus":"completed","owned":true,"role":"worker",` +
		`"agent":{"name":"claude-29733b","kind":"claude","pid":26228,"alive":true},"herdStatus":"done","herdTask":"t-1",` +
		`"summary":"Reply with the word delegated-ok","finalMessage":"Reply with the word delegated-ok","finalMessageSource":"hook",` +
		`"result":{"path":"/mh/mcp/runs/tk29733b7ea9/result.md","exists":false},"files":[],"artifactDir":"/mh/mcp/runs/tk29733b7ea9",` +
		`"inbox":{"path":"/mh/mcp/runs/tk29733b7ea9/inbox.ndjson","pending":0},"nextAction":"review",` +
		`"evidence":["herd task t-1: done after 1.016s","final message: 32 chars from the hook","result.md: not written"],` +
		`"timings":{"createdMs":1796293818747,"startedMs":1796293818784,"settledMs":1796293819802,"elapsedMs":1055},"cwd":"/proj"}`
	req := func(spawnContent, getContent any) []byte {
		b, _ := json.Marshal(map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": "fake-delegate {}"},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "a", "name": "mcp__herd__herd_spawn_agent", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "a", "content": spawnContent}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "b", "name": "mcp__herd__herd_get_agent_result", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "b", "content": getContent}}},
		}})
		return b
	}
	blocks := []any{map[string]any{"type": "text", "text": strings.Replace(good, `"completed"`, `"running"`, 1)}}
	res, err := toolResults(req(good, blocks), "mcp__herd__herd_spawn_agent", "mcp__herd__herd_get_agent_result")
	if err != nil {
		t.Fatal(err)
	}
	for tool, text := range res {
		if err := validAgentResult(schema, text); err != nil {
			t.Errorf("%s: a valid AgentResult is refused: %v", tool, err)
		}
	}
	for name, bad := range map[string]string{
		"status outside the contract": strings.Replace(good, `"completed"`, `"finished"`, 1),
		"no taskId":                   strings.Replace(good, `"taskId":"tk29733b7ea9",`, "", 1),
		"text around the JSON":        "Result: " + good,
	} {
		if err := validAgentResult(schema, bad); err == nil {
			t.Errorf("%s: accepted %s", name, bad)
		}
	}
	if _, err := toolResults(req(good, good), "mcp__herd__herd_spawn_agent", "mcp__herd__herd_inbox"); err == nil {
		t.Error("a tool that was never called: no error")
	}
}
