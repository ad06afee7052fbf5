package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/remote"
	"github.com/mosh-dev/mosh/herd/vocab"
	"github.com/mosh-dev/mosh/ledger"
)

// Remote members: an agent elsewhere on the roster, driven by the same verbs as a local one.
//
// A remote member is a *member with a remoteLink instead of a pty, a screen and a tracker. Its
// state is the remote's own claim (authority "remote"), taken by the daemon and published on the
// same event bus, so wait, prompt --wait and subscriptions follow it exactly as they follow a
// local member: callers never poll, the daemon does, once, for everyone.
//
// The follow loop (one goroutine per remote member):
//   - while an A2A task is open it reads tasks/get at once, then after 20 ms, 50 ms and
//     remotePollMin, backing off ×1.5 to remotePollMax while nothing changes (a change resets
//     it): a quick answer is seen in tens of milliseconds, a long turn costs one read per 2 s;
//   - otherwise it probes the remote every remoteProbeEvery (the card for A2A, a GET for /run),
//     retrying sooner after a failure;
//   - a `run` member's prompt is one POST, in flight on its own goroutine: the member reads
//     working until it returns, then done (the call's end; the endpoint claims nothing more).
//
// When the remote stops answering, the member reads unknown from the second failed call on,
// with the age of the last answer in the reading's rule. An open task ends failed (the error is
// its artifact) once the remote has been silent for remoteDownAfter and remoteDownCalls calls.
//
// The token (MOSH_REMOTE_<NAME>_TOKEN) lives in the daemon's memory only: a caller that has it in
// its environment passes it with `remote add` and every prompt; after a daemon restart the
// daemon's own environment is tried. It is never written to the manifest, a log or an answer.

const (
	remotePollMin    = 100 * time.Millisecond
	remotePollMax    = 2 * time.Second
	remoteProbeEvery = 30 * time.Second
	remoteRetryMin   = time.Second
	remoteDownAfter  = 2 * time.Second
	remoteDownCalls  = 3
	// remoteStaleCalls failed calls in a row make the member read unknown.
	remoteStaleCalls = 2
)

// remoteLink is the daemon's side of one remote member.
type remoteLink struct {
	conn     *remote.Conn
	kind     string
	url      string
	host     string
	inputKey string
	timeout  time.Duration

	ctx    context.Context // ends when the member is removed or the daemon stops
	cancel context.CancelFunc
	poke   chan struct{} // wakes the follow loop (a task was opened)
	done   chan struct{} // the follow loop returned

	// Guarded by d.state (the state lock).
	endpoint    string
	hasToken    bool
	observed    time.Time // the remote's last answer
	lastErr     string
	failures    int          // calls failed in a row
	silentSince time.Time    // first failure of the current run of failures
	said        herd.Reading // the remote's last claim, for the stale rule
	remoteTask  string       // the remote's id of the open (or last) A2A task
	remoteCtx   string
	remoteState string
	following   bool               // an A2A task is open remotely: the loop reads tasks/get
	sending     bool               // a message/send is in flight: a probe must not publish idle
	askedKey    string             // StatusKey of the question the member is blocked on
	answered    string             // StatusKey of the question last answered: reading it again is stale
	runCancel   context.CancelFunc // run: the POST in flight
	lastOutput  string             // the last answer (or question): what read returns
	failedLast  bool               // the last task ended failed (a wait then ends instead of hanging)
}

// hostOf is what ps shows for a remote: host[:port].
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

func (l *remoteLink) defaultTimeout() time.Duration {
	if l.timeout > 0 {
		return l.timeout
	}
	if l.kind == remote.KindRun {
		return remote.DefaultRunTimeout
	}
	return remote.DefaultCallTimeout
}

// newRemoteMember builds (but does not register) a remote member from its manifest row.
func (d *daemon) newRemoteMember(r manifestRow, token string) (*member, error) {
	timeout := time.Duration(r.TimeoutMs) * time.Millisecond
	conn, err := remote.Dial(remote.Config{Name: r.Name, Kind: r.RemoteKind, URL: r.URL, InputKey: r.InputKey, Token: token, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	kind := r.RemoteKind
	if kind == "" {
		kind = remote.KindA2A
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &remoteLink{conn: conn, kind: kind, url: r.URL, host: hostOf(r.URL), inputKey: r.InputKey, timeout: timeout,
		ctx: ctx, cancel: cancel, poke: make(chan struct{}, 1), done: make(chan struct{}), hasToken: token != ""}
	exited := make(chan struct{})
	close(exited)
	m := &member{d: d, name: r.Name, engine: kind, created: r.Created, remote: l,
		attached: map[*attachment]struct{}{}, readDone: exited, exitDone: exited, queueWake: make(chan struct{}, 1),
		reading: herd.Reading{State: herd.StateUnknown, Authority: herd.AuthorityRemote, Rule: "not probed yet", AtMs: time.Now().UnixMilli()}}
	m.kind = remoteMember{m}
	return m, nil
}

// registerRemote adds a built remote member to the roster and starts following it.
func (d *daemon) registerRemote(m *member) {
	d.mu.Lock()
	d.members[m.name] = m
	delete(d.remembered, m.name)
	d.mu.Unlock()
	d.withState(func() {
		d.bus.emitLocked(herd.Event{Type: herd.EventAdded, Name: m.name, State: m.reading.State, Authority: m.reading.Authority, AtMs: time.Now().UnixMilli()})
	})
	go d.followRemote(m)
	go d.pumpQueue(m)
}

// discard releases a member that was built but never registered (its loop never ran).
func (l *remoteLink) discard() {
	l.cancel()
	l.conn.Close()
	close(l.done)
}

// remoteRow is the manifest row of a remote member: how to reach it, never its token.
func remoteRow(m *member) manifestRow {
	l := m.remote
	return manifestRow{Name: m.name, Kind: herd.KindRemote, Engine: l.kind, Created: m.created, RemoteKind: l.kind, URL: l.url,
		InputKey: l.inputKey, TimeoutMs: l.timeout.Milliseconds()}
}

// ---- the follow loop ----

func (d *daemon) followRemote(m *member) {
	l := m.remote
	defer close(l.done)
	unchanged := 0 // task reads in a row that saw no change
	retry := remoteRetryMin
	first := time.Duration(0)
	d.withState(func() {
		if !l.observed.IsZero() && !l.following {
			first = remoteProbeEvery // `remote add` just probed it
		}
	})
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-l.poke:
			unchanged = 0
		case <-timer.C:
		}
		var following, inflight bool
		var tid string
		d.withState(func() { following, tid, inflight = l.following, l.remoteTask, l.runCancel != nil })
		var next time.Duration
		switch {
		case following:
			changed, ok := d.pollRemoteTask(m, tid)
			switch {
			case changed:
				unchanged = 0
			case ok:
				unchanged++
			default:
				unchanged += 2 // a failed read backs off faster
			}
			next = pollBackoff(unchanged)
		case inflight:
			next = remoteProbeEvery // the POST in flight is the probe
		default:
			unchanged = 0
			if d.probeRemote(m) {
				retry, next = remoteRetryMin, remoteProbeEvery
			} else {
				next = retry
				retry = min(retry*2, remoteProbeEvery)
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// pollEarly are the first waits after a send or a change: most remote turns that end quickly
// end within them.
var pollEarly = []time.Duration{20 * time.Millisecond, 50 * time.Millisecond}

// pollBackoff is the wait before the next tasks/get after n reads in a row saw no change:
// pollEarly, then remotePollMin, then ×1.5 each, capped at remotePollMax.
func pollBackoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	if n <= len(pollEarly) {
		return pollEarly[n-1]
	}
	d := remotePollMin
	for i := len(pollEarly) + 1; i < n && d < remotePollMax; i++ {
		d = d * 3 / 2
	}
	return min(d, remotePollMax)
}

// probeRemote checks the remote answers; an idle reachable remote keeps its last claim (done
// after a task) or reads idle.
func (d *daemon) probeRemote(m *member) bool {
	l := m.remote
	info, err := l.conn.Probe(l.ctx)
	if l.ctx.Err() != nil {
		return false
	}
	d.state.lock()
	defer d.state.unlock()
	return d.probedLocked(m, info, err, time.Now())
}

// probedLocked takes a probe's result, the follow loop's or a ping's. The caller holds the state
// lock.
func (d *daemon) probedLocked(m *member, info remote.Info, err error, now time.Time) bool {
	l := m.remote
	if err != nil {
		d.remoteFailedLocked(m, err, now)
		return false
	}
	l.probedOK(info, now)
	if l.busyLocked() {
		return true // the task's own calls say what state it is in
	}
	r := l.said
	if r.State == "" {
		r = l.idleReading(info, now)
	}
	r.AtMs = now.UnixMilli()
	d.remotePublishLocked(m, r, nil)
	return true
}

// probedOK records a probe the remote answered.
func (l *remoteLink) probedOK(info remote.Info, now time.Time) {
	if info.Endpoint != "" {
		l.endpoint = info.Endpoint
	}
	l.answeredLocked(now)
}

// idleReading is a reachable remote with no task open.
func (l *remoteLink) idleReading(info remote.Info, now time.Time) herd.Reading {
	return herd.Reading{State: herd.StateIdle, Authority: herd.AuthorityRemote, AtMs: now.UnixMilli(),
		Rule: fmt.Sprintf("%s answered (%s); no task open", l.host, ms(info.LatencyMs))}
}

// wake makes the follow loop read the task now (a task was opened, or may have ended).
func (l *remoteLink) wake() {
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

// busyLocked: a prompt is on its way or a task is open, so probes do not speak for the state.
func (l *remoteLink) busyLocked() bool { return l.following || l.sending || l.runCancel != nil }

func ms(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " ms" }

func (l *remoteLink) answeredLocked(now time.Time) {
	l.observed, l.failures, l.lastErr, l.silentSince = now, 0, "", time.Time{}
}

// remoteFailedLocked counts a failed call: unknown from the second one on, and an open task
// ends failed once the remote has been silent long enough. The caller holds the state lock.
func (d *daemon) remoteFailedLocked(m *member, err error, now time.Time) {
	l := m.remote
	l.failures++
	l.lastErr = err.Error()
	if l.silentSince.IsZero() {
		l.silentSince = now
	}
	if l.failures < remoteStaleCalls && !l.observed.IsZero() {
		return
	}
	rule := "the remote did not answer: " + l.lastErr
	if !l.observed.IsZero() {
		rule = fmt.Sprintf("the remote has not answered for %s (%s); the last it said was %s", since(l.observed, now), l.lastErr,
			stateLabelOf(l.said))
	}
	var end *remoteEnd
	if (l.following || l.runCancel != nil) && !l.sending && l.failures >= remoteDownCalls && now.Sub(l.silentSince) >= remoteDownAfter {
		end = &remoteEnd{state: ledger.StateFailed, note: "the remote stopped answering: " + l.lastErr, art: ledger.Artifact{Text: l.lastErr, Source: ledger.SourceError}}
		l.following = false
		l.failedLast = true
	}
	d.remotePublishLocked(m, herd.Reading{State: herd.StateUnknown, Authority: herd.AuthorityRemote, Rule: rule, AtMs: now.UnixMilli()}, end)
}

func since(t, now time.Time) string { return now.Sub(t).Round(100 * time.Millisecond).String() }

func stateLabelOf(r herd.Reading) string {
	if r.State == "" {
		return "nothing"
	}
	if r.BlockedOn != "" {
		return r.State + ":" + r.BlockedOn
	}
	return r.State
}

// pollRemoteTask reads the open A2A task once. changed: its state moved; ok: the remote answered.
func (d *daemon) pollRemoteTask(m *member, tid string) (changed, ok bool) {
	l := m.remote
	obs, err := l.conn.Get(l.ctx, tid)
	if l.ctx.Err() != nil {
		return false, false
	}
	now := time.Now()
	d.state.lock()
	defer d.state.unlock()
	if !l.following || l.remoteTask != tid {
		return true, true // a newer prompt or a cancel took over meanwhile
	}
	if errors.Is(err, remote.ErrTaskNotFound) {
		l.answeredLocked(now)
		l.following, l.failedLast = false, true
		note := fmt.Sprintf("the remote no longer knows task %s (it restarted or forgot it)", tid)
		d.remotePublishLocked(m, herd.Reading{State: herd.StateUnknown, Authority: herd.AuthorityRemote, Rule: note, AtMs: now.UnixMilli()},
			&remoteEnd{state: ledger.StateFailed, note: note, art: ledger.Artifact{Text: note, Source: ledger.SourceError}})
		return true, true
	}
	if err != nil {
		d.remoteFailedLocked(m, err, now)
		return false, false
	}
	l.answeredLocked(now)
	before := l.remoteState
	d.applyObservationLocked(m, obs, now)
	return obs.RemoteState != before, true
}

// remoteEnd is how a remote member's open task ends in the ledger.
type remoteEnd struct {
	state string // done | failed | canceled
	note  string
	art   ledger.Artifact
}

// applyObservationLocked publishes what the remote said about its task. The caller holds the
// state lock.
func (d *daemon) applyObservationLocked(m *member, obs remote.Observation, now time.Time) {
	l := m.remote
	if obs.TaskID != "" {
		l.remoteTask = obs.TaskID
	}
	if obs.ContextID != "" {
		l.remoteCtx = obs.ContextID
	}
	l.remoteState = obs.RemoteState
	r := herd.Reading{State: obs.State, BlockedOn: obs.BlockedOn, Authority: herd.AuthorityRemote, AtMs: now.UnixMilli(),
		Rule: fmt.Sprintf("the remote said %s", orWord(obs.RemoteState, obs.State))}
	if obs.TaskID != "" {
		r.Rule += " (task " + obs.TaskID + ")"
	}
	if r.State == "" {
		r.State = herd.StateWorking
	}
	var end *remoteEnd
	switch {
	case obs.Terminal:
		l.following = false
		l.lastOutput = obs.Output
		l.failedLast = obs.Failed
		r.State, r.BlockedOn = herd.StateDone, ""
		end = &remoteEnd{state: ledger.StateDone, note: "the remote task " + orWord(obs.RemoteState, "completed"),
			art: ledger.Artifact{Text: obs.Output, Source: ledger.SourceRemote}}
		switch {
		case obs.Failed:
			end.state = ledger.StateFailed
			msg := orWord(obs.Message, obs.Output)
			end.note = "the remote task " + orWord(obs.RemoteState, "failed") + ": " + clip(msg, 200)
			end.art = ledger.Artifact{Text: msg, Source: ledger.SourceError}
		case obs.Canceled:
			end.state = ledger.StateCanceled
		}
	case obs.State == herd.StateBlocked && obs.StatusKey != "" && obs.StatusKey == l.answered:
		// The question we answered, read before the agent took the answer up: still working.
		r.State, r.BlockedOn = herd.StateWorking, ""
		r.Rule = "the remote has the answer to its question; it has not taken it up yet"
	case obs.State == herd.StateBlocked:
		l.lastOutput = orWord(obs.Message, obs.Output)
		l.askedKey = obs.StatusKey
	case obs.StatusKey != l.answered:
		// The remote moved on from the question we answered (a status of its own, not the
		// question sent back with the answer, which sendRemote reads as working): a question
		// read from here on is a new one, even under the same key (a remote herd keeps one
		// status message id per task).
		l.answered = ""
	}
	l.said = r
	d.remotePublishLocked(m, r, end)
}

func orWord(s, alt string) string {
	if strings.TrimSpace(s) == "" {
		return alt
	}
	return s
}

// remotePublishLocked sets a remote member's reading, records the change against its open task
// and, with end, closes that task; then publishes the event. The caller holds the state lock.
func (d *daemon) remotePublishLocked(m *member, r herd.Reading, end *remoteEnd) {
	if m.removed {
		return
	}
	prev := m.reading
	ch := changed(prev, r)
	m.setReadingLocked(r, time.Now())
	if r.State == herd.StateIdle || r.State == herd.StateDone || end != nil {
		defer m.wakeQueue() // the prompt queue may move (queue.go)
	}
	t := m.task
	if !ch && (end == nil || t == nil) {
		return
	}
	ev := herd.Event{Type: herd.EventState, Name: m.name, State: r.State, BlockedOn: r.BlockedOn, Authority: r.Authority, Prev: prev.State, AtMs: r.AtMs}
	if t != nil {
		ev.Task = t.id
	}
	if ch && d.tasks != nil {
		d.lw.record(ledgerOp{member: m.name, tr: ledger.Transition{At: time.UnixMilli(r.AtMs), State: r.State, Kind: r.BlockedOn, Authority: r.Authority}})
	}
	if end != nil && t != nil && t.id != "" {
		m.task = nil
		m.lastClosed = &closedTask{id: t.id, hook: true}
		ev.TaskEnded, ev.TaskState = true, end.state
		if d.tasks != nil {
			id, e := t.id, *end
			tr := ledger.Transition{At: time.UnixMilli(r.AtMs), State: e.state, Authority: herd.AuthorityRemote, Note: e.note}
			d.lw.post(m.name, func() {
				if err := d.tasks.CloseTask(id, tr, e.art); err != nil {
					d.logger.Printf("ledger: close %s: %v", id, err)
				}
			})
		}
	}
	d.bus.emitLocked(ev)
}

// ---- prompt ----

// learnToken keeps a caller's token for m in memory (never on disk): later calls, polls included,
// use it.
func (d *daemon) learnToken(m *member, tok string) {
	if tok == "" {
		return
	}
	m.remote.conn.SetToken(tok)
	d.withState(func() {
		m.remote.hasToken = true
	})
}

// promptRemote sends a prompt to a remote member: the task is minted first (as for a local
// member), then message/send (A2A) or the POST (run, on its own goroutine).
func (d *daemon) promptRemote(m *member, p herd.PromptParams, cur herd.Reading) (string, error) {
	l := m.remote
	d.learnToken(m, p.Token)
	d.state.lock()
	busy := l.runCancel != nil
	resume := ""
	if cur.State == herd.StateBlocked && l.following {
		resume = l.remoteTask
		l.answered = l.askedKey
	}
	d.state.unlock()
	if busy {
		return "", exitcode.New(exitcode.Usage, "%s is still answering the previous prompt (a /run call in flight): wait for it (`mosh wait %s`) or cancel it (`mosh herd kill %s`)", m.name, m.name, m.name)
	}
	task, err := d.submitPrompt(m, p.Text, cur, p.Answer, p.By)
	if err != nil {
		return "", err
	}
	return task, d.sendRemote(m, task, p.Text, resume)
}

// sendRemote sends the prompt of task (minted, or started from the queue) to a remote member:
// message/send (A2A, resume names the task an answer continues) or the POST (run, on its own
// goroutine).
func (d *daemon) sendRemote(m *member, task, text, resume string) error {
	l := m.remote
	d.promptTyped(m, task)
	now := time.Now()
	d.withState(func() {
		l.failedLast = false
		l.sending = l.kind != remote.KindRun
		d.remotePublishLocked(m, herd.Reading{State: herd.StateWorking, Authority: herd.AuthorityRemote, AtMs: now.UnixMilli(),
			Rule: "prompt sent to " + l.host + "; waiting for its answer"}, nil)
	})

	if l.kind == remote.KindRun {
		ctx, cancel := context.WithCancel(l.ctx)
		d.withState(func() {
			l.runCancel = cancel
		})
		go d.runCall(m, ctx, cancel, text)
		return nil
	}
	obs, err := l.conn.Send(l.ctx, text, resume)
	now = time.Now()
	d.state.lock()
	defer d.state.unlock()
	l.sending = false
	if err != nil {
		d.promptFailedLocked(m, err, now, "the remote did not take the prompt")
		return remoteCallErr(m.name, err)
	}
	l.answeredLocked(now)
	l.following = !obs.Terminal
	if resume != "" && obs.State == herd.StateBlocked && (obs.StatusKey == "" || obs.StatusKey == l.answered) {
		// The answer to input-required comes back with the task as it was when the answer
		// arrived: the next tasks/get says whether the remote asks again.
		obs.State, obs.BlockedOn, obs.RemoteState = herd.StateWorking, "", "working"
	}
	if d.tasks != nil && obs.TaskID != "" {
		id := task
		d.lw.post(m.name, func() {
			if err := d.tasks.LinkRemote(id, obs.TaskID, obs.ContextID); err != nil {
				d.logger.Printf("ledger: link %s to %s: %v", id, obs.TaskID, err)
			}
		})
	}
	d.applyObservationLocked(m, obs, now)
	if l.following {
		l.wake()
	}
	return nil
}

// promptFailedLocked ends the task of a prompt whose call failed (what names the call): the
// member reads unknown when the remote did not answer, idle when it answered badly (it is there).
func (d *daemon) promptFailedLocked(m *member, err error, now time.Time, what string) {
	l := m.remote
	l.following, l.failedLast = false, true
	text := err.Error()
	l.lastErr = text
	r := herd.Reading{State: herd.StateUnknown, Authority: herd.AuthorityRemote, Rule: what + ": " + text, AtMs: now.UnixMilli()}
	if remote.IsUnreachable(err) {
		l.failures++
	} else {
		l.observed = now
		r.State = herd.StateIdle
	}
	d.remotePublishLocked(m, r, &remoteEnd{state: ledger.StateFailed, note: what + ": " + text,
		art: ledger.Artifact{Text: text, Source: ledger.SourceError}})
}

// remoteCallErr gives a remote failure its exit code: auth and refused input are the caller's
// to fix (1), an unreachable or misbehaving remote is infrastructure (5).
func remoteCallErr(name string, err error) error {
	var ae *remote.AuthError
	if errors.As(err, &ae) {
		return exitcode.New(exitcode.Usage, "%s", ae.Error())
	}
	if exitcode.Of(err) != exitcode.Script && exitcode.Of(err) != 0 {
		return err
	}
	var named *remote.CallError
	if errors.As(err, &named) && named.Remote == name {
		return &exitcode.Error{Code: exitcode.Infra, Err: err} // herd/remote already names it
	}
	return &exitcode.Error{Code: exitcode.Infra, Err: fmt.Errorf("remote %s: %w", name, err)}
}

// runCall is one POST to a run member, on its own goroutine.
func (d *daemon) runCall(m *member, ctx context.Context, cancel context.CancelFunc, text string) {
	defer cancel()
	l := m.remote
	obs, err := l.conn.Send(ctx, text, "")
	now := time.Now()
	d.state.lock()
	defer d.state.unlock()
	l.runCancel = nil
	switch {
	case err != nil && ctx.Err() != nil && l.ctx.Err() == nil:
		// Canceled by kill: the task ends canceled, the endpoint is still there.
		l.said = herd.Reading{State: herd.StateDone, Authority: herd.AuthorityRemote}
		d.remotePublishLocked(m, herd.Reading{State: herd.StateDone, Authority: herd.AuthorityRemote, AtMs: now.UnixMilli(), Rule: "the /run call was canceled"},
			&remoteEnd{state: ledger.StateCanceled, note: "canceled: the /run call was abandoned", art: ledger.Artifact{Text: "canceled", Source: ledger.SourceError}})
	case l.ctx.Err() != nil:
		// The member was removed or the daemon is stopping: forget/shutdown close the task.
	case err != nil:
		l.said = herd.Reading{}
		d.promptFailedLocked(m, err, now, "the /run call failed")
	default:
		l.answeredLocked(now)
		d.applyObservationLocked(m, obs, now)
	}
}

// cancelRemote cancels a remote member's open task (kill): tasks/cancel for A2A, abandoning the
// POST for run. It returns the remote task id canceled ("" when nothing was open).
func (d *daemon) cancelRemote(m *member) (string, error) {
	l := m.remote
	var following bool
	var tid string
	var runCancel context.CancelFunc
	d.withState(func() { following, tid, runCancel = l.following, l.remoteTask, l.runCancel })
	if runCancel != nil {
		runCancel()
		return "run", nil
	}
	if !following {
		return "", nil
	}
	obs, err := l.conn.Cancel(l.ctx, tid)
	now := time.Now()
	d.state.lock()
	defer d.state.unlock()
	if !l.following || l.remoteTask != tid {
		return tid, nil
	}
	switch {
	case errors.Is(err, remote.ErrAlreadyFinished):
		// It finished meanwhile: the next poll reads how.
		l.wake()
		return "", nil
	case err != nil:
		return "", remoteCallErr(m.name, err)
	}
	l.answeredLocked(now)
	if !obs.Terminal {
		obs.Terminal, obs.Canceled, obs.RemoteState = true, true, "canceled"
	}
	d.applyObservationLocked(m, obs, now)
	return tid, nil
}

// ---- read / explain / roster ----

func (d *daemon) readRemote(m *member) herd.ReadResult {
	d.state.lock()
	defer d.state.unlock()
	return herd.ReadResult{Name: m.name, State: m.reading.State, BlockedOn: m.reading.BlockedOn, Authority: m.reading.Authority,
		Screen: m.remote.lastOutput, Title: m.remote.kind + " " + m.remote.url}
}

func (d *daemon) explainRemote(m *member, r *herd.ExplainResult) {
	l := m.remote
	d.state.lock()
	defer d.state.unlock()
	r.State, r.BlockedOn, r.Authority = m.reading.State, m.reading.BlockedOn, m.reading.Authority
	rd := m.reading
	r.Remote = &rd
	r.Decided, r.ReasonCode = rd.Rule, herd.ReasonRemoteClaim
	if !l.observed.IsZero() {
		r.Decided += fmt.Sprintf(" — the remote last answered %s ago", since(l.observed, time.Now()))
	}
	r.Title = l.kind + " " + l.url
	if l.lastOutput != "" {
		lines := strings.Split(strings.TrimRight(l.lastOutput, "\n"), "\n")
		if len(lines) > 12 {
			lines = lines[len(lines)-12:]
		}
		r.Bottom = lines
	}
}

// remoteInfoLocked is the remote part of a ps row. The caller holds the state lock.
func (m *member) remoteInfoLocked(now time.Time) *herd.RemoteInfo {
	l := m.remote
	ri := &herd.RemoteInfo{Kind: l.kind, URL: l.url, Host: l.host, Endpoint: l.endpoint, TimeoutMs: l.defaultTimeout().Milliseconds(),
		RemoteState: l.remoteState, RemoteTask: l.remoteTask, Token: l.hasToken, TokenVar: vocab.RemoteTokenVar(m.name), Error: l.lastErr}
	if l.kind == remote.KindRun {
		ri.InputKey = l.inputKey
		if ri.InputKey == "" {
			ri.InputKey = remote.DefaultInputKey
		}
	}
	if !l.observed.IsZero() {
		ri.ObservedMs, ri.AgeMs = l.observed.UnixMilli(), now.Sub(l.observed).Milliseconds()
	}
	return ri
}

// ---- the remote.* methods ----

func hRemoteAdd(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.RemoteAddParams
	if err := decode(herd.MethodRemoteAdd, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if err := herd.CheckName(p.Name); err != nil {
		return nil, err
	}
	if p.TimeoutMs < 0 {
		return nil, exitcode.New(exitcode.Usage, "--timeout must not be negative")
	}
	kind := p.Kind
	if kind == "" {
		kind = remote.KindA2A
	}
	d.mu.Lock()
	_, taken := d.members[p.Name]
	_, old := d.remembered[p.Name]
	if taken || old || d.reserved[p.Name] {
		d.mu.Unlock()
		return nil, exitcode.New(exitcode.Usage, "a member named %s already exists: pick another name, or `mosh herd remote remove %s` / `mosh herd kill %s` first", p.Name, p.Name, p.Name)
	}
	d.reserved[p.Name] = true
	d.mu.Unlock()
	defer d.release(p.Name)

	row := manifestRow{Name: p.Name, Kind: herd.KindRemote, Engine: kind, Created: time.Now(), RemoteKind: kind, URL: p.URL, InputKey: p.InputKey, TimeoutMs: p.TimeoutMs}
	m, err := d.newRemoteMember(row, p.Token)
	if err != nil {
		return nil, err
	}
	info, perr := m.remote.conn.Probe(ctx)
	res := herd.RemoteAddResult{Probe: herd.RemotePing{Name: p.Name, OK: perr == nil, LatencyMs: info.LatencyMs, Endpoint: info.Endpoint, Agent: info.Name}}
	if perr != nil {
		res.Probe.Error = perr.Error()
		if !p.Force {
			m.remote.discard()
			var ae *remote.AuthError
			if errors.As(perr, &ae) {
				return nil, exitcode.New(exitcode.Usage, "%s — nothing registered", ae.Error())
			}
			return nil, exitcode.New(exitcode.Infra, "%s — nothing registered; check the URL, or pass --force to register it anyway", res.Probe.Error)
		}
	} else {
		// Not registered yet: nobody else sees the member, so no lock and no event.
		now := time.Now()
		m.remote.probedOK(info, now)
		m.reading = m.remote.idleReading(info, now)
		res.Card = info.Card
	}
	var putErr error
	d.lw.do(p.Name, func() {
		putErr = d.manifest.Put(remoteRow(m))
		if putErr == nil && d.tasks != nil {
			if _, err := d.tasks.Reconcile(p.Name, time.Now(), "the name was registered again as a remote member"); err != nil {
				d.logger.Printf("ledger: reconcile %s: %v", p.Name, err)
			}
		}
	})
	if putErr != nil {
		m.remote.discard()
		return nil, exitcode.New(exitcode.Infra, "cannot record %s in the manifest: %v (see `mosh herd doctor`)", p.Name, putErr)
	}
	d.registerRemote(m)
	d.logger.Printf("added remote %s (%s %s)", m.name, m.remote.kind, m.remote.url)
	res.Member = *d.row(m)
	return res, nil
}

// remoteByName returns the named member, which must be remote.
func (d *daemon) remoteByName(name string) (*member, error) {
	m, err := d.lookup(name)
	if err != nil {
		return nil, err
	}
	if _, ok := m.kind.(remoteMember); !ok {
		return nil, exitcode.New(exitcode.Usage, "%s is a local member, not a remote one: see `mosh herd remote list`", name)
	}
	return m, nil
}

func hRemoteList(ctx context.Context, sc *serverConn, _ json.RawMessage) (any, error) {
	out := []herd.Member{}
	for _, r := range sc.d.list() {
		if r.Kind == herd.KindRemote {
			out = append(out, r)
		}
	}
	return herd.RemoteListResult{Members: out}, nil
}

func hRemoteRemove(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.RemoteNameParams
	if err := decode(herd.MethodRemoteRemove, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	m, err := d.remoteByName(p.Name)
	if err != nil {
		return nil, err
	}
	res := herd.RemoteRemoveResult{Removed: m.name}
	if tid, err := d.cancelRemote(m); err == nil {
		res.Canceled = tid
	} else {
		d.logger.Printf("remote %s: cancel before remove: %v", m.name, err)
	}
	m.terminate()
	d.forget(m.name)
	d.logger.Printf("removed remote %s", m.name)
	return res, nil
}

func hRemotePing(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.RemoteNameParams
	if err := decode(herd.MethodRemotePing, params, &p); err != nil {
		return nil, err
	}
	m, err := sc.d.remoteByName(p.Name)
	if err != nil {
		return nil, err
	}
	sc.d.learnToken(m, p.Token)
	info, perr := m.remote.conn.Probe(ctx)
	res := herd.RemotePing{Name: m.name, OK: perr == nil, LatencyMs: info.LatencyMs, Endpoint: info.Endpoint, Agent: info.Name}
	if perr != nil {
		res.Error = perr.Error()
	}
	sc.d.withState(func() {
		sc.d.probedLocked(m, info, perr, time.Now())
	})
	return res, nil
}

func hRemoteCard(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.RemoteNameParams
	if err := decode(herd.MethodRemoteCard, params, &p); err != nil {
		return nil, err
	}
	m, err := sc.d.remoteByName(p.Name)
	if err != nil {
		return nil, err
	}
	if m.remote.kind != remote.KindA2A {
		return nil, exitcode.New(exitcode.Usage, "%s is a /run endpoint: only A2A members publish a card", m.name)
	}
	sc.d.learnToken(m, p.Token)
	info, err := m.remote.conn.Probe(ctx)
	if err != nil {
		return nil, remoteCallErr(m.name, err)
	}
	return herd.RemoteCardResult{Name: m.name, Card: info.Card}, nil
}

// reviveRemote puts a remote member from the manifest back on the roster after a daemon start.
// Its token comes from the daemon's environment until a caller passes one. An A2A task that was
// open when the daemon stopped is followed again; a /run call died with the daemon.
func (d *daemon) reviveRemote(r manifestRow) {
	m, err := d.newRemoteMember(r, os.Getenv(vocab.RemoteTokenVar(r.Name)))
	if err != nil {
		d.logger.Printf("remote %s: cannot restore: %v (`mosh herd remote remove %s` forgets it)", r.Name, err, r.Name)
		d.remembered[r.Name] = r
		return
	}
	if d.tasks != nil {
		if t, err := d.tasks.OpenTask(r.Name); err == nil && t.ID != "" {
			if m.remote.kind == remote.KindA2A && t.RemoteTaskID != "" {
				m.task = &openTask{id: t.ID, typed: true}
				m.remote.remoteTask, m.remote.remoteCtx, m.remote.following = t.RemoteTaskID, t.RemoteContextID, true
				m.reading = herd.Reading{State: herd.StateWorking, Authority: herd.AuthorityRemote, AtMs: time.Now().UnixMilli(),
					Rule: "following task " + t.RemoteTaskID + " again after a daemon restart"}
			} else if _, err := d.tasks.Reconcile(r.Name, time.Now(), "the herd daemon stopped while the remote call was in flight"); err != nil {
				d.logger.Printf("ledger: reconcile %s: %v", r.Name, err)
			}
		}
	}
	d.registerRemote(m)
}
