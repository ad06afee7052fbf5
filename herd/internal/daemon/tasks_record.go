package daemon

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/ledger"
	"github.com/mosh-dev/mosh/runtime/exitcode"
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
//   - done or idle once the task has seen working or blocked (the engine picked the prompt up and
//     put it down): an engine that goes idle without ever saying done ends its task as idle;
//   - done from a hook (Stop, StopFailure, AfterAgent…: the engine says its turn is over);
//   - the process exiting (done, authority runtime);
//   - the next prompt (the old task closes with the member's state then, note "superseded");
//   - kill or prune of the member, or a read that finds its member stopped (state gone).
//
// The artifact is the engine's own final message when a hook supplied one during the task (or
// right after the screen closed it, before the next prompt), else the text that appeared since
// the prompt: the history lines and screen lines that were not on the screen when it was typed
// (engines in the alternate screen leave no history, so that is the screen delta). The ledger
// keeps its tail, 8000 characters, with truncated and the original length.

// openTask is the ledger task of a member's last prompt, until an end closes it. Guarded by the
// state lock (d.bus.mu).
type openTask struct {
	id        string   // "" while the mint is in flight
	baseHist  int      // history length when the prompt was typed
	baseLines []string // the visible screen then
	typed     bool     // the prompt's keys were written; ends count from here
	sawActive bool     // a working or blocked state was seen after typing
	final     string   // the engine's final message from a hook, once it sent one
	// interrupted: Escape or Ctrl-C was sent while the task ran (noteKeys).
	interrupted bool
}

// closedTask remembers the member's last closed task until the next prompt, so a final message
// that arrives after the screen closed the task still becomes its artifact.
type closedTask struct {
	id   string
	hook bool // its artifact already is the engine's own message
}

// finalMessage extracts the engine's own final message from a hook payload through the engines
// table's finalMessage keys (herd/state.Table.FinalMessage).
func finalMessage(t *state.Table, payload []byte) string { return t.FinalMessage("", payload) }

// submitPrompt records a prompt in the ledger and returns its task id:
// a new task minted before any key is typed, or, for an answer to a blocked member, its open task.
// cur is the member's reading when the prompt was accepted.
func (d *daemon) submitPrompt(m *member, text string, cur herd.Reading, answer bool) (string, error) {
	if d.tasks == nil {
		// A prompt that cannot be recorded is not typed: every prompt through the herd must be
		// reconstructable. The member keeps running; send-keys still reaches it.
		return "", d.ledgerUnavailable()
	}
	var baseLines []string
	base := 0
	if m.remote == nil {
		baseLines, base = m.scr.Snapshot().Lines, m.scr.HistoryLen()
	}
	now := time.Now()

	d.bus.mu.Lock()
	if answer && cur.State == herd.StateBlocked && m.task != nil && m.task.id != "" && m.task.typed {
		id := m.task.id
		tr := ledger.Transition{At: now, State: m.reading.State, Kind: m.reading.BlockedOn, Authority: m.reading.Authority,
			Note: "answered: " + clip(text, 200)}
		d.bus.mu.Unlock()
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
	m.task, m.lastClosed = t, nil
	state := cur.State
	d.bus.mu.Unlock()

	var (
		minted ledger.Task
		err    error
	)
	d.lw.do(m.name, func() { minted, err = d.tasks.MintTask(m.name, text, state, now) })
	d.bus.mu.Lock()
	defer d.bus.mu.Unlock()
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
	d.bus.mu.Lock()
	if m.task != nil && m.task.id == id {
		m.task.typed = true
	}
	d.bus.emitLocked(herd.Event{Type: eventTyped, Name: m.name, State: m.reading.State, Task: id, AtMs: time.Now().UnixMilli()})
	d.bus.mu.Unlock()
}

// promptFailed ends the task of a prompt that could not be typed (the member stopped reading its
// input, or exited meanwhile): the ledger says so instead of keeping a task no engine ever saw.
// An answer that joined an open task leaves that task alone.
func (d *daemon) promptFailed(m *member, id string, cause error) {
	d.bus.mu.Lock()
	t := m.task
	if t == nil || t.id != id || t.typed {
		d.bus.mu.Unlock()
		return
	}
	m.task = nil
	defer m.wakeQueue()
	note := "the prompt could not be typed: " + cause.Error()
	end := ledger.Transition{At: time.Now(), State: m.reading.State, Kind: m.reading.BlockedOn, Authority: herd.AuthorityRuntime, Note: note}
	d.bus.mu.Unlock()
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
		op.tr.Note = exitedNote
		if ev.ExitCode != nil {
			op.tr.Note += " with code " + itoa(*ev.ExitCode)
		}
	}
	t := m.task
	if t == nil {
		return op
	}
	ev.Task = t.id
	if t.typed && (ev.State == herd.StateWorking || ev.State == herd.StateBlocked) && (ev.Authority == herd.AuthorityHook || ev.Authority == herd.AuthorityRemote || !m.hooked) {
		// The engine took the prompt up. For a member whose engine reports hooks only the engine
		// itself says so (UserPromptSubmit): neither the daemon's own prompt claim (runtime) nor
		// the screen counts, since an engine still finishing its last turn can leave the typed
		// prompt in its input box for a while, its old done line on the screen and a spinner
		// in its title (the real Claude Code closed queued tasks with the old turn's screen).
		t.sawActive = true
	}
	turnEnded := (t.typed && t.sawActive && (ev.State == herd.StateDone || ev.State == herd.StateIdle)) ||
		(t.typed && ev.State == herd.StateDone && ev.Authority == herd.AuthorityHook)
	if turnEnded && !exited && m.continuationLocked(t.id) {
		// A follow-up waits to be typed into this task: the task goes on (queue.go).
		return op
	}
	if (exited || turnEnded) && t.id != "" {
		m.task = nil
		ev.TaskEnded = true
		op.closeID, op.art = t.id, d.artifactLocked(m, t)
		m.lastClosed = &closedTask{id: t.id, hook: op.art.Source == ledger.SourceHook}
		switch {
		case exited && m.killing:
			ev.TaskState = ledger.StateCanceled
			op.end = &ledger.Transition{State: ledger.StateCanceled, Authority: herd.AuthorityRuntime, Note: "the member was killed: " + op.tr.Note}
		case exited:
			// The process died before the turn ended: the task failed, with the exit code.
			ev.TaskState = ledger.StateFailed
			op.end = &ledger.Transition{State: ledger.StateFailed, Authority: herd.AuthorityRuntime, Note: op.tr.Note}
		case t.interrupted && ev.Authority != herd.AuthorityHook:
			// The turn was cut short by Escape / Ctrl-C: it did not end on its own.
			ev.TaskState = ledger.StateInterrupted
			op.end = &ledger.Transition{State: ledger.StateInterrupted, Kind: "", Authority: ev.Authority, Note: "interrupted (Escape or Ctrl-C)"}
		default:
			ev.TaskState = ev.State
		}
	}
	return op
}

// exitedNote prefixes the note of the transition recorded when a member's process exits.
const exitedNote = "the process exited"

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
	d.bus.mu.Lock()
	if t := m.task; t != nil && t.typed {
		t.interrupted = true
	}
	d.bus.mu.Unlock()
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

// hookFinal takes a hook payload's final message: it becomes the open task's artifact when the
// task ends, or replaces the screen artifact of the task the screen already closed (no prompt
// since). Called before the report reaches the tracker, whose change may close the task.
func (d *daemon) hookFinal(m *member, payload []byte) {
	d.bus.mu.Lock()
	m.hooked = true
	d.bus.mu.Unlock()
	msg := finalMessage(d.engines.Table(), payload)
	if msg == "" || d.tasks == nil {
		return
	}
	d.bus.mu.Lock()
	defer d.bus.mu.Unlock()
	if t := m.task; t != nil && t.typed {
		t.final = msg
		return
	}
	if c := m.lastClosed; c != nil && !c.hook && m.task == nil {
		c.hook = true
		id := c.id
		art := ledger.Artifact{Text: msg, Source: ledger.SourceHook}
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
	if t.final != "" {
		return ledger.Artifact{Text: t.final, Source: ledger.SourceHook}
	}
	if m.remote != nil {
		return ledger.Artifact{Text: m.remote.lastOutput, Source: ledger.SourceRemote}
	}
	return ledger.Artifact{Text: screenDelta(m, t), Source: ledger.SourceScreen}
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
	now := strings.Split(m.scr.Text(n), "\n")
	kept := subtractLines(now, t.baseLines)
	out := strings.Join(trimBlank(kept), "\n")
	if strings.TrimSpace(out) == "" {
		// Nothing new is visible (e.g. the answer was redrawn in place of identical lines):
		// the current screen is the best evidence there is.
		return strings.Join(trimBlank(now), "\n")
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
