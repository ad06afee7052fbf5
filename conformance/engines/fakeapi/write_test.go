package fakeapi

import (
	"encoding/json"
	"testing"
)

// TestWriteTurn: fake-write NAME is a shell call writing NAME through each engine's shell tool
// (Codex's asks to escalate), a bad or missing name falls back to WriteDefaultFile, and without
// a shell tool the model says so instead of calling one.
func TestWriteTurn(t *testing.T) {
	s := New(Options{})
	schema := json.RawMessage(`{"properties":{"command":{},"description":{}}}`)
	cases := []struct {
		tool, prompt, file string
	}{
		{"Bash", "write it fake-write out.txt please", "out.txt"},
		{"exec_command", "fake-write notes_1.md.", "notes_1.md"},
		{"bash", "fake-write ../etc/passwd", WriteDefaultFile},
		{"bash", "fake-write", WriteDefaultFile},
		{"bash", "fake-perm then fake-write a.txt", "a.txt"}, // the last trigger wins
	}
	for _, c := range cases {
		tr := s.plan(conversation{prompt: c.prompt, tools: map[string]json.RawMessage{c.tool: schema}, toolOrder: []string{c.tool}})
		if tr.kind != KindWrite || tr.call == nil || tr.call.name != c.tool {
			t.Fatalf("%q with tool %s: turn %+v, want a %s call of kind %s", c.prompt, c.tool, tr, c.tool, KindWrite)
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(tr.call.args), &args); err != nil {
			t.Fatal(err)
		}
		key := "command"
		if c.tool == "exec_command" {
			key = "cmd"
			if args["sandbox_permissions"] != "require_escalated" {
				t.Errorf("codex call %v does not ask to escalate: on-request approval would not ask", args)
			}
		}
		if args[key] != WriteCommand(c.file) {
			t.Errorf("%q: %s = %v, want %q", c.prompt, key, args[key], WriteCommand(c.file))
		}
	}
	tr := s.plan(conversation{prompt: "fake-write x.txt", tools: map[string]json.RawMessage{"Read": nil}, toolOrder: []string{"Read"}})
	if tr.kind != KindNoTool || tr.call != nil {
		t.Errorf("without a shell tool: turn %+v, want %s text", tr, KindNoTool)
	}
}

// With approvals off, Codex tells the model not to ask for escalation (its commands would be
// rejected, never run): the fake obeys, for the write and the permission turns alike.
func TestCodexWithApprovalsOffDoesNotEscalate(t *testing.T) {
	s := New(Options{})
	tools := map[string]json.RawMessage{"exec_command": json.RawMessage(`{"properties":{"cmd":{}}}`)}
	body := []byte(`{"input":[{"role":"developer","content":[{"type":"input_text","text":"` + approvalNever + `. Do not provide the sandbox_permissions for any reason."}]}]}`)
	for _, prompt := range []string{"fake-write out.txt", "fake-perm"} {
		for _, off := range []bool{false, true} {
			c := conversation{prompt: prompt, tools: tools, toolOrder: []string{"exec_command"}}
			if off {
				c.body = body
			}
			tr := s.plan(c)
			if tr.call == nil {
				t.Fatalf("%q: no call", prompt)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(tr.call.args), &args); err != nil {
				t.Fatal(err)
			}
			if _, asks := args["sandbox_permissions"]; asks == off {
				t.Errorf("%q with approvals off %v: args %v", prompt, off, args)
			}
		}
	}
}
