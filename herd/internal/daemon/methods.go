package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mosh-dev/mosh/exitcode"
	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/state"
	"github.com/mosh-dev/mosh/ledger"
)

type handler func(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error)

// handlers is the daemon's whole dispatch table, in one literal: no file registers a method
// from an init function (TestDispatchTableIsOneLiteral), so renaming or splitting a file cannot
// change which methods exist or panic at start-up.
var handlers = map[string]handler{
	herd.MethodPing: func(context.Context, *serverConn, json.RawMessage) (any, error) {
		return map[string]string{"pong": herd.Version}, nil
	},
	herd.MethodRun:          hRun,
	herd.MethodStart:        hStart,
	herd.MethodList:         hList,
	herd.MethodPrompt:       hPrompt,
	herd.MethodRead:         hRead,
	herd.MethodSendKeys:     hSendKeys,
	herd.MethodWait:         hWait,
	herd.MethodKill:         hKill,
	herd.MethodPrune:        hPrune,
	herd.MethodRestore:      hRestore,
	herd.MethodReport:       hReport,
	herd.MethodStatus:       hStatus,
	herd.MethodDoctor:       hDoctor,
	herd.MethodExplain:      hExplain,
	herd.MethodDaemonStatus: hDaemonStatus,
	herd.MethodDaemonStop:   hDaemonStop,
	herd.MethodSubscribe:    hSubscribe,
	herd.MethodUnsubscribe:  hUnsubscribe,
	herd.MethodResize:       hResize,
	herd.MethodRemoteAdd:    hRemoteAdd,
	herd.MethodRemoteList:   hRemoteList,
	herd.MethodRemoteRemove: hRemoteRemove,
	herd.MethodRemotePing:   hRemotePing,
	herd.MethodRemoteCard:   hRemoteCard,
	herd.MethodTasks:        hTasks,
	herd.MethodTask:         hTask,
	herd.MethodLog:          hLog,
	herd.MethodStats:        hStats,
	herd.MethodAnswer:       hAnswer,
	herd.MethodNotifyAdd:    hNotifyAdd,
	herd.MethodNotifyList:   hNotifyList,
	herd.MethodNotifyRemove: hNotifyRemove,
	herd.MethodNotifyTest:   hNotifyTest,
	herd.MethodNotifySend:   hNotifySend,
	herd.MethodAsk:          hAsk,
	herd.MethodReply:        hReply,
	herd.MethodCancelTask:   hCancelTask,
	herd.MethodInterrupt:    hInterrupt,

	// ai() calls, recorded as tasks of headless members (tasks_headless.go).
	herd.MethodHeadlessBegin: hHeadlessBegin,
	herd.MethodHeadlessEnd:   hHeadlessEnd,
}

// ---- launch ----

// slugRE compiles on first use: package-level regexps cost every mosh process start.
var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// slugify makes a member name out of free text: lowercase, runs of other characters → '-',
// leading non-letters dropped, at most 32 characters; "agent" when nothing is left.
func slugify(s string) string {
	s = slugRE().ReplaceAllString(strings.ToLower(s), "-")
	s = strings.TrimLeft(s, "-0123456789_")
	if len(s) > 32 {
		s = s[:32]
	}
	s = strings.Trim(s, "-")
	if s == "" {
		return "agent"
	}
	return s
}

// checkCwd requires an existing absolute directory.
func checkCwd(cwd string) (string, error) {
	if cwd == "" {
		return "", exitcode.New(exitcode.Usage, "missing cwd: pass --cwd DIR")
	}
	if !filepath.IsAbs(cwd) {
		return "", exitcode.New(exitcode.Usage, "cwd %q is not absolute: pass an absolute --cwd", cwd)
	}
	st, err := os.Stat(cwd)
	if err != nil {
		return "", exitcode.New(exitcode.Usage, "cwd %s does not exist: create it (mkdir -p %s) or pass another --cwd", cwd, cwd)
	}
	if !st.IsDir() {
		return "", exitcode.New(exitcode.Usage, "cwd %s is not a directory: pass a directory as --cwd", cwd)
	}
	return filepath.Clean(cwd), nil
}

// reserveName validates or derives the member name and reserves it until release.
func (d *daemon) reserveName(requested, engine, cwd string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	taken := func(n string) bool {
		_, live := d.members[n]
		_, old := d.remembered[n]
		return live || old || d.reserved[n]
	}
	if requested != "" {
		if err := herd.CheckName(requested); err != nil {
			return "", err
		}
		if taken(requested) {
			if _, old := d.remembered[requested]; old {
				return "", exitcode.New(exitcode.Usage, "a member named %s is remembered from before a restart: `mosh restore` brings it back, `mosh herd prune` forgets it, or pick another --name", requested)
			}
			return "", exitcode.New(exitcode.Usage, "a member named %s already exists: pick another --name, or `mosh herd kill %s` first", requested, requested)
		}
		d.reserved[requested] = true
		return requested, nil
	}
	base := slugify(engine + "-" + filepath.Base(cwd))
	if len(base) > 28 {
		base = strings.Trim(base[:28], "-")
	}
	name := base
	for i := 2; taken(name); i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	d.reserved[name] = true
	return name, nil
}

func (d *daemon) release(name string) {
	d.mu.Lock()
	delete(d.reserved, name)
	d.mu.Unlock()
}

// launch starts and registers a member; the name must be reserved.
func (d *daemon) launch(ls launchSpec) (*member, error) {
	defer d.release(ls.name)
	if ls.created.IsZero() {
		ls.created = time.Now()
	}
	m, err := d.startMember(ls)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.members[ls.name] = m
	delete(d.remembered, ls.name)
	d.mu.Unlock()
	row := manifestRow{Name: m.name, Kind: herd.KindLocal, Engine: m.engine, Bin: m.bin, Args: m.args, Cwd: m.cwd, Substrate: herd.SubstratePty,
		Autonomous: m.autonomous, Created: m.created, Pid: m.pid}
	var perr error
	d.lw.do(m.name, func() {
		perr = d.manifest.Put(row)
		if d.tasks != nil {
			// A task left open by an earlier process of this name can no longer progress: close
			// it before the new process's transitions could be linked to it.
			if id, err := d.tasks.Reconcile(m.name, time.Now(), "the member was started again"); err != nil {
				d.logger.Printf("ledger: reconcile %s: %v", m.name, err)
			} else if id != "" {
				d.logger.Printf("ledger: closed %s of %s (the member was started again)", id, m.name)
			}
		}
	})
	if perr != nil {
		d.logger.Printf("manifest: %s: %v", m.name, perr)
	}
	d.withState(func() {
		d.bus.emitLocked(herd.Event{Type: herd.EventAdded, Name: m.name, State: m.reading.State, Authority: m.reading.Authority, AtMs: time.Now().UnixMilli()})
	})
	m.run()
	d.logger.Printf("started %s (pid %d): %s %s in %s", m.name, m.pid, m.bin, strings.Join(m.args, " "), m.cwd)
	return m, nil
}

func hRun(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.RunParams
	if err := decode(herd.MethodRun, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if len(p.Argv) == 0 || p.Argv[0] == "" {
		return nil, exitcode.New(exitcode.Usage, "herd run needs a command: mosh herd run [--name N] -- CMD [ARGS…]")
	}
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return nil, err
	}
	engine := p.Engine
	var spec engineSpec
	known := false
	if engine != "" {
		s, ok := d.engines.Lookup(engine)
		if !ok {
			return nil, unknownEngine(d, engine)
		}
		spec, known, engine = s, true, s.Key
	} else {
		engine = engineLabel(d.engines, p.Argv[0])
		spec, known = d.engines.Lookup(engine)
	}
	bin, err := herd.LookPath(p.Argv[0], cwd, p.Env, d.toolsDir())
	if err != nil {
		label := p.Argv[0]
		if known && filepath.Base(p.Argv[0]) == spec.Bin {
			label = spec.Key
		}
		return nil, missingProgram(label, p.Argv[0], err)
	}
	name, err := d.reserveName(p.Name, engine, cwd)
	if err != nil {
		return nil, err
	}
	m, err := d.launch(launchSpec{name: name, engine: engine, spec: spec, known: known, bin: bin, args: p.Argv[1:], cwd: cwd, env: p.Env, cols: p.Cols, rows: p.Rows})
	if err != nil {
		return nil, err
	}
	return d.row(m), nil
}

// toolsDir is $MOSH_HOME/bin, where `mosh install` links the commands it installs.
func (d *daemon) toolsDir() string { return filepath.Join(d.home, "bin") }

// missingProgram is the one error for a program that cannot be found, whichever verb asked
// (run, start): infrastructure (exit 5), naming the engine or command and what to install.
func missingProgram(label, bin string, err error) error {
	return exitcode.New(exitcode.Infra, "%s is not installed: %v: install %s, or put it on PATH (or give its full path); mosh herd doctor lists the engines it finds", label, err, label)
}

func unknownEngine(d *daemon, name string) error {
	return exitcode.New(exitcode.Usage, "unknown engine %q: use one of %s, or `mosh herd run -- CMD` for any command", name, strings.Join(d.engines.Keys(), ", "))
}

func hStart(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.StartParams
	if err := decode(herd.MethodStart, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	if p.Engine == "" {
		return nil, exitcode.New(exitcode.Usage, "herd start needs an engine: mosh herd start ENGINE (one of %s)", strings.Join(d.engines.Keys(), ", "))
	}
	spec, ok := d.engines.Lookup(p.Engine)
	if !ok {
		return nil, unknownEngine(d, p.Engine)
	}
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return nil, err
	}
	bin, err := herd.LookPath(spec.Bin, cwd, p.Env, d.toolsDir())
	if err != nil {
		return nil, missingProgram(spec.Key, spec.Bin, err)
	}
	args := append([]string(nil), spec.LaunchArgs...)
	if p.Agent {
		args = append(args, spec.AgentArgs...)
	}
	args = append(args, p.Args...)
	name, err := d.reserveName(p.Name, spec.Key, cwd)
	if err != nil {
		return nil, err
	}
	m, err := d.launch(launchSpec{name: name, engine: spec.Key, spec: spec, known: true, bin: bin, args: args, cwd: cwd, env: p.Env, autonomous: p.Agent, cols: p.Cols, rows: p.Rows})
	if err != nil {
		return nil, err
	}
	return d.row(m), nil
}

// ---- roster ----

// row renders a member as a ps row.
func (d *daemon) row(m *member) *herd.Member { return m.kind.row() }

func (p ptyMember) row() *herd.Member {
	d, m := p.d, p.member
	cols, rows := m.size()
	var r *herd.Member
	d.withState(func() {
		r = &herd.Member{
			Name: m.name, Engine: m.engine, Kind: herd.KindLocal, State: m.reading.State, BlockedOn: m.reading.BlockedOn, Authority: m.reading.Authority,
			Cwd: m.cwd, Pid: m.pid, AgeMs: time.Since(m.created).Milliseconds(), CreatedMs: m.created.UnixMilli(), Alive: !m.exited,
			Substrate: herd.SubstratePty, Autonomous: m.autonomous, Bin: m.bin, Args: m.args, Cols: cols, Rows: rows,
			Screen: m.screenR, Hook: m.hookR, Question: m.question, StateSinceMs: m.stateSinceLocked().UnixMilli(),
		}
		if m.exited {
			c := m.exitCode
			r.ExitCode = &c
			r.ExitReason = m.exitReason
		}
		r.Queued = len(m.queue)
	})
	r.Attached = m.attachedCount()
	return r
}

func rememberedRow(r manifestRow) herd.Member {
	kind := r.Kind
	if kind == "" {
		kind = herd.KindLocal
	}
	return herd.Member{Name: r.Name, Engine: r.Engine, Kind: kind, State: herd.StateGone, Authority: herd.AuthorityRuntime, Cwd: r.Cwd,
		AgeMs: time.Since(r.Created).Milliseconds(), CreatedMs: r.Created.UnixMilli(), Substrate: r.Substrate,
		Autonomous: r.Autonomous, Bin: r.Bin, Args: r.Args, ExitCode: r.ExitCode}
}

func (d *daemon) list() []herd.Member {
	d.mu.Lock()
	live := make([]*member, 0, len(d.members))
	for _, m := range d.members {
		live = append(live, m)
	}
	old := make([]manifestRow, 0, len(d.remembered))
	for _, r := range d.remembered {
		old = append(old, r)
	}
	d.mu.Unlock()
	out := make([]herd.Member, 0, len(live)+len(old))
	for _, m := range live {
		out = append(out, *d.row(m))
	}
	for _, r := range old {
		out = append(out, rememberedRow(r))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedMs != out[j].CreatedMs {
			return out[i].CreatedMs < out[j].CreatedMs
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func hList(ctx context.Context, sc *serverConn, _ json.RawMessage) (any, error) {
	return herd.ListResult{Members: sc.d.list()}, nil
}

// ---- input ----

func hPrompt(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.PromptParams
	if err := decode(herd.MethodPrompt, params, &p); err != nil {
		return nil, err
	}
	if err := herd.CheckPromptText(p.Text); err != nil {
		return nil, err
	}
	d := sc.d
	m, err := d.liveMember(p.Name)
	if err != nil {
		return nil, err
	}
	var keys *state.Answer // an answer that is keys to press (a menu option, a permission)
	if p.Answer {
		if err := d.awaitQuestion(ctx, m, "prompt --answer"); err != nil {
			return nil, err
		}
		a, err := d.resolveAnswer(m, p.Text)
		if err != nil {
			return nil, err
		}
		if len(a.Keys) > 0 {
			if err := d.stillAsking(m); err != nil {
				return nil, err
			}
			keys = &a
		}
	}
	states, err := parseWaitStates(p.States, []string{herd.StateBlocked, herd.StateDone, herd.StateIdle})
	if err != nil {
		return nil, err
	}
	if p.Continue != "" && (p.Answer || p.Now) {
		return nil, exitcode.New(exitcode.Usage, "continue queues a follow-up into a running task: it does not go with answer or now")
	}
	if err := m.kind.acceptPrompt(p); err != nil {
		return nil, err
	}
	// Subscribe before typing so the reaction to this prompt cannot be missed. The decision to
	// queue or type is taken under the state lock, so parallel prompts line up in one queue.
	var (
		sub *busSub
		qp  *queuedPrompt
	)
	d.state.lock()
	cur := m.reading
	queue := !p.Answer && !p.Now && (p.Continue != "" || m.busyLocked())
	if cur.State == herd.StateBlocked && !p.Answer && !queue {
		d.state.unlock()
		kind := cur.BlockedOn
		if kind == "" {
			kind = "blocked"
		}
		return nil, m.kind.blockedRefusal(kind)
	}
	if p.Continue != "" && !m.takesFollowUpLocked(p.Continue) {
		d.state.unlock()
		return nil, exitcode.New(exitcode.Usage, "task %s is neither the running task of %s nor queued on it: only a task that has not ended takes a follow-up (see `mosh herd task %s`)", p.Continue, m.name, p.Continue)
	}
	if queue {
		qp = &queuedPrompt{text: p.Text, id: p.Continue, cont: p.Continue != ""}
		m.enqueueLocked(qp)
	} else {
		m.typing = "-" // the member is ours until the prompt is typed (or sent)
	}
	if p.Wait {
		sub = d.bus.subscribeLocked([]string{m.name}, true)
	}
	d.state.unlock()
	if sub != nil {
		defer d.bus.unsubscribe(sub)
	}

	res := herd.PromptResult{Name: m.name}
	switch {
	case qp != nil:
		if res, err = d.enqueuePrompt(m, qp, cur); err != nil {
			return nil, err
		}
	case keys != nil:
		task, err := d.pressAnswer(ctx, m, p.Text, *keys, p.By)
		d.doneTyping(m)
		res.Task = task
		if err != nil {
			return nil, err
		}
	default:
		task, err := m.kind.promptNow(p, cur)
		res.Task = task
		if err != nil {
			return nil, err
		}
	}
	res.Sent = true
	if !p.Wait {
		return res, nil
	}
	out := d.awaitAfterPrompt(ctx, m, sub, states, time.Duration(p.TimeoutMs)*time.Millisecond, res.Task, qp != nil)
	res.Outcome, res.State, res.ExitCode, res.ExitReason, res.TaskState = out.Outcome, out.State, out.ExitCode, out.ExitReason, out.taskState
	// What the answer reports (e.g. the task's end) is in the ledger before the caller hears it.
	d.lw.flush(m.name)
	return res, nil
}

// typeNow types a prompt at once (the member is at rest, or --now, or an answer): the task is
// minted before the first key (tasks_record.go), then the text goes in and the member claims
// working. The caller set m.typing.
func (d *daemon) typeNow(m *member, text string, cur herd.Reading, answer bool, by string) (string, error) {
	watched := false // the terminal is handed to the prompt's watch (submit.go), which releases it
	defer func() {
		if !watched {
			d.doneTyping(m)
		}
	}()
	task, err := d.submitPrompt(m, text, cur, answer, by)
	if err != nil {
		return "", err
	}
	d.withState(func() {
		m.typing = task
	})
	if !answer {
		d.clearInput(m)
	}
	typed := time.Now()
	if err := m.typePrompt(text); err != nil {
		d.promptFailed(m, task, err)
		return task, err
	}
	d.promptTyped(m, task)
	// The engine may not repaint for a while: until it does, the member reads working (the
	// tracker's prompt claim), so no waiter is answered with the previous turn's done or idle.
	m.trk.Prompted(time.Now())
	d.refresh(m, false)
	if !answer && len(m.spec.Resubmit) > 0 {
		// Answered now; the terminal stays taken until the engine took the prompt.
		watched = true
		go func() {
			defer d.doneTyping(m)
			d.confirmTaken(m, text, typed)
		}()
	}
	return task, nil
}

func hSendKeys(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.SendKeysParams
	if err := decode(herd.MethodSendKeys, params, &p); err != nil {
		return nil, err
	}
	presses, err := encodePresses(p.Keys)
	if err != nil {
		return nil, err
	}
	m, err := sc.d.liveMember(p.Name)
	if err != nil {
		return nil, err
	}
	term, err := m.kind.terminal("send-keys")
	if err != nil {
		return nil, err
	}
	// An answer waits for the question on screen (answer.go); an interrupt (C-c alone) is not an
	// answer and goes at once, as does anything with now.
	if !p.Now && !isInterrupt(presses) {
		if err := sc.d.awaitQuestion(ctx, m, "send-keys"); err != nil {
			return nil, err
		}
	}
	sc.d.noteKeys(m, p.Keys)
	n, err := term.writePresses(ctx, presses)
	if err != nil {
		return nil, err
	}
	return herd.SendKeysResult{Name: m.name, Bytes: n}, nil
}

func hRead(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.ReadParams
	if err := decode(herd.MethodRead, params, &p); err != nil {
		return nil, err
	}
	m, err := sc.d.lookup(p.Name)
	if err != nil {
		return nil, err
	}
	if p.Lines <= 0 {
		p.Lines = herd.DefaultReadLines
	}
	return m.kind.read(p), nil
}

func (p ptyMember) read(rp herd.ReadParams) herd.ReadResult {
	m := p.member
	snap := m.scr.Snapshot()
	r := herd.ReadResult{Name: m.name, Screen: m.scr.Text(rp.Lines), AltScreen: snap.AltScreen, Title: snap.Title}
	if rp.Grid {
		g := m.scr.Grid()
		r.Grid = &g
	}
	m.d.withState(func() {
		r.State, r.BlockedOn, r.Authority = m.reading.State, m.reading.BlockedOn, m.reading.Authority
	})
	return r
}

func hResize(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.AttachParams
	if err := decode(herd.MethodResize, params, &p); err != nil {
		return nil, err
	}
	m, err := sc.d.liveMember(p.Name)
	if err != nil {
		return nil, err
	}
	term, err := m.kind.terminal("resize")
	if err != nil {
		return nil, err
	}
	if p.Cols <= 0 || p.Rows <= 0 {
		return nil, exitcode.New(exitcode.Usage, "resize needs cols and rows above 0")
	}
	term.resize(p.Cols, p.Rows)
	cols, rows := term.size()
	return herd.AttachResult{Name: m.name, Cols: cols, Rows: rows}, nil
}

// ---- lifecycle ----

// forget removes a member from the daemon and the manifest and publishes its removal. Its
// queued prompts end canceled; a member whose process did not exit under this daemon (remembered
// from before a restart) gets a gone transition, so its time stops accruing.
func (d *daemon) forget(name string) {
	d.mu.Lock()
	m := d.members[name]
	delete(d.members, name)
	delete(d.remembered, name)
	d.mu.Unlock()
	exited := false
	if m != nil {
		var ids []string
		d.withState(func() { ids, exited = m.drainQueueLocked(), m.exited })
		d.closeQueued(m, ids, ledger.StateCanceled, "the member was removed before it was typed")
	}
	d.lw.do(name, func() {
		if err := d.manifest.Delete(name); err != nil {
			d.logger.Printf("manifest: delete %s: %v", name, err)
		}
		if d.tasks != nil {
			id, err := d.tasks.Reconcile(name, time.Now(), "the member was removed")
			if err != nil {
				d.logger.Printf("ledger: reconcile %s: %v", name, err)
			}
			if id == "" && !exited {
				if _, err := d.tasks.RecordTransition(name, ledger.Transition{At: time.Now(), State: herd.StateGone, Authority: herd.AuthorityRuntime, Note: "the member was removed"}); err != nil {
					d.logger.Printf("ledger: %s gone: %v", name, err)
				}
			}
		}
	})
	d.withState(func() {
		if m != nil {
			m.removed = true
		}
		d.bus.emitLocked(herd.Event{Type: herd.EventRemoved, Name: name, State: herd.StateGone, Authority: herd.AuthorityRuntime, AtMs: time.Now().UnixMilli()})
	})
	d.releaseMemorySoon() // once the batch of removals is over (heaprelease.go)
}

func hKill(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.KillParams
	if err := decode(herd.MethodKill, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	names := p.Names
	if p.All {
		names = d.allNames()
	} else if len(names) == 0 {
		return nil, exitcode.New(exitcode.Usage, "kill needs member names or --all: mosh herd kill NAME…")
	}
	res := herd.KillResult{Killed: []string{}}
	for _, n := range names {
		if looksLikeTaskID(n) {
			continue
		}
		if err := herd.CheckName(n); err != nil {
			return nil, err
		}
	}
	for _, n := range names {
		d.mu.Lock()
		m, live := d.members[n]
		row, old := d.remembered[n]
		d.mu.Unlock()
		if !live && !old && looksLikeTaskID(n) {
			// kill t-N: a queued task is removed untyped; a running one is not killed (that is
			// the member's process): interrupt it, or kill the member.
			if d.tasks == nil {
				return nil, d.ledgerUnavailable()
			}
			if err := d.killTask(n); err != nil {
				return nil, err
			}
			res.Canceled = append(res.Canceled, n)
			continue
		}
		switch {
		case live:
			canceled, err := m.kind.kill()
			if err != nil {
				return nil, err
			}
			if canceled {
				res.Canceled = append(res.Canceled, n)
			} else {
				res.Killed = append(res.Killed, n)
			}
		case old:
			if pid := orphanPid(row, d.dir); pid > 0 {
				endOrphan(pid)
			}
			d.forget(n)
			res.Killed = append(res.Killed, n)
		default:
			res.Missing = append(res.Missing, n)
		}
	}
	if len(res.Killed) == 0 && len(res.Canceled) == 0 && len(res.Missing) > 0 {
		return nil, exitcode.New(exitcode.Gone, "no member named %s: see `mosh ps`", strings.Join(res.Missing, ", "))
	}
	return res, nil
}

func hPrune(ctx context.Context, sc *serverConn, _ json.RawMessage) (any, error) {
	d := sc.d
	names := []string{}
	for _, r := range d.exitedAndRemembered() {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	for _, n := range names {
		d.forget(n)
	}
	return herd.PruneResult{Pruned: names}, nil
}

// exitedAndRemembered lists what prune forgets and restore restarts: the remembered rows (of
// members a previous daemon ran), and the members of this daemon whose process exited, as rows.
func (d *daemon) exitedAndRemembered() []manifestRow {
	var rows []manifestRow
	d.mu.Lock()
	for _, r := range d.remembered {
		rows = append(rows, r)
	}
	live := make([]*member, 0, len(d.members))
	for _, m := range d.members {
		live = append(live, m)
	}
	d.mu.Unlock()
	d.withState(func() {
		for _, m := range live {
			if m.exited {
				rows = append(rows, manifestRow{Name: m.name, Kind: herd.KindLocal, Engine: m.engine, Bin: m.bin, Args: m.args, Cwd: m.cwd,
					Substrate: herd.SubstratePty, Autonomous: m.autonomous, Created: m.created})
			}
		}
	})
	return rows
}

func hRestore(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.RestoreParams
	if err := decode(herd.MethodRestore, params, &p); err != nil {
		return nil, err
	}
	d := sc.d
	rows := d.exitedAndRemembered()
	sort.Slice(rows, func(i, j int) bool { return rows[i].Created.Before(rows[j].Created) })

	res := herd.RestoreResult{DryRun: p.DryRun, Actions: []herd.RestoreAction{}}
	for _, r := range rows {
		act := herd.RestoreAction{Name: r.Name, Action: "restart", Bin: r.Bin, Args: r.Args, Cwd: r.Cwd}
		spec, known := d.engines.Lookup(r.Engine)
		own := r.Args
		var resume []string
		if known && len(spec.ResumeArgs) > 0 {
			// A manifest written before resume args were kept apart may hold them already.
			own = stripResume(own, spec.ResumeArgs)
			if p.Resume {
				resume = spec.ResumeArgs
			}
		}
		act.Args = append(append([]string(nil), resume...), own...)
		if r.Kind == herd.KindRemote {
			act.Action, act.Reason = "skip", "remote members are not restarted by the local daemon"
		} else if _, err := checkCwd(r.Cwd); err != nil {
			act.Action, act.Reason = "skip", err.Error()
		} else if err := herd.IsExecutable(r.Bin); err != nil {
			act.Action, act.Reason = "skip", fmt.Sprintf("%v: reinstall it, or `mosh herd prune` to forget %s", err, r.Name)
		}
		orphan := orphanPid(r, d.dir)
		if orphan > 0 {
			act.Reason = "its old process (pid " + strconv.Itoa(orphan) + ") outlived the daemon and is stopped first"
		}
		if act.Action == "restart" && !p.DryRun {
			if orphan > 0 {
				endOrphan(orphan)
			}
			if err := d.relaunch(r, own, resume, p.Env, spec, known); err != nil {
				act.Action, act.Reason = "skip", err.Error()
			} else if m, ok := d.memberByName(r.Name); ok {
				act.Pid = m.pid
			}
		}
		res.Actions = append(res.Actions, act)
	}
	return res, nil
}

// stripResume drops leading copies of the engine's resume arguments from args.
func stripResume(args, resume []string) []string {
	for len(resume) > 0 && len(args) >= len(resume) && slices.Equal(args[:len(resume)], resume) {
		args = args[len(resume):]
	}
	return args
}

// relaunch restarts a remembered or exited member under the same name: args are its own,
// resume goes before them for this launch only.
func (d *daemon) relaunch(r manifestRow, args, resume, env []string, spec engineSpec, known bool) error {
	d.mu.Lock()
	if d.reserved[r.Name] {
		d.mu.Unlock()
		return exitcode.New(exitcode.Usage, "%s is being started by another request", r.Name)
	}
	if m, ok := d.members[r.Name]; ok {
		if exited, _ := d.exitedOf(m); !exited {
			d.mu.Unlock()
			return exitcode.New(exitcode.Usage, "%s is already running", r.Name)
		}
	}
	d.reserved[r.Name] = true
	d.mu.Unlock()
	engine := r.Engine
	if engine == "" {
		engine = engineLabel(d.engines, r.Bin)
	}
	_, err := d.launch(launchSpec{name: r.Name, engine: engine, spec: spec, known: known, bin: r.Bin, args: args, resumeArgs: resume, cwd: r.Cwd, env: env, autonomous: r.Autonomous})
	return err
}

// ---- reports ----

func hReport(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.ReportParams
	if err := decode(herd.MethodReport, params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return herd.ReportResult{}, nil // hooks fire outside the herd too: silently nothing
	}
	var state, kind string
	if p.State == "" && len(p.Payload) > 0 {
		// No state: the engine's hook spec maps the payload's hook_event_name.
	} else {
		arg := p.State
		if p.Kind != "" {
			arg += ":" + p.Kind
		}
		var err error
		if state, kind, err = herd.ParseStateArg(arg); err != nil {
			return nil, err
		}
	}
	if p.TTLMs < 0 {
		return nil, exitcode.New(exitcode.Usage, "ttl must not be negative (it is capped at %s)", herd.MaxReportTTL)
	}
	ttl := time.Duration(p.TTLMs) * time.Millisecond
	if ttl == 0 || ttl > herd.MaxReportTTL {
		ttl = herd.MaxReportTTL
	}
	m, err := sc.d.lookup(p.Name)
	if err != nil {
		return nil, err
	}
	if err := m.kind.acceptReport(); err != nil {
		return nil, err
	}
	// A nested engine's hooks (or an earlier launch's orphan) report under the same name: not
	// this member's state, and not its task's end (reporter.go).
	peer := peerPid(sc.c)
	if why := sc.d.foreignReport(m, p.Nonce, peer); why != "" {
		sc.d.noteIgnored(m, state, json.RawMessage(p.Payload), peer, why)
		return herd.ReportResult{Name: m.name, Accepted: false, State: sc.d.readingOf(m).State, Ignored: why}, nil
	}
	now := time.Now()
	// Taken before the tracker sees the report: its change callback may close the task, and a
	// Stop payload's last_assistant_message is that task's artifact.
	sc.d.hookArrived(m, p.Payload)
	defer sc.d.withState(func() { m.staleHook = false })
	defer sc.d.noteReport(m, now)
	if err := m.trk.Report(state, kind, ttl, json.RawMessage(p.Payload), now); err != nil {
		if errors.Is(err, errReportIgnored) {
			return herd.ReportResult{Name: m.name, Accepted: false, State: sc.d.readingOf(m).State}, nil
		}
		return nil, exitcode.Wrap(err, exitcode.Usage)
	}
	sc.d.refresh(m, false)
	return herd.ReportResult{Name: m.name, Accepted: true, State: sc.d.readingOf(m).State, ExpiresMs: now.Add(ttl).UnixMilli()}, nil
}

// ---- status ----

func (d *daemon) counts() (members, live, blocked int) {
	for _, r := range d.list() {
		members++
		if r.Alive {
			live++
			if r.State == herd.StateBlocked {
				blocked++
			}
		}
	}
	return
}

func hStatus(ctx context.Context, sc *serverConn, _ json.RawMessage) (any, error) {
	d := sc.d
	n, live, blocked := d.counts()
	return herd.StatusResult{Substrate: herd.SubstratePty, Socket: d.sock, Dir: d.dir, Members: n, Live: live, Blocked: blocked,
		DaemonPid: os.Getpid(), UptimeMs: time.Since(d.started).Milliseconds()}, nil
}

func hDaemonStatus(ctx context.Context, sc *serverConn, _ json.RawMessage) (any, error) {
	d := sc.d
	n, live, _ := d.counts()
	return herd.DaemonStatusResult{Running: true, Pid: os.Getpid(), Socket: d.sock, Dir: d.dir, UptimeMs: time.Since(d.started).Milliseconds(),
		Members: n, Live: live, Clients: int(d.clients.Load()), Version: herd.Version, Seq: d.bus.lastSeq()}, nil
}

func hDaemonStop(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.DaemonStopParams
	if err := decode(herd.MethodDaemonStop, params, &p); err != nil {
		return nil, err
	}
	var running []string
	for _, r := range sc.d.list() {
		if r.Alive {
			running = append(running, r.Name)
		}
	}
	if len(running) > 0 && !p.Yes {
		return nil, exitcode.New(exitcode.Usage, "%d member(s) still running (%s): pass --yes to stop them with the daemon", len(running), strings.Join(running, ", "))
	}
	return herd.DaemonStopResult{Stopped: true, Killed: running, Pid: os.Getpid()}, nil
}

func hExplain(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.NameParams
	if err := decode(herd.MethodExplain, params, &p); err != nil {
		return nil, err
	}
	m, err := sc.d.lookup(p.Name)
	if err != nil {
		return nil, err
	}
	r := herd.ExplainResult{Name: m.name, Engine: m.engine}
	m.kind.explain(&r)
	return r, nil
}

func (p ptyMember) explain(r *herd.ExplainResult) {
	d, m := p.d, p.member
	m.trk.Explain(time.Now(), r)
	d.withState(func() {
		r.State, r.BlockedOn, r.Authority = m.reading.State, m.reading.BlockedOn, m.reading.Authority
		r.IgnoredReports = append([]herd.IgnoredReport(nil), m.ignored...)
		if m.exited {
			rt := m.reading
			r.Runtime = &rt
			r.Decided = fmt.Sprintf("the process exited with code %d", m.exitCode)
			r.ReasonCode, r.RuleSource = herd.ReasonRuntimeExit, ""
		}
	})
	snap := m.scr.Snapshot()
	r.Title = snap.Title
	for _, l := range snap.Lines {
		if strings.TrimSpace(l) != "" {
			r.Bottom = append(r.Bottom, l)
		}
	}
	if len(r.Bottom) > 12 {
		r.Bottom = r.Bottom[len(r.Bottom)-12:]
	}
}

func hDoctor(ctx context.Context, sc *serverConn, _ json.RawMessage) (any, error) {
	return sc.d.doctor(), nil
}

// ---- subscriptions ----

func hSubscribe(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.SubscribeParams
	if err := decode(herd.MethodSubscribe, params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, exitcode.New(exitcode.Usage, "subscribe needs an id chosen by the client (it is echoed in every notification)")
	}
	for _, n := range p.Names {
		if err := herd.CheckName(n); err != nil {
			return nil, err
		}
	}
	sc.mu.Lock()
	if sc.subs == nil {
		sc.mu.Unlock()
		return nil, exitcode.New(exitcode.Infra, "connection closing")
	}
	if _, dup := sc.subs[p.ID]; dup {
		sc.mu.Unlock()
		return nil, exitcode.New(exitcode.Usage, "subscription id %q is already in use on this connection", p.ID)
	}
	var sub *busSub
	var seq uint64
	if p.Screens {
		sub, seq = sc.d.bus.subscribeScreens(p.Names)
	} else {
		sub, seq = sc.d.bus.subscribe(p.Names, false)
	}
	sc.subs[p.ID] = sub
	sc.mu.Unlock()
	sc.wg.Add(1)
	go func() {
		defer sc.wg.Done()
		sc.pumpEvents(p.ID, sub)
	}()
	return herd.SubscribeResult{Subscription: p.ID, Seq: seq}, nil
}

// pumpEvents forwards a subscription's events as notifications until it ends.
func (sc *serverConn) pumpEvents(id string, sub *busSub) {
	for {
		evs, ended := sub.take()
		for _, e := range evs {
			if sc.notify(herd.NotifyEvent, herd.EventNotification{Subscription: id, Event: e}) != nil {
				sc.d.bus.unsubscribe(sub)
				return
			}
		}
		if ended {
			if sub.overflowed() {
				_ = sc.notify(herd.NotifySubscriptionEnded, map[string]string{"subscription": id, "reason": "the client read too slowly and more than 65536 events queued: resubscribe"})
			}
			return
		}
		if len(evs) > 0 {
			continue
		}
		select {
		case <-sub.wake():
		case <-sc.ctx.Done():
			return
		}
	}
}

func hUnsubscribe(ctx context.Context, sc *serverConn, params json.RawMessage) (any, error) {
	var p herd.SubscribeParams
	if err := decode(herd.MethodUnsubscribe, params, &p); err != nil {
		return nil, err
	}
	sc.mu.Lock()
	sub := sc.subs[p.ID]
	delete(sc.subs, p.ID)
	sc.mu.Unlock()
	if sub != nil {
		sc.d.bus.unsubscribe(sub)
	}
	return map[string]bool{"ok": sub != nil}, nil
}
