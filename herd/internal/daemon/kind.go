package daemon

import (
	"context"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/ledger"
)

// memberKind is what a member does that depends on where it runs: a process on a pty of this
// daemon (ptyMember) or an agent reached over the network (remoteMember, remote_member.go). The
// daemon's verbs call it and never branch on the kind; a kind that cannot do something refuses
// it in its own implementation, with the error the verb returns.
//
// Both kinds share the member record (name, reading, tasks, the prompt queue: member.go), so the
// queue and the honest endings of tasks work alike for both; what differs is how a prompt gets
// in, what the member shows, how it ends, and what a task comes back with.
type memberKind interface {
	// row renders the member as a ps row.
	row() *herd.Member
	// read is what the member shows: the last lines of its screen, or the remote's last answer.
	read(p herd.ReadParams) herd.ReadResult
	// explain fills in why the member reads its state.
	explain(r *herd.ExplainResult)

	// acceptPrompt refuses what this kind cannot take of a prompt, before anything is queued,
	// recorded or typed (and takes what a later send needs, e.g. a remote's token).
	acceptPrompt(p herd.PromptParams) error
	// blockedRefusal is the error of a prompt to a member blocked on a question (kind is its
	// sub-kind) that is neither an answer nor queued.
	blockedRefusal(kind string) error
	// promptNow sends a prompt at once (the member is at rest, or --now, or an answer): the task
	// is minted before it goes. The caller set m.typing; promptNow ends it.
	promptNow(p herd.PromptParams, cur herd.Reading) (task string, err error)
	// typeQueued starts a queued prompt's task and sends its text (queue.go); the caller ends
	// the typing.
	typeQueued(qp *queuedPrompt)
	// awaitQuestion holds an answer until the engine can take it (answer.go).
	awaitQuestion(ctx context.Context, verb string) error
	// stopped is closed once no prompt can reach the member any more (the queue stops pumping).
	stopped() <-chan struct{}

	// terminal is the member's terminal, for attach, send-keys and resize; a member without one
	// refuses verb.
	terminal(verb string) (ptyMember, error)
	// acceptReport refuses a hook report for a member whose state is not a hook's to say.
	acceptReport() error
	// interrupt stops the member's turn without ending the member (interrupt.go): the engines
	// table's keys for a terminal, a remote's task canceled at the remote.
	interrupt(ctx context.Context, grace time.Duration, r *herd.InterruptResult) error
	// kill ends the member for `herd kill`: the process is killed and the member forgotten, or,
	// for a member that is not ours to end, its open task is canceled (canceled true).
	kill() (canceled bool, err error)
	// terminate ends the member when the daemon stops or forgets it.
	terminate()

	// screenBase is what the member showed when a prompt was accepted (the artifact is what
	// appeared since): screen lines and history length; none for a member without a screen.
	screenBase() (lines []string, hist int)
	// artifactLocked is what task t came back with when no hook supplied the engine's own last
	// message. The caller holds the state lock.
	artifactLocked(t *openTask) ledger.Artifact
	// failedLocked: the member's last task failed, so a wait on it ends instead of hanging on a
	// state that will not come. The caller holds the state lock.
	failedLocked() bool
	// doctorNote is what doctor says about the member: a stale hook report, or why it does not
	// answer ("" when it does).
	doctorNote(now time.Time) (stale bool, unanswered string)
}

// ptyMember is a member whose process runs on a pty of this daemon (member.go): it has a
// screen, a state tracker and a terminal.
type ptyMember struct{ *member }

func (p ptyMember) terminal(string) (ptyMember, error) { return p, nil }

func (p ptyMember) acceptPrompt(herd.PromptParams) error { return nil }

func (p ptyMember) blockedRefusal(kind string) error {
	return exitcode.New(exitcode.Usage, "%s is blocked (%s) — answer with `mosh herd send-keys %s 1` or pass --answer (without --now the prompt waits in its queue)", p.name, kind, p.name)
}

func (p ptyMember) promptNow(pp herd.PromptParams, cur herd.Reading) (string, error) {
	return p.d.typeNow(p.member, pp.Text, cur, pp.Answer, pp.By)
}

func (p ptyMember) stopped() <-chan struct{} { return p.exitDone }

func (p ptyMember) acceptReport() error { return nil }

func (p ptyMember) kill() (bool, error) {
	p.d.withState(func() {
		p.killing = true
	})
	p.terminate()
	p.d.forget(p.name)
	return false, nil
}

func (p ptyMember) screenBase() ([]string, int) {
	return p.scr.Snapshot().Lines, p.scr.HistoryLen()
}

func (p ptyMember) artifactLocked(t *openTask) ledger.Artifact {
	return ledger.Artifact{Text: screenDelta(p.member, t), Source: ledger.SourceScreen}
}

func (p ptyMember) failedLocked() bool { return p.lastClosed != nil && p.lastClosed.failed }

func (p ptyMember) doctorNote(now time.Time) (bool, string) {
	_, _, hook := p.trk.Readings(now)
	exited, _ := p.d.exitedOf(p.member)
	return hook != nil && exited, ""
}
