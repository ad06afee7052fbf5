package herd

import (
	"context"
	"fmt"
	"strings"

	"github.com/mosh-dev/mosh/exitcode"
)

// waitError is the exit-coded error of a wait that did not match (nil when it matched). It
// names every member that kept the wait from matching, with its state and the states wanted:
// timeout → 2; gone or ended → 3. A name decided gone at the start of the wait (Seq 0) that the
// roster does not list never existed: "no member named X", as every other verb says.
func (c *Client) waitError(ctx context.Context, r *WaitResult, states []string) error {
	code := exitcode.Gone
	switch r.Outcome {
	case OutcomeMatched, "":
		return nil
	case OutcomeTimeout:
		code = exitcode.Timeout
	}
	want := strings.Join(states, ",")
	if want == "" {
		want = "the end of its turn or blocked"
	}
	var timedOut, ended, gone, maybeAbsent []string
	for _, o := range r.Results {
		label := o.State
		if o.BlockedOn != "" {
			label += ":" + o.BlockedOn
		}
		switch o.Outcome {
		case OutcomeTimeout:
			timedOut = append(timedOut, fmt.Sprintf("%s (state %s)", o.Name, label))
		case OutcomeEnded:
			if o.ExitCode != nil { // its process died: say so, with the exit code
				ended = append(ended, fmt.Sprintf("%s ended in state gone: its process exited with code %d%s (`mosh herd read %s` shows its last screen)", o.Name, *o.ExitCode, ExitReasonSuffix(o.ExitReason), o.Name))
				continue
			}
			ended = append(ended, fmt.Sprintf("%s ended in state %s without reaching %s", o.Name, label, want))
		case OutcomeGone:
			if o.Seq == 0 {
				maybeAbsent = append(maybeAbsent, o.Name)
			} else {
				gone = append(gone, o.Name+" went away during the wait (killed or forgotten)")
			}
		}
	}
	var absent []string
	if len(maybeAbsent) > 0 {
		listed := map[string]bool{}
		if ms, err := c.List(ctx); err == nil {
			for _, m := range ms {
				listed[m.Name] = true
			}
		}
		for _, n := range maybeAbsent {
			if listed[n] {
				gone = append(gone, n+" is gone")
			} else {
				absent = append(absent, n)
			}
		}
	}
	var parts []string
	if len(absent) > 0 {
		parts = append(parts, "no member named "+strings.Join(absent, ", "))
	}
	parts = append(parts, gone...)
	parts = append(parts, ended...)
	if len(timedOut) > 0 {
		parts = append(parts, fmt.Sprintf("timed out waiting for %s to reach %s", strings.Join(timedOut, ", "), want))
	}
	if len(parts) == 0 { // a result without per-name outcomes: say what the daemon said
		parts = append(parts, "the wait ended "+r.Outcome)
	}
	msg := strings.Join(parts, "; ")
	if len(absent) > 0 || len(gone) > 0 {
		msg += ": see `mosh ps`"
	}
	return exitcode.New(code, "%s", msg)
}

// ExitReasonSuffix renders an exit reason (a process's last screen lines) for a one-line message:
// ": line 1 ⏎ line 2", or "" when there is none.
func ExitReasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + strings.ReplaceAll(reason, "\n", " ⏎ ")
}
