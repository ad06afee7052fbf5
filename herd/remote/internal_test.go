package remote

import (
	"testing"
	"time"

	"github.com/mosh-dev/mosh/a2a"
)

func TestObserveMapsEveryState(t *testing.T) {
	type want struct {
		state, blockedOn           string
		terminal, failed, canceled bool
	}
	cases := map[a2a.TaskState]want{
		a2a.StateSubmitted:     {state: "working"},
		a2a.StateWorking:       {state: "working"},
		a2a.StateUnknown:       {state: "working"},
		"some-future-state":    {state: "working"},
		a2a.StateInputRequired: {state: "blocked", blockedOn: "question"},
		a2a.StateAuthRequired:  {state: "blocked", blockedOn: "permission"},
		a2a.StateCompleted:     {state: "done", terminal: true},
		a2a.StateFailed:        {state: "done", terminal: true, failed: true},
		a2a.StateRejected:      {state: "done", terminal: true, failed: true},
		a2a.StateCanceled:      {state: "done", terminal: true, canceled: true},
	}
	for st, w := range cases {
		o := observe(&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: st}})
		got := want{o.State, o.BlockedOn, o.Terminal, o.Failed, o.Canceled}
		if got != w || o.RemoteState != string(st) || o.TaskID != "t" || o.ContextID != "c" {
			t.Errorf("%s: got %+v, want %+v", st, o, w)
		}
	}
}

// TestObserveReadsTheRemoteHerdsBlockedKind: a herd behind `mosh herd serve` says in the task's
// metadata what its member is blocked on; input-required alone is a question.
func TestObserveReadsTheRemoteHerdsBlockedKind(t *testing.T) {
	task := func(md map[string]any) *a2a.Task {
		return &a2a.Task{ID: "t-2", Status: a2a.TaskStatus{State: a2a.StateInputRequired}, Metadata: md}
	}
	cases := []struct {
		name string
		md   map[string]any
		want string
	}{
		{"a herd blocked on a permission", map[string]any{a2a.MetadataKey: map[string]any{"state": "blocked", "blockedOn": "permission"}}, "permission"},
		{"a herd blocked on a menu", map[string]any{a2a.MetadataKey: map[string]any{"blockedOn": "menu"}}, "menu"},
		{"a herd that names no kind", map[string]any{a2a.MetadataKey: map[string]any{"state": "blocked"}}, "question"},
		{"a kind the vocabulary does not know", map[string]any{a2a.MetadataKey: map[string]any{"blockedOn": "Captcha"}}, "question"},
		{"another agent's metadata", map[string]any{"blockedOn": "permission"}, "question"},
		{"no metadata", nil, "question"},
	}
	for _, c := range cases {
		if o := observe(task(c.md)); o.State != "blocked" || o.BlockedOn != c.want {
			t.Errorf("%s: %s:%s, want blocked:%s", c.name, o.State, o.BlockedOn, c.want)
		}
	}
}

func TestObserveOutput(t *testing.T) {
	agent := func(s string) *a2a.Message {
		return &a2a.Message{Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(s)}}
	}
	withArtifact := &a2a.Task{Status: a2a.TaskStatus{State: a2a.StateCompleted, Message: agent("status")},
		Artifacts: []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("artifact")}}}}
	if o := observe(withArtifact); o.Output != "artifact" || o.Message != "status" {
		t.Errorf("artifact first: %+v", o)
	}
	statusOnly := &a2a.Task{Status: a2a.TaskStatus{State: a2a.StateCompleted, Message: agent("status")}}
	if o := observe(statusOnly); o.Output != "status" {
		t.Errorf("then status.message: %+v", o)
	}
	historyOnly := &a2a.Task{Status: a2a.TaskStatus{State: a2a.StateCompleted},
		History: []a2a.Message{*agent("older"), *agent("last"), {Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("question")}}}}
	if o := observe(historyOnly); o.Output != "last" {
		t.Errorf("then the last agent message: %+v", o)
	}
}

func TestRunOutput(t *testing.T) {
	cases := map[string]string{
		`{"output":"a"}`:                     "a",
		`{"output":"","response":"b"}`:       "b",
		`{"output":null,"result":5}`:         "5",
		`{"result":{"x": [1, 2]}}`:           `{"x":[1,2]}`,
		`{"response":"r","output":"o"}`:      "o",
		`"just a string"`:                    "just a string",
		"plain text answer\n":                "plain text answer\n",
		`{"other": 1}`:                       `{"other":1}`,
		`[1, 2]`:                             `[1,2]`,
		``:                                   ``,
		`  `:                                 ``,
		`{"output":"<b>html in json</b>"}`:   "<b>html in json</b>",
		`{"output":false,"response":"resp"}`: "false",
	}
	for body, want := range cases {
		if got := runOutput([]byte(body)); got != want {
			t.Errorf("runOutput(%q) = %q, want %q", body, got, want)
		}
	}
}

func TestHealthURL(t *testing.T) {
	cases := map[string]string{
		"http://h:8080/run":         "http://h:8080/health",
		"http://h:8080/run/":        "http://h:8080/health",
		"https://h/ws/agent/run":    "https://h/ws/agent/health",
		"http://h/run?x=1":          "http://h/health?x=1",
		"http://h/completions":      "",
		"http://h/rerun-not-a-path": "",
	}
	for in, want := range cases {
		if got := healthURL(in); got != want {
			t.Errorf("healthURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	cases := map[time.Duration]string{30 * time.Second: "30s", 10 * time.Minute: "10m", time.Hour: "1h",
		250 * time.Millisecond: "250ms", 90 * time.Second: "90s", 1500 * time.Millisecond: "1.5s"}
	for d, want := range cases {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
