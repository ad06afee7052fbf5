package state

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func realScreenNamed(t *testing.T, name string) realScreen {
	t.Helper()
	for _, s := range loadRealScreens(t) {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no real screen %s", name)
	return realScreen{}
}

// The question and options as the real engines drew them (conformance/engines/screens).
func TestReadQuestionRealScreens(t *testing.T) {
	tab := Load("")
	cases := []struct {
		screen, engine string
		kind           Kind
		text           string
		keys, labels   []string
	}{
		{"claude-perm-asked", "claude", Permission, "Do you want to proceed?", []string{"1", "2", "3", "4"},
			[]string{"Yes", "", "", "No"}},
		{"claude-question-asked", "claude", Question, "Which color should the button be?", []string{"1", "2", "3", "4"},
			[]string{"Red", "Blue", "Type something.", "Chat about this"}},
		{"codex-perm-asked", "codex", Permission, "Would you like to run the following command?", []string{"1", "2", "3"},
			[]string{"Yes, proceed (y)", "", ""}},
	}
	for _, c := range cases {
		s := realScreenNamed(t, c.screen)
		q := tab.ReadQuestion(c.engine, c.kind, &s.snap, nil)
		if q == nil {
			t.Fatalf("%s: no question read", c.screen)
		}
		if q.Text != c.text || q.Source != "screen" || q.Kind != c.kind {
			t.Errorf("%s: text %q source %q kind %q, want %q screen %q", c.screen, q.Text, q.Source, q.Kind, c.text, c.kind)
		}
		var keys []string
		for i, o := range q.Options {
			keys = append(keys, o.Key)
			if i < len(c.labels) && c.labels[i] != "" && o.Label != c.labels[i] {
				t.Errorf("%s: option %d label %q, want %q", c.screen, i+1, o.Label, c.labels[i])
			}
		}
		if !reflect.DeepEqual(keys, c.keys) {
			t.Errorf("%s: keys %v, want %v (%+v)", c.screen, keys, c.keys, q.Options)
		}
	}
	// A screen at rest asks nothing.
	s := realScreenNamed(t, "claude-plain")
	if q := tab.ReadQuestion("claude", Permission, &s.snap, nil); q != nil && len(q.Options) > 0 {
		t.Errorf("claude-plain: read options %+v", q.Options)
	}
}

// The hook's payload says what the screen does not yet show (it fires before the menu is drawn).
func TestReadQuestionFromHookPayload(t *testing.T) {
	tab := Load("")
	perm := json.RawMessage(`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch perm.txt","description":"Create perm.txt"}}`)
	q := tab.ReadQuestion("claude", Permission, nil, perm)
	if q == nil || q.Text != "Bash: touch perm.txt" || q.Source != "hook" || len(q.Options) != 0 {
		t.Fatalf("permission payload: %+v", q)
	}
	ask := json.RawMessage(`{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which color?","options":[{"label":"Red"},{"label":"Blue"}]}]}}`)
	q = tab.ReadQuestion("claude", Question, nil, ask)
	if q == nil || q.Text != "Which color?" || len(q.Options) != 2 || q.Options[1] != (AskedOption{Key: "2", Label: "Blue"}) {
		t.Fatalf("AskUserQuestion payload: %+v", q)
	}
	// Screen options win over the payload's, the payload's text over the screen's.
	s := realScreenNamed(t, "claude-perm-asked")
	q = tab.ReadQuestion("claude", Permission, &s.snap, perm)
	if q.Text != "Bash: touch perm.txt" || len(q.Options) != 4 || q.Source != "screen" {
		t.Fatalf("both: %+v", q)
	}
	if q := tab.ReadQuestion("claude", Permission, nil, json.RawMessage(`not json`)); q != nil {
		t.Fatalf("broken payload read as %+v", q)
	}
	if q := tab.ReadQuestion("claude", Permission, nil, json.RawMessage(`{"hook_event_name":"Notification"}`)); q != nil {
		t.Fatalf("empty payload read as %+v", q)
	}
}

func TestResolveAnswer(t *testing.T) {
	tab := Load("")
	claude := realScreenNamed(t, "claude-perm-asked")
	cq := tab.ReadQuestion("claude", Permission, &claude.snap, nil)
	codex := realScreenNamed(t, "codex-perm-asked")
	xq := tab.ReadQuestion("codex", Permission, &codex.snap, nil)
	menu := realScreenNamed(t, "claude-question-asked")
	mq := tab.ReadQuestion("claude", Question, &menu.snap, nil)
	mq.Kind = Menu
	hookOnly := &Asked{Kind: Permission, Text: "Bash: ls"}
	ok := []struct {
		engine string
		q      *Asked
		answer string
		keys   []string
		text   string
	}{
		{"claude", cq, "yes", []string{"1"}, ""},
		{"claude", cq, "Y", []string{"1"}, ""},
		{"claude", cq, "always", []string{"2"}, ""},
		{"claude", cq, "no", []string{"4"}, ""},
		{"claude", cq, "3", []string{"3"}, ""},
		{"codex", xq, "yes", []string{"1"}, ""},
		{"codex", xq, "always", []string{"2"}, ""},
		{"codex", xq, "no", []string{"3"}, ""},
		{"claude", hookOnly, "no", []string{"Escape"}, ""},
		{"codex", hookOnly, "always", []string{"p"}, ""},
		{"claude", mq, "2", []string{"2"}, ""},
		{"claude", mq, "blue", []string{"2"}, ""},
		{"claude", mq, "Chat", []string{"4"}, ""},
		{"claude", &Asked{Kind: Question, Text: "Name?"}, "Ada", nil, "Ada"},
		{"claude", nil, "anything", nil, "anything"},
	}
	for _, c := range ok {
		a, err := tab.ResolveAnswer(c.engine, c.q, c.answer)
		if err != nil || !reflect.DeepEqual(a.Keys, c.keys) || a.Text != c.text {
			t.Errorf("%s %q: %+v %v, want keys %v text %q", c.engine, c.answer, a, err, c.keys, c.text)
		}
	}
	bad := []struct {
		engine string
		q      *Asked
		answer string
		lists  string
	}{
		{"claude", mq, "please pick the red one", `1 "Red", 2 "Blue"`},
		{"claude", mq, "9", `1 "Red"`},
		{"claude", cq, "maybe", "yes, no, always"},
		{"gemini", hookOnly, "yes", "answer "},
		{"claude", &Asked{Kind: Question}, "  ", "empty"},
	}
	for _, c := range bad {
		_, err := tab.ResolveAnswer(c.engine, c.q, c.answer)
		var ae *AnswerError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.lists) {
			t.Errorf("%s %q: %v, want an AnswerError naming %q", c.engine, c.answer, err, c.lists)
		}
	}
}
