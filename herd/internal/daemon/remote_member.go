package daemon

import (
	"context"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// remoteMember is a member reached over the network (remote.go: an A2A agent or a run
// endpoint). It has no process, pty, screen or tracker: its state is the remote's own claim. What
// it cannot do it refuses here, in one place, with the error the verb returns.
type remoteMember struct{ *member }

// notATerminal refuses a terminal-level verb on a remote member, naming what works instead.
func (r remoteMember) notATerminal(verb string) error {
	return exitcode.New(exitcode.Usage, "%s is a remote member (%s %s): it has no terminal for %s; use `mosh herd prompt %s TEXT`",
		r.name, r.remote.kind, r.remote.url, verb, r.name)
}

func (r remoteMember) terminal(verb string) (ptyMember, error) {
	return ptyMember{}, r.notATerminal(verb)
}

func (r remoteMember) acceptReport() error {
	return exitcode.New(exitcode.Usage, "%s is a remote member: its state is the remote's own claim, not a hook report's", r.name)
}

func (r remoteMember) acceptPrompt(p herd.PromptParams) error {
	if p.Continue != "" {
		return exitcode.New(exitcode.Usage, "%s is a remote member: a follow-up into its running task is not supported; send a new prompt", r.name)
	}
	r.d.learnToken(r.member, p.Token) // a queued prompt is sent later with it
	return nil
}

func (r remoteMember) blockedRefusal(kind string) error {
	return exitcode.New(exitcode.Usage, "%s is blocked (%s: the remote asks for input) — see its question with `mosh herd read %s`, answer with `mosh herd prompt %s TEXT --answer`", r.name, kind, r.name, r.name)
}

// promptNow sends the prompt over the network (remote.go); the task is minted first there too.
func (r remoteMember) promptNow(p herd.PromptParams, cur herd.Reading) (string, error) {
	task, err := r.d.promptRemote(r.member, p, cur)
	r.d.doneTyping(r.member)
	return task, err
}

// typeQueued: a remote member has no terminal: the queued task starts and its text is sent.
func (r remoteMember) typeQueued(qp *queuedPrompt) {
	d, m := r.d, r.member
	if err := d.startQueued(m, qp, nil, 0); err != nil {
		d.logger.Printf("queue: %s: cannot start %s: %v", m.name, qp.id, err)
		return
	}
	if err := d.sendRemote(m, qp.id, qp.text, ""); err != nil {
		d.logger.Printf("queue: %s: %s: %v", m.name, qp.id, err)
	}
}

// awaitQuestion: nothing to wait for, the remote takes the answer when it asks.
func (r remoteMember) awaitQuestion(context.Context, string) error { return nil }

// stopped: the member was removed, or the daemon is stopping.
func (r remoteMember) stopped() <-chan struct{} { return r.remote.ctx.Done() }

// kill: a remote member is not ours to end: its open task is canceled, its registration stays
// until `mosh herd remote remove`.
func (r remoteMember) kill() (bool, error) {
	if _, err := r.d.cancelRemote(r.member); err != nil {
		return false, err
	}
	return true, nil
}

// terminate ends the follow loop and any call in flight.
func (r remoteMember) terminate() {
	r.remote.cancel()
	<-r.remote.done
	r.remote.conn.Close()
}

func (r remoteMember) row() *herd.Member {
	m := r.member
	now := time.Now()
	m.d.state.lock()
	defer m.d.state.unlock()
	return &herd.Member{Name: m.name, Engine: m.engine, Kind: herd.KindRemote, State: m.reading.State, BlockedOn: m.reading.BlockedOn,
		Authority: m.reading.Authority, AgeMs: now.Sub(m.created).Milliseconds(), CreatedMs: m.created.UnixMilli(), Alive: true,
		Substrate: herd.KindRemote, Remote: m.remoteInfoLocked(now), StateSinceMs: m.stateSinceLocked().UnixMilli()}
}

func (r remoteMember) read(herd.ReadParams) herd.ReadResult { return r.d.readRemote(r.member) }

func (r remoteMember) explain(into *herd.ExplainResult) { r.d.explainRemote(r.member, into) }

func (r remoteMember) screenBase() ([]string, int) { return nil, 0 }

func (r remoteMember) artifactLocked(*openTask) ledger.Artifact {
	return ledger.Artifact{Text: r.remote.lastOutput, Source: ledger.SourceRemote}
}

func (r remoteMember) failedLocked() bool { return r.remote.failedLast }

func (r remoteMember) doctorNote(time.Time) (bool, string) {
	r.d.state.lock()
	defer r.d.state.unlock()
	if r.reading.State == herd.StateUnknown && r.remote.lastErr != "" {
		return false, r.remote.lastErr
	}
	return false, ""
}
