package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/platform"

	"github.com/creack/pty"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd/state"
)

// A program no screen rule knows (cat echoes what it reads, no prompt) reads idle while it is
// blocked reading its terminal, and a prompt --wait to it returns instead of hanging: the
// terminal's foreground process is the signal, and explain names it.
func TestPlainProgramIdleWhileReadingItsTerminal(t *testing.T) {
	h := newParallelHerd(t)
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: "cat", Argv: []string{"cat"}}); err != nil {
		t.Fatal(err)
	}
	// cat prints nothing at start: no screen ever settled, the process says idle.
	h.wait("cat", herd.StateIdle)
	if row := h.member("cat"); row.Authority != herd.AuthorityScreen {
		t.Fatalf("row %+v", row)
	}
	ex, err := h.c.Explain(h.ctx, "cat")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Screen == nil || ex.Screen.Rule != state.RuleTTYReading || !strings.Contains(ex.Decided, "foreground process cat") ||
		!strings.Contains(ex.Decided, "reading the terminal") || ex.ReasonCode != "tty.reading" {
		t.Fatalf("explain should name the foreground process reading the terminal: %+v", ex)
	}
	p, err := h.c.Prompt(h.ctx, "cat", "hello cat", herd.PromptOptions{Wait: true, Timeout: testTimeout})
	if err != nil || p.Outcome != herd.OutcomeMatched || p.State != herd.StateIdle {
		t.Fatalf("prompt --wait to cat: %+v %v", p, err)
	}
	if s := h.read("cat"); strings.Count(s, "hello cat") != 2 {
		t.Fatalf("cat should have echoed the prompt:\n%s", s)
	}
}

// A script that works silently reads working (its foreground process sleeps elsewhere), then
// idle once it reads the terminal — without printing anything in between (re-probes) — and
// working again after the input it waited for.
func TestPlainProgramWorkingWhileItRunsSilently(t *testing.T) {
	h := newParallelHerd(t)
	gate := filepath.Join(t.TempDir(), "gate")
	h.run("job", "while [ ! -e '"+gate+"' ]; do sleep 0.1; done; read x; echo got $x; exec sleep 600")
	h.wait("job", herd.StateWorking)
	ex, err := h.c.Explain(h.ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Screen == nil || ex.Screen.Rule != state.RuleTTYRunning || !strings.Contains(ex.Decided, "foreground process") {
		t.Fatalf("explain should name the running foreground process: %+v", ex)
	}
	// The script now reads its terminal, printing nothing: the re-probes find it.
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.wait("job", herd.StateIdle)
	sub, err := h.c.Subscribe(h.ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := h.c.Prompt(h.ctx, "job", "input", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	// The prompt's claim says working at once (runtime); the screen's own working comes once the
	// script took the line and runs again.
	for {
		select {
		case e := <-sub.Events():
			if e.State == herd.StateWorking && e.Authority == herd.AuthorityScreen {
				return
			}
		case <-h.ctx.Done():
			t.Fatal("the script never read working by its foreground process after its input")
		}
	}
}

// A nested engine (a tool of the member's engine running `claude -p`) inherits MOSH_HERD_NAME
// and fires its own hooks: its reports are ignored, so the parent's turn stays working and its
// task ends with the parent's own answer; explain lists the ignored reports.
func TestNestedEngineReportsAreIgnored(t *testing.T) {
	h := newParallelHerd(t)
	env := fakeEnv(t, "claude", true)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "parent", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("parent", herd.StateIdle)
	r, err := h.c.Prompt(h.ctx, "parent", "nested call a child", herd.PromptOptions{Wait: true, States: []string{"done", "idle"}, Timeout: testTimeout})
	if err != nil || r.Outcome != herd.OutcomeMatched {
		t.Fatalf("prompt: %+v %v", r, err)
	}
	// The turn ended when the parent's own Stop came, after the child's answer was on screen.
	if s := h.read("parent"); !strings.Contains(s, "the nested engine's answer") {
		t.Fatalf("the parent's turn ended before its tool (the nested engine) finished:\n%s", s)
	}
	ex, err := h.c.Explain(h.ctx, "parent")
	if err != nil {
		t.Fatal(err)
	}
	nested := 0
	for _, ig := range ex.IgnoredReports {
		if strings.Contains(ig.Why, "nested engine") {
			nested++
		}
	}
	if nested < 2 {
		t.Fatalf("explain should list the nested engine's UserPromptSubmit and Stop as ignored: %+v", ex.IgnoredReports)
	}
	store, err := openLedger(herd.HerdDir(h.home))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := h.c.Prompt(h.ctx, "parent", "flush the ledger queue", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	task, err := store.Task(r.Task)
	if err != nil {
		t.Fatal(err)
	}
	if task.Artifact == nil || task.Artifact.Text != "nested call a child" {
		t.Fatalf("the parent's task must end with its own answer, not the nested engine's: %+v", task.Artifact)
	}
}

// A hook's blocked arrives before the engine draws its menu, and the menu ignores keys for a
// moment after it appears: send-keys and prompt --answer sent the moment the member reads
// blocked wait for the question on screen and are applied.
func TestAnswerWaitsForTheMenu(t *testing.T) {
	h := newParallelHerd(t)
	env := append(fakeEnv(t, "claude", true), "FAKEENGINE_MENU_DELAY=600ms", "FAKEENGINE_MENU_DEAF=100ms")
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "late", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("late", herd.StateIdle)
	for _, answer := range []string{"send-keys", "prompt --answer"} {
		r, err := h.c.Prompt(h.ctx, "late", "perm deploy", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
		if err != nil || r.State != herd.StateBlocked {
			t.Fatalf("perm: %+v %v", r, err)
		}
		if answer == "send-keys" {
			_, err = h.c.SendKeys(h.ctx, "late", "1")
		} else {
			_, err = h.c.Prompt(h.ctx, "late", "1", herd.PromptOptions{Answer: true})
		}
		if err != nil {
			t.Fatalf("%s: %v", answer, err)
		}
		// Typed before the menu was drawn, the key would land in the input box and the menu
		// would stay open: the member would never read done.
		h.wait("late", herd.StateDone)
	}
}

// A member a hook says is blocked whose screen never shows a question: the answer is not typed,
// and the error says why (exit code 2). The question never comes, so the answer's bound
// (menuWaitMs, 5 s by default) is shortened: it ends the wait whatever its length.
func TestAnswerRefusedWhenTheQuestionNeverAppears(t *testing.T) {
	h := newParallelHerdWith(t, map[string]string{"engines.json": `{"engines": [{"name": "claude", "menuWaitMs": 300}]}`})
	env := fakeEnv(t, "claude", false)
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "nq", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("nq", herd.StateIdle)
	if _, err := h.c.Report(h.ctx, "nq", "blocked", "permission", 0, nil); err != nil {
		t.Fatal(err)
	}
	h.wait("nq", herd.StateBlocked)
	_, err := h.c.SendKeys(h.ctx, "nq", "1")
	wantCode(t, err, exitcode.Timeout)
	if !strings.Contains(err.Error(), "has not shown the question") || !strings.Contains(err.Error(), "nothing was typed") {
		t.Fatalf("the error should say what happened: %v", err)
	}
	if s := h.read("nq"); strings.Contains(s, "❯\u00a01") || strings.Contains(s, "❯ 1") {
		t.Fatalf("the key was typed anyway:\n%s", s)
	}
	// --now types at once: the key lands in the input box.
	sub, err := h.c.Subscribe(h.ctx, "nq")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := h.c.SendKeysNow(h.ctx, "nq", "z"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(h.read("nq"), "❯\u00a0z") {
		select {
		case <-sub.Events():
		case <-h.ctx.Done():
			t.Fatalf("send-keys --now did not type:\n%s", h.read("nq"))
		}
	}
}

// Which engine reports: a helper the engine started directly is the engine's own; an engine a
// tool's shell started below it is nested.
func TestReporterChain(t *testing.T) {
	// reporter 50 ← sh 40 ← claude -p 30 ← bash 20 ← claude 10 (pinned)
	nested := []platform.Proc{{Pid: 50, Comm: "mosh"}, {Pid: 40, Comm: "sh"}, {Pid: 30, Comm: "claude"}, {Pid: 20, Comm: "bash"}, {Pid: 10, Comm: "claude"}}
	if !inChain(nested, 10, 30) || !shellBetween(nested, 30, 10) {
		t.Fatal("a claude under a tool's bash should read as nested")
	}
	// reporter 50 ← sh 40 ← worker 30 ← claude 10
	helper := []platform.Proc{{Pid: 50, Comm: "mosh"}, {Pid: 40, Comm: "sh"}, {Pid: 30, Comm: "worker"}, {Pid: 10, Comm: "claude"}}
	if !inChain(helper, 10, 30) || shellBetween(helper, 30, 10) {
		t.Fatal("a helper process of the engine is not a nested engine")
	}
	if inChain(nested, 30, 10) {
		t.Fatal("the pinned engine is not below the reporter's")
	}
}

// send-keys Escape Escape interrupts an engine that reads two Escapes in one read as one press
// (OpenCode): the keys go in separate writes, the engine's key gap apart.
func TestSendKeysPacesEscapes(t *testing.T) {
	h := newParallelHerdWith(t, map[string]string{"engines.json": `{"engines": [{"name": "claude", "keyGapMs": 300}]}`})
	env := append(fakeEnv(t, "claude", false), "FAKEENGINE_ESC_TWICE=1")
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "oc", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("oc", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "oc", "slow story", herd.PromptOptions{Wait: true, States: []string{"working"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	res, err := h.c.SendKeys(h.ctx, "oc", "Escape", "Escape")
	if err != nil || res.Bytes != 2 {
		t.Fatalf("send-keys: %+v %v", res, err)
	}
	h.wait("oc", herd.StateIdle)
	if s := h.read("oc"); !strings.Contains(s, "Interrupted") {
		t.Fatalf("two Escapes should have interrupted the turn:\n%s", s)
	}
}

// A report carrying another launch's MOSH_HERD_NONCE (an orphan of an earlier member of the
// same name) is ignored and listed by explain; one by name from outside, without a nonce, counts.
func TestReportFromAnotherLaunchIsIgnored(t *testing.T) {
	h := newHerd(t)
	h.run("nn", "printf 'ready> '; read x; sleep 600")
	h.wait("nn", herd.StateIdle)
	t.Setenv("MOSH_HERD_NAME", "nn")
	t.Setenv(herd.EnvNonce, "an-earlier-launch")
	r, err := h.c.Report(h.ctx, "nn", "working", "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Accepted || !strings.Contains(r.Ignored, "another launch") {
		t.Fatalf("a report from another launch: %+v", r)
	}
	if row := h.member("nn"); row.State != herd.StateIdle {
		t.Fatalf("the ignored report changed the state: %+v", row)
	}
	ex, err := h.c.Explain(h.ctx, "nn")
	if err != nil || len(ex.IgnoredReports) != 1 || ex.IgnoredReports[0].State != "working" {
		t.Fatalf("explain should list the ignored report: %+v %v", ex.IgnoredReports, err)
	}
	os.Unsetenv(herd.EnvNonce)
	if r, err := h.c.Report(h.ctx, "nn", "working", "", 0, nil); err != nil || !r.Accepted {
		t.Fatalf("a report by name from outside the member: %+v %v", r, err)
	}
}

// BenchmarkForegroundProbe measures one foreground-process probe (what a settled screen of a
// plain program, or a re-probe while it runs silently, costs): cat blocked reading its terminal.
func BenchmarkForegroundProbe(b *testing.B) {
	master, tty, err := pty.Open()
	if err != nil {
		b.Skip("no pty:", err)
	}
	cmd := exec.Command("cat")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); master.Close(); tty.Close() }()
	m := &member{ptyProc: &ptyProc{ptmx: master, pid: cmd.Process.Pid, ttyName: tty.Name()}}
	// Until cat sits in its read.
	for i := 0; ; i++ {
		if fg := m.probeForeground(); fg != nil && fg.Reading {
			break
		}
		if i > 1e6 {
			b.Fatal("cat never read its terminal")
		}
		runtime.Gosched()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if fg := m.probeForeground(); fg == nil || !fg.Reading {
			b.Fatalf("probe %d: %+v", i, fg)
		}
	}
}

// The interrupt's second Escape is pressed only once the engine took the first: an engine that
// reads two Escapes in one read as one press (OpenCode) and is slow to read (a loaded machine:
// the fake engine pauses after each read, far longer than the key gap) is still interrupted.
func TestInterruptWaitsForTheEngineToTakeEachKey(t *testing.T) {
	h := newParallelHerdWith(t, map[string]string{"engines.json": `{"engines": [{"name": "claude", "interrupt": {"keys": ["Escape", "Escape"], "thenKeys": []}}]}`})
	env := append(fakeEnv(t, "claude", false), "FAKEENGINE_ESC_TWICE=1", "FAKEENGINE_READ_PAUSE=400ms")
	if _, err := h.c.Start(h.ctx, herd.StartParams{Engine: "claude", Name: "oc", Env: env}); err != nil {
		t.Fatal(err)
	}
	h.wait("oc", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "oc", "slow story", herd.PromptOptions{Wait: true, States: []string{"working"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	ir, err := h.c.Interrupt(h.ctx, "oc")
	if err != nil || len(ir.Keys) != 2 {
		t.Fatalf("interrupt: %+v %v", ir, err)
	}
	// Escapes taken as one press leave it working ("esc again to interrupt") for the slow turn.
	if _, err := h.c.Wait(h.ctx, []string{"oc"}, herd.WaitOptions{States: []string{herd.StateIdle}, Timeout: testTimeout / 2}); err != nil {
		t.Fatalf("oc never stopped after the interrupt: %v\n%s", err, h.read("oc"))
	}
	if s := h.read("oc"); !strings.Contains(s, "Interrupted") {
		t.Fatalf("the two Escapes should have interrupted the turn:\n%s", s)
	}
}
