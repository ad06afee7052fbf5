package daemon

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/ledger"
)

// How a prompt becomes a task and how the task ends (the daemon's side of the ledger).
//
// submitPrompt is the one code path every prompt takes (herd prompt, the builtins, the A2A server
// all call the prompt method): it mints the task before the first key is typed. A prompt that
// answers a blocked member on purpose (answer:true) while that member has an open task joins that
// task instead (its answer is recorded as a note on the blocked state): the question belongs to
// the task that asked it, as in A2A's input-required.
//
// Every fused state change is recorded, in order, with time, state, sub-kind and authority, and
// linked to the member's open task. A blocked state is a transition, never an end: the task
// stays open until the member is answered and finishes. After the prompt was typed, a task ends at
// the first of:
//   - done from a hook (Stop, StopFailure, AfterAgent…: the engine says its turn is over), once
//     the task was taken up (below);
//   - done or idle on the screen once the task was taken up (the engine picked the prompt up and
//     put it down): an engine that goes idle without ever saying done ends its task as idle. For
//     a member whose engine reports hooks (or has them installed), the screen's end waits
//     for the engine's own done, the engines table's hookGraceMs at most: the screen often
//     clears its spinner before the Stop hook's report arrives (a hook is a process; on a loaded machine it lags), and the hook
//     carries the engine's final message. Without it by then, the screen's word ends the task;
//   - the process exiting (done, authority runtime);
//   - the next prompt (the old task closes with the member's state then, note "superseded");
//   - kill or prune of the member, or a read that finds its member stopped (state gone).
//
// Taken up: for a member whose engine reports hooks, only the engine's turn-start hook
// (UserPromptSubmit, agent_start…: turnStart in the engines table) or a blocked hook says so —
// a tool hook of the previous turn arriving late, the screen (the typed prompt can sit in the
// input box under the old turn's done line and a spinner title) and the daemon's own prompt
// claim do not. A member with no hook yet goes by what it shows (working or blocked on the
// screen, or — unless the herd's hooks are installed for it — the prompt claim). A done hook that comes before its task was taken up (nor shown
// working) is the previous turn's: it becomes that task's artifact, not this one's end.
//
// The artifact is the engine's own final message when a hook supplied one during the task (or
// right after the screen closed it, before the next prompt), else the text that appeared since
// the prompt: the history lines and screen lines that were not on the screen when it was typed
// (engines in the alternate screen leave no history, so that is the screen delta). The ledger
// keeps its tail, 8000 characters, with truncated and the original length.

// openTask is the ledger task of a member's last prompt, until an end closes it. Guarded by the
// state lock (d.state).
type openTask struct {
	id        string   // "" while the mint is in flight
	baseHist  int      // history length when the prompt was typed
	baseLines []string // the visible screen then
	typed     bool     // the prompt's keys were written; ends count from here
	sawActive bool     // the prompt was taken up (see the top of this file)
	// started: the engine's turn-start hook came after the prompt's keys went in.
	started bool
	// screenActive: the screen showed working or blocked after typing.
	screenActive bool
	// endPending: the screen ended the turn and the task waits for the engine's done hook, the
	// hook grace at most (hookGraceEnded); grace is that timer.
	endPending bool
	grace      *time.Timer
	final      string // the engine's final message from a hook, once it sent one
	// failure: the engine reported the turn failed (the engines table's failures: Claude's
	// StopFailure): the task ends failed with the error as its artifact.
	failure *turnFailure
	// interrupted: Escape or Ctrl-C was sent while the task ran (noteKeys).
	interrupted bool
	// earlier is the output of the task's earlier turns, when follow-ups continued it, each
	// after the line that names the follow-up that ended it (turnHeader): the artifact keeps
	// every turn's output, not only the last one's.
	earlier string
}

// turnHeader is the line between two turns' outputs in a continued task's artifact.
func turnHeader(followUp string) string {
	return "\n\n--- follow-up: " + clip(firstLineOf(followUp), 80) + " ---\n\n"
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// closedTask remembers the member's last closed task, so a final message that arrives after the
// screen closed the task (or after the next prompt was typed, before the engine took it up) still
// becomes its artifact.
type closedTask struct {
	id      string
	hook    bool   // its artifact already is the engine's own message (or its error)
	failed  bool   // it ended failed: a wait that starts now ends (exit 3), as for a remote's
	earlier string // its earlier turns' output (openTask.earlier), kept in front of a late message
}

// turnFailure is an engine's own word that its turn failed: the hook event and the error.
type turnFailure struct {
	event, err string
}

// finalMessage extracts the engine's own final message from a hook payload through the engines
// table's finalMessage keys (herd/state.Table.FinalMessage).
func finalMessage(t *state.Table, engine string, payload []byte) string {
	return t.FinalMessage(engine, payload)
}

// expectsHooksLocked says whether the member's engine is expected to report its turn's end by a
// hook: it has reported one, or the herd's hooks are installed for it. The caller holds the
// state lock.
func (m *member) expectsHooksLocked() bool { return m.hooked || m.hooksInstalled }

// submitPrompt records a prompt in the ledger and returns its task id:
// a new task minted before any key is typed, or, for an answer to a blocked member, its open task.
// cur is the member's reading when the prompt was accepted.
func (d *daemon) submitPrompt(m *member, text string, cur herd.Reading, answer bool, by string) (string, error) {
	if d.tasks == nil {
		// A prompt that cannot be recorded is not typed: every prompt through the herd must be
		// reconstructable. The member keeps running; send-keys still reaches it.
		return "", d.ledgerUnavailable()
	}
	baseLines, base := m.kind.screenBase()
	now := time.Now()

	d.state.lock()
	if answer && cur.State == herd.StateBlocked && m.task != nil && m.task.id != "" && m.task.typed {
		id := m.task.id
		tr := ledger.Transition{At: now, State: m.reading.State, Kind: m.reading.BlockedOn, Authority: answeredBy(by),
			Note: herd.NoteAnswered + clip(text, 200)}
		d.state.unlock()
		var err error
		d.lw.do(m.name, func() { _, err = d.tasks.RecordTransition(m.name, tr) })
		if err != nil {
			return "", exitcode.New(exitcode.Infra, "cannot record the answer in the ledger: %v (nothing was typed; see `mosh herd doctor`)", err)
		}
		return id, nil
	}
	// The previous task, if still open, ends here (canceled: its turn did not end) with what it
	// showed.
	d.supersedeLocked(m, now)
	t := &openTask{baseHist: base, baseLines: baseLines}
	m.task = t
	state := cur.State
	d.state.unlock()

	var (
		minted ledger.Task
		err    error
	)
	d.lw.do(m.name, func() { minted, err = d.tasks.MintTask(m.name, text, state, now) })
	d.state.lock()
	defer d.state.unlock()
	if err != nil {
		if m.task == t {
			m.task = nil
		}
		return "", exitcode.New(exitcode.Infra, "cannot record the prompt in the ledger: %v (nothing was typed; see `mosh herd doctor`)", ledgerErr(err))
	}
	t.id = minted.ID
	return minted.ID, nil
}

// promptTyped marks the member's task as typed: from now on its states can end it.
func (d *daemon) promptTyped(m *member, id string) {
	d.state.lock()
	if m.task != nil && m.task.id == id {
		m.task.typed = true
	}
	d.bus.emitLocked(herd.Event{Type: eventTyped, Name: m.name, State: m.reading.State, Task: id, AtMs: time.Now().UnixMilli()})
	d.state.unlock()
}

// promptFailed ends the task of a prompt that could not be typed (the member stopped reading its
// input, or exited meanwhile): the ledger says so instead of keeping a task no engine ever saw.
// An answer that joined an open task leaves that task alone.
func (d *daemon) promptFailed(m *member, id string, cause error) {
	d.state.lock()
	t := m.task
	if t == nil || t.id != id || t.typed {
		d.state.unlock()
		return
	}
	m.task = nil
	defer m.wakeQueue()
	note := "the prompt could not be typed: " + cause.Error()
	end := ledger.Transition{At: time.Now(), State: m.reading.State, Kind: m.reading.BlockedOn, Authority: herd.AuthorityRuntime, Note: note}
	d.state.unlock()
	d.lw.do(m.name, func() {
		if err := d.tasks.CloseTask(id, end, ledger.Artifact{Text: note, Source: ledger.SourceError}); err != nil {
			d.logger.Printf("ledger: close %s: %v", id, err)
		}
	})
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// taskEventLocked links a state event to the member's open task (ev.Task) and decides whether it
// ends the task (ev.TaskEnded, ev.TaskState). It returns the ledger write to queue once the event
// is emitted (nil without a ledger). The caller holds the state lock. A change into idle or done
// wakes the member's prompt queue.
func (d *daemon) taskEventLocked(m *member, ev *herd.Event, exited bool) *ledgerOp {
	if ev.State == herd.StateIdle || ev.State == herd.StateDone || exited {
		defer m.wakeQueue()
	}
	if d.tasks == nil {
		return nil
	}
	op := &ledgerOp{member: m.name, tr: ledger.Transition{At: time.UnixMilli(ev.AtMs), State: ev.State, Kind: ev.BlockedOn, Authority: ev.Authority}}
	if exited {
		op.tr.Note = herd.NoteExited
		if ev.ExitCode != nil {
			op.tr.Note += " with code " + itoa(*ev.ExitCode)
		}
	}
	t := m.task
	if t == nil {
		return op
	}
	ev.Task = t.id
	hookSaid := ev.Authority == herd.AuthorityHook
	if t.typed && (ev.State == herd.StateWorking || ev.State == herd.StateBlocked) {
		// Taken up (the top of this file): the engine's turn-start hook sets it in hookArrived.
		// A member with no hook yet goes by what it shows; when the herd's hooks are installed for
		// it, not by the daemon's own prompt claim, which a slow start outlasts (the engine then
		// reads at rest again before it took the prompt: Claude Code --agent under load did).
		if ev.Authority == herd.AuthorityRemote || (hookSaid && ev.State == herd.StateBlocked) ||
			(!m.hooked && (!m.hooksInstalled || ev.Authority == herd.AuthorityScreen)) {
			t.sawActive = true
		}
		if ev.Authority == herd.AuthorityScreen {
			t.screenActive = true
		}
		if t.endPending {
			// The engine went on (a tool, a question): a later end decides.
			t.stopGrace()
		}
	}
	rest := ev.State == herd.StateDone || ev.State == herd.StateIdle
	hookEnd := t.typed && ev.State == herd.StateDone && hookSaid && !m.staleHook && !m.lateHookLocked(t)
	screenEnd := t.typed && t.sawActive && rest && !hookSaid
	if screenEnd && !exited && !t.interrupted && m.expectsHooksLocked() {
		// The screen says the turn is over; the engine's done hook, with its final message, is
		// likely on its way: wait for it, a grace at most (hookGraceEnded).
		if !t.endPending {
			t.endPending = true
			t.grace = time.AfterFunc(m.spec.hookGrace(), func() { d.hookGraceEnded(m, t) })
		}
		ev.TaskPending = true
		return op
	}
	turnEnded := hookEnd || screenEnd
	if turnEnded && !exited && m.continuationLocked(t.id) {
		// A follow-up waits to be typed into this task: the task goes on (queue.go).
		t.stopGrace()
		return op
	}
	if (exited || turnEnded) && t.id != "" {
		d.closeTaskLocked(m, t, ev, op, exited)
	}
	return op
}

// lateHookLocked says whether a done hook arriving now is the previous turn's, not t's: t was
// typed but not taken up (nor shown working), and the task before it still lacks its engine's
// word. When that task already had its own, a done hook is t's (its turn-start hook was lost, or
// the turn was too quick to show). The caller holds the state lock.
func (m *member) lateHookLocked(t *openTask) bool {
	return t.typed && !t.sawActive && !t.screenActive && m.lastClosed != nil && !m.lastClosed.hook
}

// stopGrace cancels the wait for a done hook. The caller holds the state lock.
func (t *openTask) stopGrace() {
	if t.grace != nil {
		t.grace.Stop()
		t.grace = nil
	}
	t.endPending = false
}

// hookGraceEnded ends a task the screen ended when the engine's done hook did not come within
// the hook grace: on the screen's word, if the member still reads done or idle.
func (d *daemon) hookGraceEnded(m *member, t *openTask) {
	now := time.Now()
	d.state.lock()
	defer d.state.unlock()
	if m.task != t || !t.endPending || m.exited {
		return
	}
	t.grace = nil
	st := m.reading.State
	if st != herd.StateDone && st != herd.StateIdle {
		t.endPending = false
		return
	}
	if m.continuationLocked(t.id) {
		t.endPending = false
		m.wakeQueue()
		return
	}
	ev := herd.Event{Type: herd.EventState, Name: m.name, State: st, BlockedOn: m.reading.BlockedOn, Authority: m.reading.Authority,
		Prev: st, Task: t.id, AtMs: now.UnixMilli()}
	op := &ledgerOp{member: m.name, tr: ledger.Transition{At: now, State: st, Kind: m.reading.BlockedOn, Authority: m.reading.Authority,
		Note: "the engine's done hook did not come within " + m.spec.hookGrace().String() + " of the screen's: ended on the screen's word"}}
	d.closeTaskLocked(m, t, &ev, op, false)
	if !m.hooked {
		m.graceEnds++
	}
	if d.tasks != nil {
		d.lw.record(*op)
	}
	d.bus.emitLocked(ev)
	m.wakeQueue()
}

// closeTaskLocked ends the member's task t with event ev (which it marks TaskEnded), filling op's
// close. The caller holds the state lock.
func (d *daemon) closeTaskLocked(m *member, t *openTask, ev *herd.Event, op *ledgerOp, exited bool) {
	t.stopGrace()
	m.task = nil
	ev.TaskEnded = true
	op.closeID, op.art = t.id, d.artifactLocked(m, t)
	m.lastClosed = &closedTask{id: t.id, hook: op.art.Source == ledger.SourceHook || t.failure != nil, earlier: t.earlier}
	switch {
	case exited && m.killing:
		ev.TaskState = ledger.StateCanceled
		op.end = &ledger.Transition{State: ledger.StateCanceled, Authority: herd.AuthorityRuntime, Note: "the member was killed: " + op.tr.Note}
	case exited:
		// The process died before the turn ended: the task failed, with the exit code.
		ev.TaskState = ledger.StateFailed
		op.end = &ledger.Transition{State: ledger.StateFailed, Authority: herd.AuthorityRuntime, Note: op.tr.Note}
	case t.failure != nil:
		// The engine said its turn failed (an API error): the member is at rest, the task failed.
		ev.TaskState = ledger.StateFailed
		op.end = &ledger.Transition{State: ledger.StateFailed, Authority: herd.AuthorityHook,
			Note: "the engine's turn failed (" + t.failure.event + "): " + clip(t.failure.err, 200)}
		m.lastClosed.failed = true
	case t.interrupted && ev.Authority != herd.AuthorityHook:
		// The turn was cut short by Escape / Ctrl-C: it did not end on its own.
		ev.TaskState = ledger.StateInterrupted
		op.end = &ledger.Transition{State: ledger.StateInterrupted, Kind: "", Authority: ev.Authority, Note: "interrupted (Escape or Ctrl-C)"}
	default:
		ev.TaskState = ev.State
	}
}

// continuationLocked says whether a follow-up to task id waits in the member's queue.
func (m *member) continuationLocked(id string) bool {
	for _, q := range m.queue {
		if q.cont && q.id == id {
			return true
		}
	}
	return false
}

// noteKeys marks the member's running task interrupted when keys carry Escape or Ctrl-C: if its
// turn then stops without the engine saying done, the task ends interrupted, not done.
func (d *daemon) noteKeys(m *member, keys []string) {
	hit := false
	for _, k := range keys {
		switch k {
		case "Escape", "Esc", "C-c", "C-[", "\x1b", "\x03":
			hit = true
		}
	}
	if !hit {
		return
	}
	d.state.lock()
	if t := m.task; t != nil && t.typed {
		t.interrupted = true
	}
	d.state.unlock()
}

// applyOps is the ledger writer's batch: one commit for a run of transitions.
func (d *daemon) applyOps(ops []ledgerOp) {
	items := make([]ledger.BatchItem, len(ops))
	for i, op := range ops {
		items[i] = ledger.BatchItem{Member: op.member, Transition: op.tr, CloseTask: op.closeID, Artifact: op.art, End: op.end}
	}
	errs, err := d.tasks.RecordBatch(items)
	if err != nil {
		d.logger.Printf("ledger: %d transitions not recorded: %v", len(ops), err)
		return
	}
	for i, e := range errs {
		if e != nil {
			d.logger.Printf("ledger: %s %s: %v", ops[i].member, ops[i].tr.State, e)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// hookArrived takes what a hook report says about the member's task, before the report reaches
// the tracker (whose change may end the task): the engine's turn-start event marks the typed
// prompt taken up; a final message becomes the running task's artifact when it ends, or — when
// the running task was not taken up yet, or none runs — replaces the screen artifact of the task
// that ended last (its Stop hook came late).
func (d *daemon) hookArrived(m *member, payload []byte) {
	table := d.engines.Table()
	msg := finalMessage(table, m.engine, payload)
	turnStart := table.TurnStart(m.engine, payload)
	failedOn, failure := table.TurnFailure(m.engine, payload)
	d.state.lock()
	defer d.state.unlock()
	m.hooked = true
	t := m.task
	if t != nil && turnStart && t.id != "" && (t.typed || m.typing == t.id) {
		// The keys are in (or going in): this is the engine taking the prompt up. A turn-start
		// from before the keys is the previous prompt's.
		t.started, t.sawActive = true, true
	}
	// A report while the typed prompt is not taken up yet, and the task before it still lacks
	// its engine's word, is that task's (its Stop came late): it must not end this one. hReport
	// clears the mark once the report was applied.
	late := t != nil && m.lateHookLocked(t)
	m.staleHook = late
	if failedOn != "" && t != nil && t.typed && !late {
		t.failure = &turnFailure{event: failedOn, err: failure}
	}
	if msg == "" || d.tasks == nil {
		return
	}
	if t != nil && t.typed && !late {
		t.final = msg
		return
	}
	if c := m.lastClosed; c != nil && !c.hook {
		c.hook = true
		id := c.id
		art := ledger.Artifact{Text: c.earlier + msg, Source: ledger.SourceHook}
		d.lw.post(m.name, func() {
			if err := d.tasks.ReplaceArtifact(id, art); err != nil {
				d.logger.Printf("ledger: artifact of %s: %v", id, err)
			}
		})
	}
}

// artifactLocked is what the task came back with (see the top of this file). The caller holds
// the state lock; the screen has its own.
func (d *daemon) artifactLocked(m *member, t *openTask) ledger.Artifact {
	var art ledger.Artifact
	switch {
	case t.failure != nil:
		art = ledger.Artifact{Text: t.failure.err, Source: ledger.SourceError}
	case t.final != "":
		art = ledger.Artifact{Text: t.final, Source: ledger.SourceHook}
	default:
		art = m.kind.artifactLocked(t)
	}
	if t.earlier != "" {
		art.Text = t.earlier + art.Text
	}
	return art
}

// screenDeltaMaxLines bounds the text compared: the artifact keeps 8000 characters anyway.
const screenDeltaMaxLines = 2000

// screenDelta returns the lines that appeared since the prompt: the history that scrolled off
// since then plus the screen now, minus the lines that were already on the screen when the
// prompt was typed (matched in order, so the input box and footer drop out, and in the alternate
// screen only what was redrawn remains).
func screenDelta(m *member, t *openTask) string {
	grown := m.scr.HistoryLen() - t.baseHist
	if t.baseHist >= herd.HistoryLines {
		// The history ring was full when the prompt was typed: its length no longer grows, so
		// take a window and let the baseline match find where the prompt's screen was.
		grown = screenDeltaMaxLines
	}
	_, rows := m.size()
	n := min(max(0, grown)+rows, screenDeltaMaxLines+rows)
	now := withoutChrome(m, strings.Split(m.scr.Text(n), "\n"))
	kept := subtractLines(now, t.baseLines)
	out := strings.Join(trimBlank(kept), "\n")
	if strings.TrimSpace(out) == "" {
		// Nothing new is visible (e.g. the answer was redrawn in place of identical lines):
		// the current screen is the best evidence there is.
		return strings.Join(trimBlank(now), "\n")
	}
	return out
}

// withoutChrome drops the engine's chrome (the engines table's chrome regions: the input box, the
// footer) from text, the history and screen lines ending with the visible screen, when the screen
// is at rest (idle or done: with a dialog up or a turn running, the box and footer are not where
// the regions expect them). Text that no longer ends with the screen (it changed meanwhile) is
// kept whole.
func withoutChrome(m *member, text []string) []string {
	table := m.d.engines.Table()
	e, ok := table.Lookup(m.engine)
	if !ok || len(e.Chrome) == 0 {
		return text
	}
	snap := m.scr.Snapshot()
	rows := e.ChromeRows(snap)
	if rows == nil {
		return text
	}
	if rd := table.Classify(m.engine, snap); rd.State != state.Idle && rd.State != state.Done {
		return text
	}
	lines := snap.Lines
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	off := len(text) - len(lines)
	if off < 0 || !slices.Equal(text[off:], lines) {
		return text
	}
	out := append([]string(nil), text[:off]...)
	for i, l := range lines {
		if i >= len(rows) || !rows[i] {
			out = append(out, l)
		}
	}
	return out
}

// subtractLines removes from cur the lines of a longest common subsequence with base, ignoring
// blank lines in base (they match too easily).
func subtractLines(cur, base []string) []string {
	var b []string
	for _, l := range base {
		if strings.TrimSpace(l) != "" {
			b = append(b, l)
		}
	}
	if len(b) == 0 || len(cur) == 0 {
		return cur
	}
	// lcs[i][j] = LCS length of cur[i:] and b[j:], one row at a time from the end.
	n, k := len(cur), len(b)
	table := make([][]int32, n+1)
	for i := range table {
		table[i] = make([]int32, k+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			switch {
			case cur[i] == b[j]:
				table[i][j] = table[i+1][j+1] + 1
			case table[i+1][j] >= table[i][j+1]:
				table[i][j] = table[i+1][j]
			default:
				table[i][j] = table[i][j+1]
			}
		}
	}
	out := make([]string, 0, n)
	i, j := 0, 0
	for i < n {
		switch {
		case j < k && cur[i] == b[j]:
			i, j = i+1, j+1 // on the screen before the prompt: drop
		case j < k && table[i][j+1] > table[i+1][j]:
			j++
		default:
			out = append(out, cur[i])
			i++
		}
	}
	return out
}

func trimBlank(lines []string) []string {
	start, end := 0, len(lines)
	for start < end && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	for end > start && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return lines[start:end]
}
