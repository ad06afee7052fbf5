package herd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TasksJSON and TaskJSON hand back the daemon's own encoding: it decodes to what Tasks and Task
// return, and it carries <, > and & as themselves, as the CLI prints JSON (the bytes go to stdout
// as they are).
func TestTasksJSONIsTheDaemonsEncoding(t *testing.T) {
	h := newHerd(t)
	h.run("tj", askScript)
	h.wait("tj", StateIdle)
	const text = `fix <b> & "quotes" \ then ü`
	p, err := h.c.Prompt(h.ctx, "tj", text, PromptOptions{})
	if err != nil || p.Task == "" {
		t.Fatalf("prompt: %+v %v", p, err)
	}
	h.wait("tj", StateBlocked)

	raw, err := h.c.TasksJSON(h.ctx, TasksFilter{Member: "tj", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`fix <b> & \"quotes\" \\ then ü`)) {
		t.Fatalf("tasks JSON escapes what the CLI prints as is: %s", raw)
	}
	var fromRaw []Task
	if err := json.Unmarshal(raw, &fromRaw); err != nil {
		t.Fatalf("tasks JSON %q: %v", raw, err)
	}
	typed, err := h.c.Tasks(h.ctx, TasksFilter{Member: "tj", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromRaw) != 1 || len(typed) != 1 || fromRaw[0].ID != typed[0].ID || fromRaw[0].Text != text || typed[0].Text != text {
		t.Fatalf("raw %+v, typed %+v", fromRaw, typed)
	}

	one, err := h.c.TaskJSON(h.ctx, p.Task)
	if err != nil {
		t.Fatal(err)
	}
	var task Task
	if err := json.Unmarshal(one, &task); err != nil || task.ID != p.Task || task.Text != text || len(task.Transitions) == 0 {
		t.Fatalf("task JSON %s: %+v %v", one, task, err)
	}

	// No tasks: an empty array, never null; an unknown member keeps its exit code.
	if raw, err := h.c.TasksJSON(h.ctx, TasksFilter{State: "failed"}); err != nil || string(raw) != "[]" {
		t.Fatalf("no tasks: %s %v", raw, err)
	}
	if _, err := h.c.TasksJSON(h.ctx, TasksFilter{Member: "nobody"}); err == nil || !strings.Contains(err.Error(), "no member named nobody") {
		t.Fatalf("unknown member: %v", err)
	}
}

// splitResult takes only the daemon's success layout; everything else is left to the decoder.
func TestSplitResult(t *testing.T) {
	var r rpcResponse
	if !splitResult([]byte(`{"jsonrpc":"2.0","id":12,"result":{"a":[1]}}`+"\n"), &r) || string(r.ID) != "12" || string(r.Result) != `{"a":[1]}` {
		t.Fatalf("success line: %+v", r)
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"event","params":{}}`,
		`{"jsonrpc":"2.0","id":"s","result":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":true}`,
		`{"id":4,"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":}`,
		`{"jsonrpc":"2.0","id":`,
		``,
	} {
		var r rpcResponse
		if splitResult([]byte(line), &r) {
			t.Errorf("%q taken as a success: %+v", line, r)
		}
	}
}
