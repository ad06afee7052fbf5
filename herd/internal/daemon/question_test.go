package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/exitcode"
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

// herd answer is checked against the question: a menu takes a number or a label and refuses
// anything else with the options; the open task records the answer and who gave it.
func TestAnswerMenuChecked(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "am", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("am", herd.StateIdle)
	_, err := h.c.Answer(h.ctx, "am", "1", "tester")
	wantCode(t, err, exitcode.Usage) // not blocked: nothing to answer
	r, err := h.c.Prompt(h.ctx, "am", "ask me", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	waitQuestion(t, h, "am", hasOptions(4))
	for _, bad := range []string{"please pick the red one", "7"} {
		_, err = h.c.Answer(h.ctx, "am", bad, "tester")
		wantCode(t, err, exitcode.Usage)
		if !strings.Contains(err.Error(), `1 "Red"`) || !strings.Contains(err.Error(), `2 "Blue"`) {
			t.Fatalf("the refusal does not list the options: %v", err)
		}
	}
	// prompt --answer is checked the same way.
	_, err = h.c.Prompt(h.ctx, "am", "a paragraph of text", herd.PromptOptions{Answer: true})
	wantCode(t, err, exitcode.Usage)
	if h.member("am").State != herd.StateBlocked {
		t.Fatal("a refused answer reached the member")
	}
	sub, err := h.c.Subscribe(h.ctx, "am")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	res, err := h.c.Answer(h.ctx, "am", "blue", "tester")
	if err != nil || res.Label != "Blue" || len(res.Keys) != 1 || res.Keys[0] != "2" || res.Task != r.Task {
		t.Fatalf("answer: %+v %v", res, err)
	}
	for e := range sub.Events() {
		if e.TaskEnded && e.Task == r.Task {
			break
		}
	}
	tk, err := h.c.Task(h.ctx, r.Task)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Artifact == nil || !strings.Contains(tk.Artifact.Text, "You picked Blue.") {
		t.Fatalf("the engine did not take option 2: %+v", tk.Artifact)
	}
	found := false
	for _, tr := range tk.Transitions {
		if tr.Note == herd.NoteAnswered+"blue" && tr.Authority == "tester" && tr.AtMs > 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("the task does not record who answered what: %+v", tk.Transitions)
	}
}

// A permission takes yes / no / always, mapped to the engine's keys (Claude's "no" is option 4).
func TestAnswerPermissionWords(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "ap", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("ap", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "ap", "perm deploy", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	_, err := h.c.Answer(h.ctx, "ap", "maybe later", "tester")
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "yes, no, always") {
		t.Fatalf("refusal: %v", err)
	}
	res, err := h.c.Answer(h.ctx, "ap", "no", "tester")
	if err != nil || len(res.Keys) != 1 || res.Keys[0] != "4" {
		t.Fatalf("no: %+v %v", res, err)
	}
	h.wait("ap", herd.StateIdle, herd.StateDone)
	if s := h.read("ap"); !strings.Contains(s, "Interrupted") {
		t.Fatalf("no did not deny:\n%s", s)
	}
	if _, err := h.c.Prompt(h.ctx, "ap", "perm again", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	r, err := h.c.Prompt(h.ctx, "ap", "yes", herd.PromptOptions{Answer: true, Wait: true, States: []string{"done"}, Timeout: testTimeout, By: "tester"})
	if err != nil || r.State != herd.StateDone {
		t.Fatalf("prompt --answer yes: %+v %v", r, err)
	}
}

// Two answers at once: one is pressed, the other refused (never typed into what follows); an
// answer to a member that is gone is refused too.
func TestAnswerTwoAtOnceAndGone(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "a2", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("a2", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "a2", "ask me", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	waitQuestion(t, h, "a2", hasOptions(4))
	errs := make(chan error, 2)
	for _, a := range []string{"1", "2"} {
		go func() {
			_, err := h.c.Answer(h.ctx, "a2", a, "tester")
			errs <- err
		}()
	}
	var ok, refused int
	for range 2 {
		if err := <-errs; err == nil {
			ok++
		} else if exitcode.Of(err) == exitcode.Usage {
			refused++
		} else {
			t.Fatalf("second answer: %v", err)
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("two answers at once: %d pressed, %d refused", ok, refused)
	}
	h.wait("a2", herd.StateDone)
	if _, err := h.c.Prompt(h.ctx, "a2", "exit 0", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wait("a2", herd.StateGone)
	_, err := h.c.Answer(h.ctx, "a2", "1", "tester")
	if err == nil {
		t.Fatal("an answer to a gone member was accepted")
	}
}
