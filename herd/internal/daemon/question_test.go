package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd"
)

// waitQuestion waits, on the member's events, until its row's question satisfies ok.
func waitQuestion(t *testing.T, h *herdT, name string, ok func(*herd.Question) bool) *herd.Question {
	t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	sub, err := h.c.Subscribe(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for {
		if q := h.member(name).Question; ok(q) {
			return q
		}
		select {
		case _, open := <-sub.Events():
			if !open {
				t.Fatalf("%s: events ended before the question %+v fit", name, h.member(name).Question)
			}
		case <-ctx.Done():
			t.Fatalf("%s: no fitting question; last %+v (row %+v)", name, h.member(name).Question, h.member(name))
		}
	}
}

func hasOptions(n int) func(*herd.Question) bool {
	return func(q *herd.Question) bool { return q != nil && len(q.Options) == n }
}

// A blocked fake Claude's question is read from the hook payload (the tool and its command) and
// the screen (the four options as drawn), on the row and in the events.
func TestQuestionFakeClaudePermissionWithHooks(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "qp", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("qp", herd.StateIdle)
	if q := h.member("qp").Question; q != nil {
		t.Fatalf("an idle member asks %+v", q)
	}
	sub, err := h.c.Subscribe(h.ctx, "qp")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r, err := h.c.Prompt(h.ctx, "qp", "perm deploy", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || r.State != herd.StateBlocked {
		t.Fatalf("perm: %+v %v", r, err)
	}
	q := waitQuestion(t, h, "qp", hasOptions(4))
	if q.Kind != "permission" || !strings.HasPrefix(q.Text, "Bash: ") || q.Source != "screen" ||
		q.Options[0] != (herd.QuestionOption{Key: "1", Label: "Yes"}) || q.Options[3].Label != "No" {
		t.Fatalf("question %+v", q)
	}
	// The event into blocked carried a question (the hook's, or the screen's when it came first).
	for e := range sub.Events() {
		if e.Type == herd.EventState && e.State == herd.StateBlocked {
			if e.Question == nil || e.Question.Kind != "permission" || e.Question.Text == "" {
				t.Fatalf("blocked event without its question: %+v", e)
			}
			break
		}
	}
	if _, err := h.c.SendKeys(h.ctx, "qp", "1"); err != nil {
		t.Fatal(err)
	}
	h.wait("qp", herd.StateDone)
	if q := h.member("qp").Question; q != nil {
		t.Fatalf("after the answer the member still asks %+v", q)
	}
}

// Without hooks the screen alone gives the question: AskUserQuestion's menu and its options.
func TestQuestionFakeClaudeAskScreenOnly(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", false)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "qa", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("qa", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "qa", "ask me", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	q := waitQuestion(t, h, "qa", hasOptions(4))
	if q.Text != "Which color should the button be?" || q.Source != "screen" || q.Options[0].Label != "Red" || q.Options[1].Label != "Blue" {
		t.Fatalf("question %+v", q)
	}
}

// Codex's permission dialog: its own option labels, read from the screen.
func TestQuestionFakeCodexPermission(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "codex", false)
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: "qx", Engine: "codex", Env: env, Argv: []string{"claude"}}); err != nil {
		t.Fatal(err)
	}
	h.wait("qx", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "qx", "perm x", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	q := waitQuestion(t, h, "qx", hasOptions(3))
	if q.Text != "Would you like to run the following command?" || !strings.HasPrefix(q.Options[0].Label, "Yes, proceed") {
		t.Fatalf("question %+v", q)
	}
}
