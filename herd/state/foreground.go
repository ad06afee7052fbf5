package state

import (
	"fmt"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd/vocab"
)

// Foreground is what the terminal's foreground process is doing, as the
// daemon reads it from the kernel through internal/platform (tcgetpgrp on
// the pty master, then the group's processes: on Linux their /proc stat,
// syscall and wchan; a platform that cannot tell gives no reading at all). It is the
// engine-independent signal for programs no screen rule knows (sh, a REPL,
// a script): a program blocked reading its terminal with the screen at rest
// waits for input (idle); one that runs, sleeps or waits on anything else
// is at work (working).
type Foreground struct {
	Pid  int    `json:"pid"`
	Comm string `json:"comm"`
	// Reading: blocked reading the terminal (read(2) on it, or waiting in
	// poll/select/epoll with the terminal in raw mode).
	Reading bool `json:"reading"`
	// How says what the process is doing, for explain ("is blocked
	// reading the terminal (wait_woken)").
	How string `json:"how"`
}

// Rule ids of readings taken from the foreground process.
const (
	RuleTTYReading = vocab.ReasonTTYReading
	RuleTTYRunning = vocab.ReasonTTYRunning
)

// RegionForeground is the Region of a foreground-process reading.
const RegionForeground = "foreground process"

// Re-probe backoff while a program runs without output (see SetProbe).
const (
	reprobeFirst = 250 * time.Millisecond
	reprobeMax   = 4 * time.Second
)

// SetProbe gives the tracker a way to read the terminal's foreground
// process. It is used only when no screen rule matched a settled screen and
// the engine has no hooks (rules and hooks win where they exist): the
// reading becomes idle (rule tty.reading) or working (tty.running), and
// explain names the process and what it does.
//
// A settle is the event that triggers a probe. One case has no event: a
// program that stops working and starts reading its terminal without
// printing anything (sleep 3; read x). While a probe says working the
// tracker's one timer re-probes, 250 ms after the reading and then twice as
// far apart each time up to 4 s: a few process reads, only while a plain
// program runs silently, and never while it reads its terminal. The end of
// a prompt's grace re-probes too, so the claim never hands over to a
// reading older than the prompt. Call before the first Observe.
//
// A program that prints nothing at all has no settle either: until the
// first settled screen the same re-probes read it.
func (tr *Tracker) SetProbe(probe func() *Foreground) {
	now := tr.now()
	tr.mu.Lock()
	tr.probe = probe
	if tr.screen == nil && tr.probeAppliesLocked() {
		tr.reprobeGap = reprobeFirst
		tr.reprobeAt = now.Add(reprobeFirst)
		tr.rearmLocked(now)
	}
	tr.mu.Unlock()
}

// probeAppliesLocked: a probe decides only for engines without hooks.
func (tr *Tracker) probeAppliesLocked() bool {
	return tr.probe != nil && (tr.engine == nil || (tr.engine.Hooks == nil && (tr.engine.Foreground == nil || *tr.engine.Foreground)))
}

// fromForeground turns an unmatched screen reading into the foreground
// process's reading.
func fromForeground(rd *Reading, fg *Foreground) {
	if fg == nil {
		return
	}
	if fg.Reading {
		rd.State, rd.Rule = Idle, RuleTTYReading
	} else {
		rd.State, rd.Rule = Working, RuleTTYRunning
	}
	rd.Kind, rd.Region = NoKind, RegionForeground
	rd.Evidence = fmt.Sprintf("%s (pid %d) %s", fg.Comm, fg.Pid, fg.How)
}

// isProbeReading says a reading came from the foreground process.
func isProbeReading(rd *Reading) bool {
	return rd != nil && strings.HasPrefix(rd.Rule, "tty.")
}
