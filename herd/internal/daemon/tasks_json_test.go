package daemon

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// TasksJSON and TaskJSON hand back the daemon's own encoding: it decodes to what Tasks and Task
// return, and it carries <, > and & as themselves, as the CLI prints JSON (the bytes go to stdout
// as they are).
func TestTasksJSONIsTheDaemonsEncoding(t *testing.T) {
	h := newParallelHerd(t)
	h.run("tj", askScript)
	h.wait("tj", herd.StateIdle)
	const text = `fix <b> & "quotes" \ then ü`
	p, err := h.c.Prompt(h.ctx, "tj", text, herd.PromptOptions{})
	if err != nil || p.Task == "" {
		t.Fatalf("prompt: %+v %v", p, err)
	}
	h.wait("tj", herd.StateBlocked)

	raw, err := h.c.TasksJSON(h.ctx, herd.TasksFilter{Member: "tj", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`fix <b> & \"quotes\" \\ then ü`)) {
		t.Fatalf("tasks JSON escapes what the CLI prints as is: %s", raw)
	}
	var fromRaw []herd.Task
	if err := json.Unmarshal(raw, &fromRaw); err != nil {
		t.Fatalf("tasks JSON %q: %v", raw, err)
	}
	typed, err := h.c.Tasks(h.ctx, herd.TasksFilter{Member: "tj", Limit: 500})
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
	var task herd.Task
	if err := json.Unmarshal(one, &task); err != nil || task.ID != p.Task || task.Text != text || len(task.Transitions) == 0 {
		t.Fatalf("task JSON %s: %+v %v", one, task, err)
	}

	// No tasks: an empty array, never null; an unknown member keeps its exit code.
	if raw, err := h.c.TasksJSON(h.ctx, herd.TasksFilter{State: "failed"}); err != nil || string(raw) != "[]" {
		t.Fatalf("no tasks: %s %v", raw, err)
	}
	if _, err := h.c.TasksJSON(h.ctx, herd.TasksFilter{Member: "nobody"}); err == nil || !strings.Contains(err.Error(), "no member named nobody") {
		t.Fatalf("unknown member: %v", err)
	}
}
