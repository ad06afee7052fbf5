package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/platform"

	"github.com/mosh-dev/mosh/exitcode"
)

// askScript is a tiny interactive program: an idle prompt, and after each line a [y/n]
// permission question (blocked), then idle again. Each stage clears the screen so the screen
// shows one state at a time.
const askScript = `stty -echo; printf 'ready> '; while read l; do printf '\033[H\033[2Jgot:%s\nAllow? [y/n] ' "$l"; read a; printf '\033[H\033[2Janswer:%s\nready> ' "$a"; done`

func TestOnDemandStartAndPermissions(t *testing.T) {
	h := newHerd(t)
	st, err := h.c.DaemonStatus(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.Pid == 0 || st.Pid == os.Getpid() {
		t.Fatalf("daemon status %+v", st)
	}
	fi, err := os.Stat(herd.SocketPath(h.home))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want 0600 socket", fi.Mode())
	}
	di, err := os.Stat(herd.HerdDir(h.home))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("herd dir mode %o, want 0700", di.Mode().Perm())
	}
	if db, err := os.Stat(filepath.Join(herd.HerdDir(h.home), "herd.db")); err != nil || db.Mode().Perm() != 0o600 {
		t.Fatalf("herd.db: %v %v", db, err)
	}

	// Concurrent clients find the same daemon; none starts a second.
	var wg sync.WaitGroup
	pids := make(chan int, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home})
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			s, err := c.DaemonStatus(h.ctx)
			if err != nil {
				t.Error(err)
				return
			}
			pids <- s.Pid
		}()
	}
	wg.Wait()
	close(pids)
	for p := range pids {
		if p != st.Pid {
			t.Fatalf("a second daemon (pid %d, first %d)", p, st.Pid)
		}
	}
	// A second foreground daemon for the same home refuses to run.
	err = ServeForeground(h.ctx, h.home)
	wantCode(t, err, exitcode.Infra)
	if !strings.Contains(err.Error(), "already serves") {
		t.Fatalf("second daemon: %v", err)
	}
}

func TestConnectNoStart(t *testing.T) {
	home, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	t.Setenv("MOSH_HOME", home)
	_, err = herd.Connect(context.Background(), herd.ConnectOptions{Home: home, NoStart: true})
	wantCode(t, err, exitcode.Infra)
	st, err := herd.Probe(context.Background(), herd.ConnectOptions{Home: home})
	if err != nil || st.Running {
		t.Fatalf("probe without daemon: %+v %v", st, err)
	}
	dr, err := herd.Doctor(context.Background(), herd.ConnectOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if dr.OK || dr.Checks[0].Name != "daemon" || dr.Checks[0].Level != "fail" || dr.Checks[0].Fix == "" {
		t.Fatalf("doctor without daemon: %+v", dr)
	}
}

func TestPromptBlockedAnswerAndSendKeys(t *testing.T) {
	h := newParallelHerd(t)
	h.run("api", askScript)
	h.wait("api", herd.StateIdle)

	r, err := h.c.Prompt(h.ctx, "api", "hello world", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if !r.Sent || r.Outcome != herd.OutcomeMatched || r.State != herd.StateBlocked {
		t.Fatalf("prompt result %+v", r)
	}
	if r.Task == "" {
		t.Fatalf("prompt minted no task: %+v", r)
	}
	if s := h.read("api"); !strings.Contains(s, "got:hello world") {
		t.Fatalf("screen %q", s)
	}
	m := h.member("api")
	if m.State != herd.StateBlocked || m.BlockedOn != "permission" || m.Authority != herd.AuthorityScreen {
		t.Fatalf("row %+v", m)
	}

	// A blocked member refuses a prompt typed at once (--now) unless the caller says it is
	// answering; without --now the prompt waits in the member's queue.
	_, err = h.c.Prompt(h.ctx, "api", "oops", herd.PromptOptions{Now: true})
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "send-keys api 1") || !strings.Contains(err.Error(), "--answer") {
		t.Fatalf("refusal names no fix: %v", err)
	}
	sk, err := h.c.SendKeys(h.ctx, "api", "y", "Enter")
	if err != nil || sk.Bytes != 2 {
		t.Fatalf("send-keys: %+v %v", sk, err)
	}
	h.wait("api", herd.StateIdle)
	if s := h.read("api"); !strings.Contains(s, "answer:y") {
		t.Fatalf("screen after answer %q", s)
	}
	// --answer types into a blocked member.
	if _, err := h.c.Prompt(h.ctx, "api", "again", herd.PromptOptions{Wait: true, States: []string{"blocked:permission"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.Prompt(h.ctx, "api", "n", herd.PromptOptions{Answer: true, Wait: true, States: []string{"idle"}, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	}
	if s := h.read("api"); !strings.Contains(s, "answer:n") {
		t.Fatalf("screen after --answer %q", s)
	}
	// Errors carry exit codes.
	_, err = h.c.Prompt(h.ctx, "nope", "x", herd.PromptOptions{})
	wantCode(t, err, exitcode.Gone)
	_, err = h.c.Prompt(h.ctx, "Bad!", "x", herd.PromptOptions{})
	wantCode(t, err, exitcode.Usage)
	_, err = h.c.SendKeys(h.ctx, "api", "C-!")
	wantCode(t, err, exitcode.Usage)
}

func TestEncodeKeys(t *testing.T) {
	got, err := encodeKeys([]string{"C-c", "Enter", "Escape", "Up", "Down", "Right", "Left", "Tab", "BSpace", "Space", "1", "héllo", "C-x", "M-b", "C-["})
	if err != nil {
		t.Fatal(err)
	}
	want := "\x03\r\x1b\x1b[A\x1b[B\x1b[C\x1b[D\t\x7f 1héllo\x18\x1bb\x1b"
	if string(got) != want {
		t.Fatalf("encodeKeys = %q, want %q", got, want)
	}
	if _, err := encodeKeys(nil); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("no keys: %v", err)
	}
}

func TestProcessExitIsGoneWithItsCode(t *testing.T) {
	h := newParallelHerd(t)
	sub, err := h.c.Subscribe(h.ctx, "quitter")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	h.run("quitter", `echo bye-bye; exit 7`)
	// A process that dies is not done: a wait for done ends (exit 3) with the exit code.
	w, err := h.c.Wait(h.ctx, []string{"quitter"}, herd.WaitOptions{States: []string{herd.StateDone}, Timeout: testTimeout})
	wantCode(t, err, exitcode.Gone)
	if o := w.Results[0]; w.Outcome != herd.OutcomeEnded || o.State != herd.StateGone || o.Authority != herd.AuthorityRuntime || o.ExitCode == nil || *o.ExitCode != 7 {
		t.Fatalf("wait %+v", w)
	}
	if !strings.Contains(err.Error(), "code 7") {
		t.Fatalf("the error names no exit code: %v", err)
	}
	// Waiting for gone itself matches.
	if w := h.wait("quitter", herd.StateGone); w.Outcome != herd.OutcomeMatched {
		t.Fatalf("wait gone %+v", w)
	}
	m := h.member("quitter")
	if m.State != herd.StateGone || m.Authority != herd.AuthorityRuntime || m.ExitCode == nil || *m.ExitCode != 7 || m.Alive {
		t.Fatalf("row %+v", m)
	}
	if s := h.read("quitter"); !strings.Contains(s, "bye-bye") {
		t.Fatalf("final screen %q", s)
	}
	// The event stream carried the exit.
	for e := range sub.Events() {
		if e.Type == herd.EventState && e.ExitCode != nil {
			if *e.ExitCode != 7 || e.State != herd.StateGone || e.Authority != herd.AuthorityRuntime {
				t.Fatalf("exit event %+v", e)
			}
			break
		}
	}
	// Prompting an exited member is "gone" with the fix; waiting for something else is "ended".
	_, err = h.c.Prompt(h.ctx, "quitter", "x", herd.PromptOptions{})
	wantCode(t, err, exitcode.Gone)
	r, err := h.c.Wait(h.ctx, []string{"quitter"}, herd.WaitOptions{States: []string{"blocked"}})
	wantCode(t, err, exitcode.Gone)
	if r.Outcome != herd.OutcomeEnded {
		t.Fatalf("wait on exited: %+v", r)
	}
	// herd log shows the gone; stats stop accruing at it.
	lg, err := h.c.Log(h.ctx, "quitter", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if tr := lg.Transitions; len(tr) == 0 || tr[len(tr)-1].State != herd.StateGone {
		t.Fatalf("log %+v", lg)
	}
}

func TestWaitAnyAllTimeoutEnded(t *testing.T) {
	h := newParallelHerd(t)
	for _, n := range []string{"a", "b", "c"} {
		h.run(n, askScript)
	}
	for _, n := range []string{"a", "b", "c"} {
		h.wait(n, herd.StateIdle)
	}

	// Timeout: nobody gets blocked.
	r, err := h.c.Wait(h.ctx, []string{"a"}, herd.WaitOptions{States: []string{"blocked"}, Timeout: 150 * time.Millisecond})
	wantCode(t, err, exitcode.Timeout)
	if r.Outcome != herd.OutcomeTimeout || r.Results[0].Outcome != herd.OutcomeTimeout || r.Results[0].State != herd.StateIdle {
		t.Fatalf("timeout result %+v", r)
	}

	// --any: b is made blocked while the wait runs; a and c keep running as "pending".
	type res struct {
		r   *herd.WaitResult
		err error
	}
	done := make(chan res, 1)
	sub, err := h.c.Subscribe(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	go func() {
		r, err := h.c.Wait(h.ctx, []string{"a", "b", "c"}, herd.WaitOptions{Any: true, States: []string{"blocked"}, Timeout: testTimeout})
		done <- res{r, err}
	}()
	// Prompt only after the wait is registered: a second subscriber proves nothing was missed,
	// so just prompt; the wait subscribes before it reads states.
	if _, err := h.c.Prompt(h.ctx, "b", "go", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || got.r.Outcome != herd.OutcomeMatched || got.r.Winner != "b" || got.r.Mode != "any" {
		t.Fatalf("any: %+v %v", got.r, got.err)
	}
	for _, o := range got.r.Results {
		if o.Name != "b" && o.Outcome != herd.OutcomePending {
			t.Fatalf("loser %+v", o)
		}
	}
	if m := h.member("a"); !m.Alive {
		t.Fatalf("loser a stopped: %+v", m)
	}

	// --all: a and c become blocked (b already is).
	go func() {
		r, err := h.c.Wait(h.ctx, []string{"a", "b", "c"}, herd.WaitOptions{All: true, States: []string{"blocked"}, Timeout: testTimeout})
		done <- res{r, err}
	}()
	for _, n := range []string{"a", "c"} {
		if _, err := h.c.Prompt(h.ctx, n, "go", herd.PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got = <-done
	if got.err != nil || got.r.Outcome != herd.OutcomeMatched || got.r.Mode != "all" {
		t.Fatalf("all: %+v %v", got.r, got.err)
	}
	for _, o := range got.r.Results {
		if o.Outcome != herd.OutcomeMatched || o.State != herd.StateBlocked {
			t.Fatalf("all result %+v", o)
		}
	}

	// ended: the process exits without reaching the wanted state.
	h.run("short", `read x; exit 0`)
	go func() {
		r, err := h.c.Wait(h.ctx, []string{"short"}, herd.WaitOptions{States: []string{"blocked"}, Timeout: testTimeout})
		done <- res{r, err}
	}()
	if _, err := h.c.SendKeys(h.ctx, "short", "Enter"); err != nil {
		t.Fatal(err)
	}
	got = <-done
	wantCode(t, got.err, exitcode.Gone)
	if o := got.r.Results[0]; got.r.Outcome != herd.OutcomeEnded || o.State != herd.StateGone || o.ExitCode == nil || *o.ExitCode != 0 {
		t.Fatalf("ended: %+v", got.r)
	}

	// gone: no such member; and a member killed during the wait.
	r, err = h.c.Wait(h.ctx, []string{"ghost"}, herd.WaitOptions{})
	wantCode(t, err, exitcode.Gone)
	if r.Outcome != herd.OutcomeGone {
		t.Fatalf("ghost %+v", r)
	}
	go func() {
		r, err := h.c.Wait(h.ctx, []string{"c"}, herd.WaitOptions{States: []string{"working"}, Timeout: testTimeout})
		done <- res{r, err}
	}()
	if _, err := h.c.Kill(h.ctx, []string{"c"}, false); err != nil {
		t.Fatal(err)
	}
	got = <-done
	wantCode(t, got.err, exitcode.Gone)
	// The kill ends the process (ended) and then removes the member (gone): either decides it.
	if got.r.Outcome != herd.OutcomeGone && got.r.Outcome != herd.OutcomeEnded {
		t.Fatalf("killed during wait: %+v", got.r)
	}
	_, err = h.c.Wait(h.ctx, []string{"a"}, herd.WaitOptions{Any: true, All: true})
	wantCode(t, err, exitcode.Usage)
	_, err = h.c.Wait(h.ctx, []string{"a"}, herd.WaitOptions{States: []string{"sleeping"}})
	wantCode(t, err, exitcode.Usage)
}

func TestReportHookAuthorityAndTTL(t *testing.T) {
	h := newParallelHerd(t)
	h.run("hooked", askScript)
	h.wait("hooked", herd.StateIdle)

	rr, err := h.c.Report(h.ctx, "hooked", "blocked", "question", 0, json.RawMessage(`{"note":"x"}`))
	if err != nil || !rr.Accepted || rr.State != herd.StateBlocked {
		t.Fatalf("report: %+v %v", rr, err)
	}
	m := h.member("hooked")
	if m.State != herd.StateBlocked || m.BlockedOn != "question" || m.Authority != herd.AuthorityHook || m.Hook == nil || m.Screen == nil || m.Screen.State != herd.StateIdle {
		t.Fatalf("row after report %+v (hook %+v screen %+v)", m, m.Hook, m.Screen)
	}
	ex, err := h.c.Explain(h.ctx, "hooked")
	if err != nil || ex.Hook == nil || ex.Screen == nil || ex.Authority != herd.AuthorityHook || ex.Decided == "" ||
		ex.ReasonCode != "hook.report" || ex.RuleSource != "" {
		t.Fatalf("explain %+v %v", ex, err)
	}

	// A short TTL ends on its own: the screen takes over again, pushed as an event.
	sub, err := h.c.Subscribe(h.ctx, "hooked")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := h.c.Report(h.ctx, "hooked", "working", "", 100*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for e := range sub.Events() {
		seen = append(seen, e.State+"/"+e.Authority)
		if e.State == herd.StateIdle && e.Authority == herd.AuthorityScreen {
			break
		}
	}
	if len(seen) < 2 || seen[0] != "working/hook" {
		t.Fatalf("events after a TTL report: %v", seen)
	}

	// Bad input.
	_, err = h.c.Report(h.ctx, "hooked", "sleeping", "", 0, nil)
	wantCode(t, err, exitcode.Usage)
	_, err = h.c.Report(h.ctx, "hooked", "idle", "menu", 0, nil)
	wantCode(t, err, exitcode.Usage)
	_, err = h.c.Report(h.ctx, "nobody", "idle", "", 0, nil)
	wantCode(t, err, exitcode.Gone)
	if r, err := h.c.Report(h.ctx, "", "garbage", "", 0, nil); r != nil || err != nil {
		t.Fatalf("empty name must be a silent no-op: %+v %v", r, err)
	}
	// "blocked:menu" in the state argument is accepted too.
	if r, err := h.c.Report(h.ctx, "hooked", "blocked:menu", "", time.Minute, nil); err != nil || r.State != herd.StateBlocked {
		t.Fatalf("blocked:menu: %+v %v", r, err)
	}
}

func TestValidation(t *testing.T) {
	h := newHerd(t)
	cwd := t.TempDir()
	for _, bad := range []string{"Api", "1api", "a b", strings.Repeat("a", 33), "api!"} {
		_, err := h.c.Run(h.ctx, herd.RunParams{Name: bad, Cwd: cwd, Argv: []string{"/bin/sh"}})
		wantCode(t, err, exitcode.Usage)
	}
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: "dup", Cwd: cwd, Argv: []string{"/bin/sh"}}); err != nil {
		t.Fatal(err)
	}
	_, err := h.c.Run(h.ctx, herd.RunParams{Name: "dup", Cwd: cwd, Argv: []string{"/bin/sh"}})
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("dup: %v", err)
	}
	_, err = h.c.Run(h.ctx, herd.RunParams{Cwd: filepath.Join(cwd, "missing"), Argv: []string{"/bin/sh"}})
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing cwd: %v", err)
	}
	_, err = h.c.Run(h.ctx, herd.RunParams{Cwd: cwd, Argv: []string{"no-such-command-xyz"}})
	wantCode(t, err, exitcode.Infra) // a missing program is infrastructure, as for herd start
	_, err = h.c.Start(h.ctx, herd.StartParams{Engine: "notanengine", Cwd: cwd})
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "claude") {
		t.Fatalf("unknown engine error lists no engines: %v", err)
	}
	_, err = h.c.Run(h.ctx, herd.RunParams{Cwd: cwd, Engine: "nope", Argv: []string{"/bin/sh"}})
	wantCode(t, err, exitcode.Usage)

	// Default names: <engine>-<basename(cwd)>, then -2, -3.
	dir := filepath.Join(cwd, "My Project")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < 3; i++ {
		m, err := h.c.Run(h.ctx, herd.RunParams{Cwd: dir, Argv: []string{"/bin/sh"}})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "shell-my-project,shell-my-project-2,shell-my-project-3" {
		t.Fatalf("default names %v", names)
	}
	if got := slugify("123 Über_Cool!!"); got != "ber-cool" {
		t.Fatalf("slugify = %q", got)
	}

	// start resolves the engine binary on the caller's PATH; --agent adds autonomous flags;
	// codex always gets --no-daemon.
	bin := filepath.Join(cwd, "bin")
	os.Mkdir(bin, 0o700)
	for _, e := range []string{"codex", "claude"} {
		os.WriteFile(filepath.Join(bin, e), []byte("#!/bin/sh\necho \"args:$*\"\nexec sleep 600\n"), 0o700)
	}
	env := append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
	cx, err := h.c.Start(h.ctx, herd.StartParams{Engine: "codex", Name: "cx", Cwd: cwd, Agent: true, Args: []string{"--model", "m"}, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if !cx.Autonomous || cx.Bin != filepath.Join(bin, "codex") || strings.Join(cx.Args, " ") != "--no-daemon --dangerously-bypass-approvals-and-sandbox --model m" {
		t.Fatalf("codex start %+v", cx)
	}
	cc, err := h.c.Start(h.ctx, herd.StartParams{Engine: "cc", Name: "cc", Cwd: cwd, Env: env})
	if err != nil || cc.Engine != "claude" || cc.Autonomous || len(cc.Args) != 0 {
		t.Fatalf("claude via alias: %+v %v", cc, err)
	}
	_, err = h.c.Start(h.ctx, herd.StartParams{Engine: "gemini", Cwd: cwd, Env: env})
	wantCode(t, err, exitcode.Infra) // not installed
	if !strings.Contains(err.Error(), "not installed") {
		t.Fatalf("missing engine: %v", err)
	}
}

func TestEnvironmentComesFromTheCaller(t *testing.T) {
	h := newHerd(t)
	env := append(os.Environ(), "HERD_T_SECRET=from-caller")
	m, err := h.c.Run(h.ctx, herd.RunParams{Name: "envy", Env: env, Argv: []string{"/bin/sh", "-c", `echo "s=$HERD_T_SECRET n=$MOSH_HERD_NAME d=$MOSH_HERD_DIR h=${MOSH_HOME:-unset}"; exit 0`}})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(m.Name, herd.StateGone)
	want := fmt.Sprintf("s=from-caller n=envy d=%s", herd.HerdDir(h.home))
	if s := h.read("envy"); !strings.Contains(s, want) {
		t.Fatalf("member env: %q, want %q", s, want)
	}
	// Without the variable in the request, the member does not get it from the daemon.
	m2, err := h.c.Run(h.ctx, herd.RunParams{Name: "plain", Env: []string{"PATH=/usr/bin:/bin"}, Argv: []string{"/bin/sh", "-c", `echo "home=${MOSH_HOME:-unset} path=$PATH"; exit 0`}})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(m2.Name, herd.StateGone)
	if s := h.read("plain"); !strings.Contains(s, "home=unset path=/usr/bin:/bin") {
		t.Fatalf("daemon environment leaked: %q", s)
	}
}

// A big prompt of any text arrives byte for byte (control characters other than tab, newline and
// CRLF are refused before typing: TestPromptWithControlCharactersIsRefusedUntyped).
func TestBigUnicodePromptIntact(t *testing.T) {
	h := newParallelHerd(t)
	out := filepath.Join(t.TempDir(), "got")
	var b strings.Builder
	for b.Len() < 100<<10 {
		b.WriteString("héllo 世界 🎉 line\twith [31m and [201~ text, a CRLF\r\n and a newline\n")
	}
	text := b.String()
	n := len(text) + 1 // + the Enter
	script := fmt.Sprintf(`stty raw -echo; printf 'ready> '; head -c %d > %s; printf '\033[H\033[2Jsaved. Continue? [y/n] '; read x`, n, out)
	h.run("big", script)
	h.wait("big", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "big", text, herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wait("big", herd.StateBlocked)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(text+"\r")) {
		i := 0
		for i < len(got) && i < len(text) && got[i] == text[i] {
			i++
		}
		t.Fatalf("prompt arrived altered: %d bytes, want %d; first difference at %d", len(got), n, i)
	}
}

func TestKillRestoreAfterDaemonKill9(t *testing.T) {
	h := newHerd(t)
	cwd := t.TempDir()
	t.Setenv("HERD_T_ROUND", "one")
	script := `printf 'round=%s args=%s\nready> ' "$HERD_T_ROUND" "$0"; read x`
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: "survivor", Cwd: cwd, Argv: []string{"/bin/sh", "-c", script, "arg0"}}); err != nil {
		t.Fatal(err)
	}
	h.wait("survivor", herd.StateIdle)
	if s := h.read("survivor"); !strings.Contains(s, "round=one args=arg0") {
		t.Fatalf("first screen %q", s)
	}
	// A member that ignores SIGHUP outlives the daemon's pty.
	stubborn, err := h.c.Run(h.ctx, herd.RunParams{Name: "stubborn", Cwd: cwd, Argv: []string{"/bin/sh", "-c", "trap '' HUP; printf 'ready> '; while :; do sleep 1; done"}})
	if err != nil {
		t.Fatal(err)
	}
	h.wait("stubborn", herd.StateIdle)
	st, err := h.c.DaemonStatus(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The connection dropped: the daemon is dying; then it is gone.
	<-h.c.Done()
	if err := herd.WaitProcessGone(h.ctx, st.Pid, h.home); err != nil {
		t.Fatal(err)
	}

	// A new client starts a new daemon; the member is remembered but gone.
	t.Setenv("HERD_T_ROUND", "two")
	c, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home})
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	m := h.member("survivor")
	if m.State != herd.StateGone || m.Alive || m.Cwd != cwd {
		t.Fatalf("after kill -9: %+v", m)
	}
	_, err = c.Prompt(h.ctx, "survivor", "x", herd.PromptOptions{})
	wantCode(t, err, exitcode.Gone)
	if !strings.Contains(err.Error(), "restore") {
		t.Fatalf("gone error names no fix: %v", err)
	}
	// A new member cannot take a remembered name.
	_, err = c.Run(h.ctx, herd.RunParams{Name: "survivor", Argv: []string{"/bin/sh"}})
	wantCode(t, err, exitcode.Usage)

	if !platform.Alive(stubborn.Pid) {
		t.Fatalf("the SIGHUP-ignoring member %d died with the daemon: the orphan case is not exercised", stubborn.Pid)
	}
	dr, err := c.Doctor(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	sawOrphan := false
	for _, ch := range dr.Checks {
		sawOrphan = sawOrphan || (ch.Name == "orphans" && ch.Level == "warn" && strings.Contains(ch.Detail, "stubborn"))
	}
	if !sawOrphan {
		t.Fatalf("doctor names no orphan: %+v", dr.Checks)
	}
	// The orphan is ended by kill, like a live member.
	if _, err := c.Kill(h.ctx, []string{"stubborn"}, false); err != nil {
		t.Fatal(err)
	}
	if platform.Alive(stubborn.Pid) {
		t.Fatalf("kill left the orphan %d running", stubborn.Pid)
	}

	dry, err := c.Restore(h.ctx, herd.RestoreOptions{DryRun: true})
	if err != nil || len(dry.Actions) != 1 || dry.Actions[0].Action != "restart" || !dry.DryRun {
		t.Fatalf("dry run %+v %v", dry, err)
	}
	if m := h.member("survivor"); m.State != herd.StateGone {
		t.Fatalf("dry run restarted it: %+v", m)
	}
	res, err := c.Restore(h.ctx, herd.RestoreOptions{})
	if err != nil || len(res.Actions) != 1 || res.Actions[0].Pid == 0 {
		t.Fatalf("restore %+v %v", res, err)
	}
	h.wait("survivor", herd.StateIdle)
	// Same name, cwd and args; the environment of the restoring command.
	if s := h.read("survivor"); !strings.Contains(s, "round=two args=arg0") {
		t.Fatalf("restored screen %q", s)
	}
	if m := h.member("survivor"); !m.Alive || m.Cwd != cwd {
		t.Fatalf("restored row %+v", m)
	}

	// kill forgets; prune forgets exited members.
	if _, err := c.Kill(h.ctx, []string{"survivor"}, false); err != nil {
		t.Fatal(err)
	}
	_, err = c.Kill(h.ctx, []string{"survivor"}, false)
	wantCode(t, err, exitcode.Gone)
	h.run("brief", "exit 0")
	h.wait("brief", herd.StateGone)
	pr, err := c.Prune(h.ctx)
	if err != nil || len(pr.Pruned) != 1 || pr.Pruned[0] != "brief" {
		t.Fatalf("prune %+v %v", pr, err)
	}
	if ms, _ := c.List(h.ctx); len(ms) != 0 {
		t.Fatalf("after kill+prune: %+v", ms)
	}
}

func TestDaemonStopRefusesWhileRunning(t *testing.T) {
	h := newHerd(t)
	h.run("busy", askScript)
	_, err := h.c.DaemonStop(h.ctx, false)
	wantCode(t, err, exitcode.Usage)
	if !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("stop refusal: %v", err)
	}
	r, err := h.c.DaemonStop(h.ctx, true)
	if err != nil || !r.Stopped || len(r.Killed) != 1 {
		t.Fatalf("stop --yes: %+v %v", r, err)
	}
	<-h.c.Done()
	if _, err := herd.Connect(h.ctx, herd.ConnectOptions{Home: h.home, NoStart: true}); exitcode.Of(err) != exitcode.Infra {
		t.Fatalf("daemon still answers after stop: %v", err)
	}
}

func TestAttachStream(t *testing.T) {
	h := newParallelHerd(t)
	h.run("tty", `stty -echo; printf 'attach-me> '; read l; printf 'typed:%s\n' "$l"; stty size; read x`)
	h.wait("tty", herd.StateIdle)
	a, err := h.c.Attach(h.ctx, "tty", 100, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Result.Cols != 100 || a.Result.Rows != 30 {
		t.Fatalf("attach result %+v", a.Result)
	}
	var got bytes.Buffer
	readUntil := func(want string) {
		t.Helper()
		buf := make([]byte, 4096)
		for !strings.Contains(got.String(), want) {
			n, err := a.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				t.Fatalf("attach read: %v; got %q", err, got.String())
			}
		}
	}
	readUntil("attach-me>") // the redraw
	if _, err := a.Write([]byte("over the wire\r")); err != nil {
		t.Fatal(err)
	}
	readUntil("typed:over the wire")
	readUntil("30 100") // stty size: the pty follows the attached client's size
	if err := a.Resize(90, 20); err != nil {
		t.Fatal(err)
	}
	// Resize is applied in order with input, so after this echo the size is known.
	if _, err := a.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	readUntil("\n") // keep reading until the member exits
	buf := make([]byte, 4096)
	for {
		_, err := a.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if a.ExitCode == nil || *a.ExitCode != 0 {
		t.Fatalf("exit frame: %v", a.ExitCode)
	}
	if m := h.member("tty"); m.Cols != 90 || m.Rows != 20 {
		t.Fatalf("size after resize %dx%d", m.Cols, m.Rows)
	}
	_, err = h.c.Attach(h.ctx, "tty", 0, 0)
	wantCode(t, err, exitcode.Gone)
}

func TestOtherUserCannotConnect(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a probe as another user")
	}
	h := newHerd(t)
	sock := herd.SocketPath(h.home)
	// The probe binary must be reachable by uid 65534.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	probe := filepath.Join(dir, "probe")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(probe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	runProbe := func() (int, string) {
		cmd := exec.Command(probe)
		cmd.Env = []string{"MOSH_HERD_TEST_PROBE=" + sock}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("probe: %v", err)
		}
		return code, string(out)
	}
	if code, out := runProbe(); code != 0 {
		t.Fatalf("another user used the herd socket (exit %d): %s", code, out)
	}
	// Even with the file modes opened up, the daemon's peer check refuses the other user.
	os.Chmod(h.home, 0o755)
	os.Chmod(herd.HerdDir(h.home), 0o755)
	os.Chmod(sock, 0o777)
	code, out := runProbe()
	os.Chmod(sock, 0o600)
	os.Chmod(herd.HerdDir(h.home), 0o700)
	if code != 0 {
		t.Fatalf("peer check let another user in: %s", out)
	}
	if !strings.Contains(out, "request refused") {
		t.Fatalf("with open modes the probe should reach the socket and be refused by the daemon: %s", out)
	}
}

func TestDoctorAndStatus(t *testing.T) {
	h := newHerd(t)
	h.run("one", askScript)
	st, err := h.c.Status(h.ctx)
	if err != nil || st.Members != 1 || st.Live != 1 || st.Substrate != herd.SubstratePty || st.Socket != herd.SocketPath(h.home) {
		t.Fatalf("status %+v %v", st, err)
	}
	dr, err := herd.Doctor(h.ctx, herd.ConnectOptions{Home: h.home})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, c := range dr.Checks {
		names[c.Name] = c.Level
	}
	if names["daemon"] != "ok" || names["database"] != "ok" || names["manifest"] != "ok" || !dr.OK {
		t.Fatalf("doctor %+v", dr)
	}
}

func TestPromptsBecomeTasks(t *testing.T) {
	h := newParallelHerd(t)
	h.run("tasker", askScript)
	h.wait("tasker", herd.StateIdle)
	first, err := h.c.Prompt(h.ctx, "tasker", "first job", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || first.Task == "" {
		t.Fatalf("first prompt %+v %v", first, err)
	}
	if _, err := h.c.SendKeys(h.ctx, "tasker", "y", "Enter"); err != nil {
		t.Fatal(err)
	}
	h.wait("tasker", herd.StateIdle)
	// The next prompt's task is minted through the same ordered ledger queue, after the first
	// task's close.
	second, err := h.c.Prompt(h.ctx, "tasker", "second job", herd.PromptOptions{Wait: true, States: []string{"blocked"}, Timeout: testTimeout})
	if err != nil || second.Task == "" || second.Task == first.Task {
		t.Fatalf("second prompt %+v %v", second, err)
	}
	store, err := openLedger(herd.HerdDir(h.home))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t1, err := store.Task(first.Task)
	if err != nil {
		t.Fatal(err)
	}
	if t1.Open || t1.Text != "first job" || t1.State != herd.StateIdle || t1.StateAtSubmit != herd.StateIdle {
		t.Fatalf("first task %+v", t1)
	}
	if t1.Artifact == nil || !strings.Contains(t1.Artifact.Text, "answer:y") || t1.Artifact.Source != "screen" {
		t.Fatalf("first task artifact %+v", t1.Artifact)
	}
	sawBlocked := false
	for _, tr := range t1.Transitions {
		sawBlocked = sawBlocked || (tr.State == herd.StateBlocked && tr.Kind == "permission" && tr.Authority == herd.AuthorityScreen)
	}
	if !sawBlocked {
		t.Fatalf("first task transitions %+v", t1.Transitions)
	}
	// Its transitions may still be in the daemon's ledger queue: only its being open is certain.
	t2, err := store.Task(second.Task)
	if err != nil || !t2.Open || t2.Text != "second job" {
		t.Fatalf("second task %+v %v", t2, err)
	}
}

// A MOSH_HOME deep enough that herd/mosh.sock would pass the unix socket limit gets a socket
// under /tmp/mosh-<uid>/ in a 0700 directory.
func TestLongHomeSocketFallback(t *testing.T) {
	base, err := os.MkdirTemp("", "mosh")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	home := filepath.Join(base, strings.Repeat("deep-directory-", 6))
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MOSH_HOME", home)
	sock := herd.SocketPath(home)
	if len(filepath.Join(herd.HerdDir(home), "mosh.sock")) <= herd.MaxSocketPath || !strings.HasPrefix(sock, filepath.Join(os.TempDir(), fmt.Sprintf("mosh-%d", os.Getuid()))) {
		t.Fatalf("socket path %s for home %s", sock, home)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := herd.Connect(ctx, herd.ConnectOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer stopDaemon(home)
	defer c.Close()
	st, err := c.DaemonStatus(ctx)
	if err != nil || st.Socket != sock {
		t.Fatalf("daemon status %+v %v", st, err)
	}
	di, err := os.Stat(filepath.Dir(sock))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("fallback dir %v %v", di, err)
	}
}

// The wire protocol as a foreign client sees it (docs/protocol.md): errors with exit codes, unknown
// methods, bad lines, notifications without replies, out-of-order replies, and cancel.
func TestRawProtocol(t *testing.T) {
	h := newParallelHerd(t)
	h.run("raw", askScript)
	conn, err := net.Dial("unix", herd.SocketPath(h.home))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	send := func(s string) {
		t.Helper()
		if _, err := conn.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(testTimeout))
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("reply is not JSON: %q", line)
		}
		return m
	}
	errCode := func(m map[string]any) (float64, float64) {
		e, _ := m["error"].(map[string]any)
		if e == nil {
			t.Fatalf("want an error, got %v", m)
		}
		d, _ := e["data"].(map[string]any)
		return e["code"].(float64), d["exitCode"].(float64)
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"nope"}`)
	if c, x := errCode(recv()); c != -32601 || x != 1 {
		t.Fatalf("unknown method: %v %v", c, x)
	}
	send(`{not json`)
	if c, _ := errCode(recv()); c != -32700 {
		t.Fatalf("parse error code %v", c)
	}
	send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	if c, _ := errCode(recv()); c != -32700 {
		t.Fatalf("batch: %v", c)
	}
	send(`{"jsonrpc":"2.0","id":"s","method":"read","params":{"name":"ghost"}}`)
	m := recv()
	if c, x := errCode(m); c != -32003 || x != 3 || m["id"] != "s" {
		t.Fatalf("gone: %v", m)
	}
	// A notification (no id) runs and gets no reply; the next reply is for the next request.
	send(`{"jsonrpc":"2.0","method":"report","params":{"name":"raw","state":"working"}}`)
	// A wait without deadline, then a quick request: replies come as each completes.
	send(`{"jsonrpc":"2.0","id":10,"method":"wait","params":{"names":["raw"],"states":["done"]}}`)
	send(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	if m := recv(); m["id"] != float64(11) {
		t.Fatalf("ping should answer before the pending wait: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":10}}`)
	m = recv()
	if c, x := errCode(m); m["id"] != float64(10) || x != 130 || c != -32130 {
		t.Fatalf("cancelled wait: %v", m)
	}
	// The notification's report landed (a wait, so the check does not race its handler).
	send(`{"jsonrpc":"2.0","id":12,"method":"wait","params":{"names":["raw"],"states":["working"],"timeoutMs":30000}}`)
	m = recv()
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(12) || res == nil || res["outcome"] != "matched" {
		t.Fatalf("report by notification: %v", m)
	}
	if row := h.member("raw"); row.Authority != herd.AuthorityHook {
		t.Fatalf("report by notification: %+v", row)
	}
}

// A command `mosh install` linked into $MOSH_HOME/bin runs as a member without a PATH edit; a
// command found nowhere is refused naming the fix.
func TestRunFindsInstalledTools(t *testing.T) {
	h := newParallelHerd(t)
	bin := filepath.Join(h.home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "herd-t-tool"), []byte("#!/bin/sh\necho tool-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin"}
	m, err := h.c.Run(h.ctx, herd.RunParams{Name: "tool", Env: env, Argv: []string{"herd-t-tool"}})
	if err != nil {
		t.Fatalf("run a tool linked in $MOSH_HOME/bin: %v", err)
	}
	h.wait(m.Name, herd.StateGone)
	if s := h.read("tool"); !strings.Contains(s, "tool-ran") {
		t.Fatalf("the tool did not run: %q", s)
	}
	_, err = h.c.Run(h.ctx, herd.RunParams{Name: "none", Env: env, Argv: []string{"herd-t-missing"}})
	wantCode(t, err, exitcode.Infra)
	if err == nil || !strings.Contains(err.Error(), "is not on your PATH") || !strings.Contains(err.Error(), "install herd-t-missing") {
		t.Fatalf("a missing command: %v", err)
	}
}

// TestMissingEngineProgramIsOneExitCode: the same missing program reads the same through run and
// start: exit 5 (infrastructure), naming the engine and what to install.
func TestMissingEngineProgramIsOneExitCode(t *testing.T) {
	h := newHerd(t)
	env := []string{"PATH=" + t.TempDir()}
	_, runErr := h.c.Run(h.ctx, herd.RunParams{Name: "viarun", Env: env, Argv: []string{"codex"}})
	_, startErr := h.c.Start(h.ctx, herd.StartParams{Engine: "codex", Name: "viastart", Env: env})
	for what, err := range map[string]error{"run -- codex": runErr, "start codex": startErr} {
		wantCode(t, err, exitcode.Infra)
		if !strings.Contains(err.Error(), "codex is not installed") || !strings.Contains(err.Error(), "install codex") {
			t.Errorf("%s: %v", what, err)
		}
	}
	if runErr.Error() != startErr.Error() {
		t.Errorf("run and start say different things:\n run:   %v\n start: %v", runErr, startErr)
	}
	if ms, _ := h.c.List(h.ctx); len(ms) != 0 {
		t.Errorf("a missing program left members: %+v", ms)
	}
}

// TestExitReasonIsTheLastScreenLines: a member whose process exits (during start-up or later)
// carries its last screen lines as the reason: in its roster row, in a wait's error, and in the
// refusal of a prompt to it.
func TestExitReasonIsTheLastScreenLines(t *testing.T) {
	h := newHerd(t)
	m, err := h.c.Run(h.ctx, herd.RunParams{Name: "early", Argv: []string{"/bin/sh", "-c", "echo 'starting up'; echo '--dangerously-skip-permissions cannot be used with root/sudo privileges'; exit 1"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.ExitReason != "" {
		t.Errorf("a live member has no exit reason: %q", m.ExitReason)
	}
	res, err := h.c.Wait(h.ctx, []string{"early"}, herd.WaitOptions{States: []string{herd.StateIdle}})
	wantCode(t, err, exitcode.Gone)
	const why = "--dangerously-skip-permissions cannot be used with root/sudo privileges"
	if res == nil || len(res.Results) != 1 || !strings.Contains(res.Results[0].ExitReason, why) || !strings.Contains(res.Results[0].ExitReason, "starting up") {
		t.Fatalf("wait outcome: %+v", res)
	}
	if !strings.Contains(err.Error(), "exited with code 1") || !strings.Contains(err.Error(), why) {
		t.Errorf("wait error: %v", err)
	}
	ms, err := h.c.List(h.ctx)
	if err != nil || len(ms) != 1 || ms[0].ExitCode == nil || *ms[0].ExitCode != 1 || !strings.HasSuffix(ms[0].ExitReason, why) {
		t.Fatalf("roster row: %+v %v", ms, err)
	}
	_, err = h.c.Prompt(h.ctx, "early", "hello", herd.PromptOptions{})
	wantCode(t, err, exitcode.Gone)
	if !strings.Contains(err.Error(), why) {
		t.Errorf("prompt to an exited member: %v", err)
	}
	// A process that leaves a blank screen has no reason to give: the exit code only.
	if _, err := h.c.Run(h.ctx, herd.RunParams{Name: "blank", Argv: []string{"/bin/sh", "-c", "exit 2"}}); err != nil {
		t.Fatal(err)
	}
	res, _ = h.c.Wait(h.ctx, []string{"blank"}, herd.WaitOptions{States: []string{herd.StateIdle}})
	if res == nil || res.Results[0].ExitReason != "" || res.Results[0].ExitCode == nil || *res.Results[0].ExitCode != 2 {
		t.Errorf("blank: %+v", res)
	}
}

// Without --state, wait waits for the member's open task to end, whatever end its turns have: a
// shell's turn ends idle, never done, and a wait after its prompt answers at that end (it timed
// out before). With no task open, a member at rest answers at once; blocked still ends a wait.
func TestWaitWithoutStatesWaitsForTheTurnsEnd(t *testing.T) {
	h := newParallelHerd(t)
	h.run("sh1", `stty -echo; printf 'ready> '; while read l; do sleep 0.2; printf 'got:%s\nready> ' "$l"; done`)
	h.wait("sh1", herd.StateIdle)
	p, err := h.c.Prompt(h.ctx, "sh1", "hello", herd.PromptOptions{})
	if err != nil || p.Task == "" {
		t.Fatalf("prompt: %+v %v", p, err)
	}
	r, err := h.c.Wait(h.ctx, []string{"sh1"}, herd.WaitOptions{Timeout: testTimeout})
	if err != nil || r.Outcome != herd.OutcomeMatched || r.Results[0].State != herd.StateIdle || !slices.Contains(r.TasksEnded, p.Task) {
		t.Fatalf("wait for the shell's turn: %+v %v", r, err)
	}
	if task, err := h.c.Task(h.ctx, p.Task); err != nil || task.Open {
		t.Fatalf("the turn's task is still open after the wait: %+v %v", task, err)
	}
	// Nothing open, at rest: at once.
	if r, err := h.c.Wait(h.ctx, []string{"sh1"}, herd.WaitOptions{Timeout: testTimeout}); err != nil || r.Results[0].Outcome != herd.OutcomeMatched {
		t.Fatalf("wait on a member at rest: %+v %v", r, err)
	}
	// blocked ends it too.
	h.run("ask", askScript)
	h.wait("ask", herd.StateIdle)
	if _, err := h.c.Prompt(h.ctx, "ask", "go", herd.PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, err := h.c.Wait(h.ctx, []string{"ask"}, herd.WaitOptions{Timeout: testTimeout}); err != nil || r.Results[0].State != herd.StateBlocked {
		t.Fatalf("wait on a member that asks: %+v %v", r, err)
	}
}
