package remote

import (
	"testing"
	"time"

	goa2a "github.com/a2aproject/a2a-go/a2a"

	"github.com/mosh-dev/mosh/a2a"
)

func TestObserveMapsEveryState(t *testing.T) {
	type want struct {
		state, blockedOn           string
		terminal, failed, canceled bool
	}
	cases := map[goa2a.TaskState]want{
		goa2a.TaskStateSubmitted:     {state: "working"},
		goa2a.TaskStateWorking:       {state: "working"},
		goa2a.TaskStateUnknown:       {state: "working"},
		"some-future-state":          {state: "working"},
		goa2a.TaskStateInputRequired: {state: "blocked", blockedOn: "question"},
		goa2a.TaskStateAuthRequired:  {state: "blocked", blockedOn: "permission"},
		goa2a.TaskStateCompleted:     {state: "done", terminal: true},
		goa2a.TaskStateFailed:        {state: "done", terminal: true, failed: true},
		goa2a.TaskStateRejected:      {state: "done", terminal: true, failed: true},
		goa2a.TaskStateCanceled:      {state: "done", terminal: true, canceled: true},
	}
	for st, w := range cases {
		o := observe(&goa2a.Task{ID: "t", ContextID: "c", Status: goa2a.TaskStatus{State: st}})
		got := want{o.State, o.BlockedOn, o.Terminal, o.Failed, o.Canceled}
		if got != w || o.RemoteState != string(st) || o.TaskID != "t" || o.ContextID != "c" {
			t.Errorf("%s: got %+v, want %+v", st, o, w)
		}
	}
}

// TestObserveReadsTheRemoteHerdsBlockedKind: a herd behind `mosh herd serve` says in the task's
// metadata what its member is blocked on; input-required alone is a question.
func TestObserveReadsTheRemoteHerdsBlockedKind(t *testing.T) {
	task := func(md map[string]any) *goa2a.Task {
		return &goa2a.Task{ID: "t-2", Status: goa2a.TaskStatus{State: goa2a.TaskStateInputRequired}, Metadata: md}
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
	agent := func(s string) *goa2a.Message {
		return goa2a.NewMessage(goa2a.MessageRoleAgent, goa2a.TextPart{Text: s})
	}
	withArtifact := &goa2a.Task{Status: goa2a.TaskStatus{State: goa2a.TaskStateCompleted, Message: agent("status")},
		Artifacts: []*goa2a.Artifact{{ID: "a", Parts: goa2a.ContentParts{goa2a.TextPart{Text: "artifact"}}}}}
	if o := observe(withArtifact); o.Output != "artifact" || o.Message != "status" {
		t.Errorf("artifact first: %+v", o)
	}
	statusOnly := &goa2a.Task{Status: goa2a.TaskStatus{State: goa2a.TaskStateCompleted, Message: agent("status")}}
	if o := observe(statusOnly); o.Output != "status" {
		t.Errorf("then status.message: %+v", o)
	}
	historyOnly := &goa2a.Task{Status: goa2a.TaskStatus{State: goa2a.TaskStateCompleted},
		History: []*goa2a.Message{agent("older"), agent("last"), goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.TextPart{Text: "question"})}}
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
