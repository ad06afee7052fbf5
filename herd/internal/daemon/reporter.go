package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/internal/platform"
)

// Which reports are a member's own.
//
// Hooks report by MOSH_HERD_NAME, which every process inside a member inherits, including an
// engine a tool started there (a Claude Code Bash tool running `claude -p …`): its
// UserPromptSubmit and Stop would report as the parent's. Two checks keep a member's state its
// own engine's:
//
//   - The nonce: each launch gets MOSH_HERD_NONCE; Client.Report sends it along. A report whose
//     nonce is another launch's (an orphan of an earlier member of the same name) is ignored.
//   - The engine process: the daemon knows the reporting process (the socket's peer) and walks
//     its parent chain. When the chain passes through the member's process, the reporting
//     engine is the nearest ancestor that is not a shell (a hook runs as `sh -c …` under the
//     engine). The first such engine to report is pinned as the member's engine; a later report
//     from an engine that descends from the pinned one through a shell (a tool's shell ran it)
//     is a nested agent's and is ignored — a helper process the engine started directly is the
//     engine's own. If the pinned process is gone (a wrapper script started the engine again),
//     the next reporter is pinned.
//
// A report from outside the member's process tree with no nonce (a person or a script
// reporting by name) is taken as before. Ignored reports are logged and kept for explain.

// maxIgnored is how many ignored reports a member keeps for explain.
const maxIgnored = 8

// runners are programs that stand between an engine and its hook command, not engines.
var runners = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ash": true, "ksh": true, "mksh": true,
	"fish": true, "busybox": true, "env": true, "nohup": true, "timeout": true, "nice": true, "xargs": true}

func newNonce() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// foreignReport says why a report is not m's own ("" when it is). peer is the reporting
// process (0: unknown).
func (d *daemon) foreignReport(m *member, nonce string, peer int) string {
	if nonce != "" && m.nonce != "" && nonce != m.nonce {
		return fmt.Sprintf("it came from another launch of %s (its %s differs from this member's)", m.name, herd.EnvNonce)
	}
	if peer <= 0 || m.pid <= 0 {
		return ""
	}
	chain := platform.Ancestry(peer) // the reporter first, then its parents
	top := -1
	for i, st := range chain {
		if st.Pid == m.pid {
			top = i
			break
		}
	}
	if top < 0 {
		return "" // not inside the member: a report by name from elsewhere
	}
	engine := chain[top]
	for _, st := range chain[1 : top+1] {
		if !runners[st.Comm] {
			engine = st
			break
		}
	}
	m.reportMu.Lock()
	defer m.reportMu.Unlock()
	pinned := m.enginePid
	switch {
	case pinned == 0 || pinned == engine.Pid:
	case inChain(chain, pinned, engine.Pid) && !shellBetween(chain, engine.Pid, pinned):
		// A helper process of the engine itself (no tool shell between them): the same engine.
		return ""
	case inChain(chain, pinned, engine.Pid):
		return fmt.Sprintf("it came from a nested engine: %s (pid %d) runs inside %s's own engine (pid %d), as a tool started it",
			engine.Comm, engine.Pid, m.name, pinned)
	case !alive(pinned):
		// The pinned engine is gone (a wrapper started it again): the reporter takes its place.
	default:
		return "" // a sibling of the pinned engine inside the member: taken, not pinned
	}
	if m.enginePid != engine.Pid {
		m.enginePid = engine.Pid
		d.logger.Printf("%s: hooks of %s (pid %d) report for this member", m.name, engine.Comm, engine.Pid)
	}
	return ""
}

// shellBetween says whether a shell (a runner) sits strictly between below and above in chain
// (nearest first): a tool's shell that started a nested engine.
func shellBetween(chain []platform.Proc, below, above int) bool {
	in := false
	for _, st := range chain {
		switch {
		case st.Pid == below:
			in = true
		case st.Pid == above:
			return false
		case in && runners[st.Comm]:
			return true
		}
	}
	return false
}

// inChain says whether pid is an ancestor of below in chain (nearest first).
func inChain(chain []platform.Proc, pid, below int) bool {
	seen := false
	for _, st := range chain {
		if st.Pid == below {
			seen = true
			continue
		}
		if seen && st.Pid == pid {
			return true
		}
	}
	return false
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// noteIgnored logs an ignored report and keeps it for explain.
func (d *daemon) noteIgnored(m *member, state string, payload json.RawMessage, peer int, why string) {
	var ev struct {
		Event string `json:"hook_event_name"`
	}
	if len(payload) > 0 {
		_ = json.Unmarshal(payload, &ev)
	}
	d.logger.Printf("%s: ignored a report (%s %s) from pid %d: %s", m.name, orDash(ev.Event), state, peer, why)
	d.withState(func() {
		m.ignored = append(m.ignored, herd.IgnoredReport{AtMs: time.Now().UnixMilli(), Event: ev.Event, State: state, Pid: peer, Why: why})
		if len(m.ignored) > maxIgnored {
			m.ignored = m.ignored[len(m.ignored)-maxIgnored:]
		}
	})
}
