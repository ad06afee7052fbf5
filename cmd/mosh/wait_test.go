package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Issue 11: `wait a b --state idle --timeout 1s` printed "timed out waiting for  (state )", a
// gone member among several " is gone", and `wait ghost` did not say there is no such member.
func TestWaitMessagesNameTheMembers(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "a", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "b", "--", "/bin/sh", "-c", "exec cat")

	_, errs := e.expect(2, "wait", "a", "b", "--state", "working", "--timeout", "300ms")
	for _, want := range []string{"timed out waiting for a (state ", "b (state ", "to reach working"} {
		if !strings.Contains(errs, want) {
			t.Errorf("wait a b timeout: %q lacks %q", errs, want)
		}
	}
	if strings.Contains(errs, "for  (") || strings.Contains(errs, "(state )") {
		t.Errorf("wait a b timeout names nobody: %q", errs)
	}
	// Without --state: a at rest with no task open answers at once; s, busy in a command that
	// never reads its terminal, times out naming what the wait was for.
	e.expect(0, "wait", "a", "--timeout", "30s")
	e.ok("herd", "run", "--name", "s", "--", "/bin/sh", "-c", "sleep 600")
	_, errs = e.expect(2, "wait", "s", "--timeout", "300ms")
	if !strings.Contains(errs, "timed out waiting for s (state ") || !strings.Contains(errs, "to reach the end of its turn or blocked") {
		t.Errorf("wait s timeout: %q", errs)
	}

	_, errs = e.expect(3, "wait", "ghost")
	if !strings.Contains(errs, "no member named ghost") {
		t.Errorf("wait ghost: %q", errs)
	}
	_, errs = e.expect(3, "wait", "a", "ghost", "--state", "working", "--timeout", "30s")
	if !strings.Contains(errs, "no member named ghost") || strings.HasPrefix(errs, "mosh:  is gone") {
		t.Errorf("wait a ghost: %q", errs)
	}

	// A member killed while several are waited on is named (how depends on whether the wait
	// saw its process end, its removal, or only its absence).
	type waitEnd struct {
		errs string
		code int
	}
	done := make(chan waitEnd, 1)
	go func() {
		_, errs, code := e.run("wait", "a", "b", "--state", "working", "--timeout", "60s")
		done <- waitEnd{errs, code}
	}()
	e.waitForClients(1)
	e.ok("kill", "b")
	end := <-done
	named := false
	for _, how := range []string{"b went away during the wait", "no member named b", "b ended in state "} {
		named = named || strings.Contains(end.errs, how)
	}
	if end.code != 3 || !named {
		t.Errorf("wait a b with b killed: exit %d, %q", end.code, end.errs)
	}
}

// Ctrl-C during a wait says so and exits 130, not "context canceled".
func TestWaitInterruptedSaysSo(t *testing.T) {
	e := newHerdEnv(t)
	e.ok("herd", "run", "--name", "a", "--", "/bin/sh", "-c", "exec cat")
	cmd := exec.Command(e.mosh, "wait", "a", "--state", "working", "--timeout", "60s")
	cmd.Env, cmd.Dir = e.env, e.home
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.waitForClients(1)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("wait after Ctrl-C: %v, want exit 130 (stderr %q)", err, errb.String())
	}
	if got := errb.String(); got != "mosh: interrupted\n" {
		t.Fatalf("wait after Ctrl-C printed %q, want our message", got)
	}
}
