package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/vocab"
)

type spawnIn struct {
	Prompt       string   `json:"prompt" jsonschema:"The task, self-contained: goal, constraints, acceptance criteria, tests."`
	Kind         *string  `json:"kind,omitempty" jsonschema:"Engine from the herd's engines table (claude, codex, pi, opencode, gemini, …); default from config (pi)."`
	Model        *string  `json:"model,omitempty" jsonschema:"Model alias from the engines table, or a model name the engine takes."`
	Thinking     *string  `json:"thinking,omitempty" jsonschema:"Thinking level, for engines whose table row has thinkingLevels."`
	Name         *string  `json:"name,omitempty" jsonschema:"Member name; default <kind>-<id>."`
	Cwd          *string  `json:"cwd,omitempty" jsonschema:"Working directory; default the session cwd. Must be inside allowCwd when configured."`
	Role         *string  `json:"role,omitempty" jsonschema:"worker (default) or reviewer (read-only envelope)."`
	Wait         *bool    `json:"wait,omitempty" jsonschema:"Wait for a settled state (default true); false returns a live handle at once."`
	TimeoutMs    *int64   `json:"timeout_ms,omitempty" jsonschema:"Wait budget in ms (default 900000). A timeout returns status running."`
	AgentArgs    []string `json:"agent_args,omitempty" jsonschema:"Raw flags passed to the engine after its own."`
	ClientTaskID *string  `json:"client_task_id,omitempty" jsonschema:"Idempotency key: a repeat returns the existing task."`
	Isolated     *bool    `json:"isolated,omitempty" jsonschema:"Run in a fresh git worktree on branch <branchPrefix>/<taskId>."`
	Machine      *string  `json:"machine,omitempty" jsonschema:"A remote herd; spawning there is not supported yet (see the error)."`
}

var spawnDef = toolDef{name: "spawn_agent",
	desc: "Delegate a self-contained task to a terminal coding agent (a new herd member): gates, task record, optional isolated git worktree, " +
		"task envelope, wait until idle/done/blocked, then an AgentResult with evidence (final message, result.md, git diff, tests). " +
		"Never answers a blocked agent: if status=blocked, ask the user, then call message_agent with kind ANSWER.",
	allowed: map[string]string{
		"prompt":         "a non-empty string",
		"kind":           "an engine name or alias of the engines table",
		"model":          "a model alias or name (engines without a model flag take none)",
		"thinking":       "one of the engine's thinkingLevels",
		"name":           vocab.NamePattern,
		"cwd":            "an existing directory, inside allowCwd when configured",
		"role":           "worker or reviewer",
		"wait":           "true or false",
		"timeout_ms":     "an integer >= 1 (milliseconds), clamped to 10000..3600000",
		"agent_args":     "an array of strings",
		"client_task_id": "a string of 1..200 characters",
		"isolated":       "true or false",
		"machine":        "a remote member's name or host on the roster",
	},
	mins:     map[string]float64{"timeout_ms": 1},
	enums:    map[string][]any{"role": {"worker", "reviewer"}},
	patterns: map[string]string{"name": vocab.NamePattern},
	defaults: map[string]any{"role": "worker", "wait": true, "isolated": false}, // kind and timeout_ms: the config's (spawnDefFor)
}

// spawnDefFor is spawn_agent as this server registers it: its kind and timeout_ms defaults are
// the config's.
func spawnDefFor(cfg Config) toolDef {
	d := spawnDef
	d.defaults = maps.Clone(spawnDef.defaults)
	d.defaults["kind"] = cfg.DefaultKind
	d.defaults["timeout_ms"] = cfg.DefaultTimeoutMs
	return d
}

// spawnPlan is a validated spawn.
type spawnPlan struct {
	in        spawnIn
	eng       *herd.EngineInfo
	kind      string
	model     string
	thinking  string
	role      string
	name      string
	cwd       string
	wait      bool
	timeout   time.Duration
	isolated  bool
	clientKey string
	args      []string
}

// engines is the engines table of this server's herd, through the client (herd.Engines).
func (s *Server) engines() *herd.EnginesResult {
	o := s.c.Options()
	o.Home = s.home
	return herd.Engines(o)
}

func (s *Server) planSpawn(in spawnIn) (*spawnPlan, error) {
	bad := func(p, got string) error {
		return &paramError{param: p, allowed: spawnDef.allowed[p], got: got}
	}
	p := &spawnPlan{in: in}
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, bad("prompt", "an empty or missing prompt")
	}
	if err := herd.CheckPromptText(in.Prompt); err != nil {
		return nil, &paramError{param: "prompt", allowed: "text (newlines and tabs are fine): " + err.Error()}
	}
	p.role = "worker"
	if in.Role != nil {
		if *in.Role != "worker" && *in.Role != "reviewer" {
			return nil, bad("role", fmt.Sprintf("%q", *in.Role))
		}
		p.role = *in.Role
	}
	ms, err := intParam("timeout_ms", in.TimeoutMs, s.cfg.DefaultTimeoutMs, minTimeoutMs, maxTimeoutMs, true, spawnDef.allowed["timeout_ms"])
	if err != nil {
		return nil, err
	}
	p.timeout = time.Duration(ms) * time.Millisecond
	p.wait = boolOr(in.Wait, true)
	p.isolated = boolOr(in.Isolated, false)
	if in.ClientTaskID != nil {
		if l := len(*in.ClientTaskID); l == 0 || l > 200 {
			return nil, bad("client_task_id", fmt.Sprintf("%d characters", l))
		}
		p.clientKey = *in.ClientTaskID
	}
	kind := s.cfg.DefaultKind
	if in.Kind != nil {
		kind = *in.Kind
	}
	tab := s.engines()
	eng, err := tab.Resolve(kind)
	if err != nil {
		return nil, &paramError{param: "kind", allowed: "one of " + strings.Join(tab.Names(), ", "), got: fmt.Sprintf("%q", kind)}
	}
	p.eng, p.kind = eng, eng.Name
	model := eng.DefaultModel
	if in.Model != nil {
		model = *in.Model
	}
	if model != "" {
		if eng.ModelFlag == "" {
			return nil, &paramError{param: "model", allowed: fmt.Sprintf("none: kind %s takes no model (its engines-table row has no modelFlag)", eng.Name), got: fmt.Sprintf("%q", model)}
		}
		if m, ok := eng.ModelAliases[model]; ok {
			model = m
		}
		p.model = model
		p.args = append(p.args, eng.ModelFlag, model)
	}
	if in.Thinking != nil && *in.Thinking != "" {
		if len(eng.ThinkingArgs) == 0 {
			return nil, &paramError{param: "thinking", allowed: fmt.Sprintf("none: kind %s takes no thinking level (its engines-table row has no thinkingArgs)", eng.Name), got: fmt.Sprintf("%q", *in.Thinking)}
		}
		if !slices.Contains(eng.ThinkingLevels, *in.Thinking) {
			return nil, &paramError{param: "thinking", allowed: fmt.Sprintf("one of %s for kind %s", strings.Join(eng.ThinkingLevels, ", "), eng.Name), got: fmt.Sprintf("%q", *in.Thinking)}
		}
		p.thinking = *in.Thinking
		for _, a := range eng.ThinkingArgs {
			p.args = append(p.args, strings.ReplaceAll(a, "{level}", p.thinking))
		}
	}
	if in.Name != nil {
		if !herd.ValidName(*in.Name) {
			return nil, bad("name", fmt.Sprintf("%q", *in.Name))
		}
		p.name = *in.Name
	}
	if in.Machine != nil && *in.Machine != "" {
		return nil, fmt.Errorf("spawning on machine %q is not supported: a remote herd (another `mosh herd serve`) has no A2A method that starts a member, "+
			"and this adapter would need file access to the remote checkout for the diff and result.md. What it would take: a herd-level `member.start` "+
			"behind serve's auth plus an artifact channel (docs/protocol.md, \"MCP adapter\"). Today: start the member on that machine "+
			"(`mosh herd start` there), `mosh herd remote add` it here, then use message_agent / get_agent_result / list_agents with it", *in.Machine)
	}
	cwd := s.cwd
	if in.Cwd != nil && *in.Cwd != "" {
		cwd = expandHome(*in.Cwd)
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(s.cwd, cwd)
		}
	}
	p.cwd = filepath.Clean(cwd)
	return p, nil
}

// gates: enabled, cwd exists and is allowed.
func (s *Server) gates(p *spawnPlan) error {
	if !s.cfg.Enabled {
		return fmt.Errorf("spawning is disabled (\"enabled\": false in %s): set it to true to delegate; running agents are not affected", ConfigPath(s.home))
	}
	st, err := os.Stat(p.cwd)
	if err != nil || !st.IsDir() {
		return &paramError{param: "cwd", allowed: "an existing directory", got: fmt.Sprintf("%q (%v)", p.cwd, orNotDir(err))}
	}
	if len(s.cfg.AllowCwd) > 0 {
		real, err := filepath.EvalSymlinks(p.cwd)
		if err != nil {
			real = p.cwd
		}
		for _, a := range s.cfg.AllowCwd {
			ra, err := filepath.EvalSymlinks(a)
			if err != nil {
				ra = filepath.Clean(a)
			}
			if real == ra || strings.HasPrefix(real, ra+string(filepath.Separator)) {
				return nil
			}
		}
		return &paramError{param: "cwd", allowed: "a directory inside allowCwd (" + strings.Join(s.cfg.AllowCwd, ", ") + ", from " + ConfigPath(s.home) + ")", got: fmt.Sprintf("%q", p.cwd)}
	}
	return nil
}

func orNotDir(err error) error {
	if err == nil {
		return errors.New("not a directory")
	}
	return err
}

func (s *Server) spawn(ctx context.Context, in spawnIn) (any, string, error) {
	p, err := s.planSpawn(in)
	if err != nil {
		return nil, "", err
	}
	if err := s.gates(p); err != nil {
		return nil, "", err
	}
	deadline := time.Now().Add(p.timeout)
	if p.clientKey != "" {
		s.spawnM.Lock()
		existing := s.store.byClientTaskID(p.clientKey)
		s.spawnM.Unlock()
		if existing != nil {
			return s.resultOf(ctx, existing, p.wait, deadline)
		}
	}
	id := newTaskID()
	if err := s.slots.acquire(ctx, id, time.Duration(s.cfg.QueueTimeoutMs)*time.Millisecond); err != nil {
		return nil, "", err
	}
	s.spawnM.Lock()
	if p.clientKey != "" {
		if existing := s.store.byClientTaskID(p.clientKey); existing != nil {
			s.spawnM.Unlock()
			s.slots.release(id)
			return s.resultOf(ctx, existing, p.wait, deadline)
		}
	}
	if p.name == "" {
		p.name = p.kind + "-" + id[2:8]
		if !herd.ValidName(p.name) {
			p.name = "agent-" + id[2:8]
		}
	}
	r := &record{ID: id, ClientTaskID: p.clientKey, Status: recStarting, Role: p.role, Kind: p.kind, Model: p.model, Thinking: p.thinking,
		Name: p.name, Cwd: p.cwd, WorkDir: p.cwd, Prompt: p.in.Prompt, AgentArgs: p.in.AgentArgs, CreatedMs: time.Now().UnixMilli()}
	err = s.store.create(r) // the record exists before the member: a crash leaves it inspectable
	s.spawnM.Unlock()
	if err != nil {
		s.slots.release(id)
		return nil, "", err
	}
	s.store.prune(s.cfg.Retention)
	fail := func(err error) (any, string, error) {
		r.Status, r.Error = statusFailed, err.Error()
		r.SettledMs = time.Now().UnixMilli()
		_ = s.store.save(r)
		s.slots.release(id)
		res := s.harvest(ctx, r)
		return res, render(res), nil
	}
	if p.isolated {
		if err := s.makeWorktree(ctx, r); err != nil {
			return fail(err)
		}
	}
	if head, err := git(ctx, s.environ, r.WorkDir, "rev-parse", "HEAD"); err == nil {
		r.BaselineHead = strings.TrimSpace(head)
		if st, err := git(ctx, s.environ, r.WorkDir, "status", "--porcelain"); err == nil {
			for _, l := range lines(st) {
				if len(l) > 3 {
					r.DirtyAtStart = append(r.DirtyAtStart, strings.TrimSpace(l[2:]))
				}
			}
		}
	}
	_ = s.store.save(r)
	args := append([]string{}, p.args...)
	for _, a := range p.eng.AddDirArgs {
		args = append(args, strings.ReplaceAll(a, "{dir}", r.ArtifactDir))
	}
	args = append(args, p.in.AgentArgs...)
	if _, err := s.c.Start(ctx, herd.StartParams{Engine: p.kind, Name: p.name, Cwd: r.WorkDir, Agent: s.cfg.Autonomous && p.role == "worker", Args: args}); err != nil {
		return fail(fmt.Errorf("starting %s (kind %s) in %s: %v", p.name, p.kind, r.WorkDir, err))
	}
	typed, err := s.typeEnvelope(ctx, r, deadline)
	if err != nil {
		return fail(err)
	}
	if typed && p.wait {
		s.waitTask(ctx, r, deadline)
	}
	res := s.harvest(ctx, r)
	if res.Status == statusRunning {
		s.watch(r)
	}
	return res, render(res), nil
}

// typeEnvelope waits until the agent is at its prompt, then types the task envelope and records
// its herd task. When the agent shows a dialog first (a trust or login question: blocked) or does
// not reach its prompt in time (running), nothing is typed and the record says so; the envelope
// is typed later, once the host answered (message_agent) or the agent got there (get_agent_result).
func (s *Server) typeEnvelope(ctx context.Context, r *record, deadline time.Time) (bool, error) {
	boot := min(time.Until(deadline), 2*time.Minute)
	if boot < time.Second {
		boot = time.Second
	}
	w, err := s.c.Wait(ctx, []string{r.Name}, herd.WaitOptions{States: []string{herd.StateIdle, herd.StateDone, herd.StateBlocked}, Timeout: boot})
	if err != nil {
		if w != nil && w.Outcome == herd.OutcomeTimeout {
			return false, s.store.update(r.ID, r, func(cur *record) {
				cur.Status = recRunning
				cur.Error = fmt.Sprintf("the agent did not reach its prompt within %s; the envelope is typed once it does (get_agent_result)", boot.Round(time.Second))
			})
		}
		return false, fmt.Errorf("%s did not start: %v", r.Name, err)
	}
	if len(w.Results) == 1 && w.Results[0].State == herd.StateBlocked {
		return false, s.store.update(r.ID, r, func(cur *record) {
			cur.Status = statusBlocked
			cur.Error = "the agent shows a dialog before its task (a trust or login question): ask the user, answer with message_agent kind ANSWER; the envelope is typed after"
		})
	}
	pr, err := s.c.Prompt(ctx, r.Name, envelope(r), herd.PromptOptions{})
	if err != nil {
		return false, fmt.Errorf("typing the task envelope into %s: %v", r.Name, err)
	}
	return true, s.store.update(r.ID, r, func(cur *record) {
		cur.HerdTask, cur.Status, cur.StartedMs, cur.Error = pr.Task, recRunning, time.Now().UnixMilli(), ""
	})
}

// envelopePending: the record's agent started but its envelope was never typed.
func envelopePending(r *record) bool {
	return r.HerdTask == "" && (r.Status == recRunning || r.Status == statusBlocked)
}

// resultOf is get_agent_result on an owned record: wait (when asked and running) then harvest.
func (s *Server) resultOf(ctx context.Context, r *record, wait bool, deadline time.Time) (any, string, error) {
	if envelopePending(r) {
		if m := s.member(ctx, r.Name); m != nil && (m.State == herd.StateIdle || m.State == herd.StateDone) {
			if _, err := s.typeEnvelope(ctx, r, deadline); err != nil {
				_ = s.store.update(r.ID, r, func(cur *record) { cur.Status, cur.Error = statusFailed, err.Error() })
			}
		}
	}
	if wait {
		s.waitTask(ctx, r, deadline)
	}
	res := s.harvest(ctx, r)
	return res, render(res), nil
}

// waitTask waits until the record's herd task settles (closed, or blocked) or the member goes,
// bounded by deadline. It subscribes to the member's events, reads the task once, then lets the
// events decide (an event names the task it was recorded against and whether it closed it): a
// read of an open task while its end is being recorded would be reconciled as gone.
func (s *Server) waitTask(ctx context.Context, r *record, deadline time.Time) {
	if r.HerdTask == "" {
		return
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	sub, err := s.c.Subscribe(ctx, r.Name)
	if err != nil {
		return
	}
	defer sub.Close()
	t, err := s.c.Task(ctx, r.HerdTask)
	if err != nil || !t.Open || t.State == herd.StateBlocked {
		return
	}
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return
			}
			switch {
			case ev.Type == herd.EventRemoved || ev.State == herd.StateGone:
				return
			case ev.Task == r.HerdTask && (ev.TaskEnded || ev.State == herd.StateBlocked):
				return
			case ev.Task != "" && ev.Task != r.HerdTask && ev.TaskEnded:
				// Another task ended: ours may be queued behind it, or was closed (superseded).
				if t, err := s.c.Task(ctx, r.HerdTask); err != nil || !t.Open {
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

// watch settles a running record in the background: it waits for the record's herd task to
// settle and harvests it, which records the new status (completed, blocked, failed…) and frees
// the task's concurrency slot, if it holds one. So a record left running by a call that did not
// wait (spawn_agent or message_agent with wait:false, a timeout) moves on by itself. One watcher
// per record: it follows the record's current herd task (message_agent moves it on).
func (s *Server) watch(r *record) {
	id, name := r.ID, r.Name
	first := *r // the caller keeps its record; the watcher reads its own copies
	s.watchMu.Lock()
	if s.watching[id] {
		s.watchMu.Unlock()
		return
	}
	s.watching[id] = true
	s.watchMu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.watchMu.Lock()
			delete(s.watching, id)
			s.watchMu.Unlock()
		}()
		cur := &first
		for s.ctx.Err() == nil {
			s.waitTask(s.ctx, cur, time.Now().Add(time.Hour))
			if s.ctx.Err() != nil {
				return
			}
			next, err := s.store.load(id)
			if err != nil {
				s.slots.release(id)
				return
			}
			res := s.harvest(s.ctx, next)
			if res.Status != statusRunning {
				s.slots.release(id)
				return
			}
			if next.HerdTask == "" {
				// No envelope typed yet (boot timeout): the slot frees when the member goes.
				if _, err := s.c.Wait(s.ctx, []string{name}, herd.WaitOptions{States: []string{herd.StateGone}, Timeout: time.Hour}); err != nil && s.ctx.Err() == nil {
					s.slots.release(id)
					return
				}
			}
			cur = next
		}
	}()
}

// makeWorktree creates the isolated worktree: $MOSH_HOME/mcp/worktrees/<repo>-<taskId> on branch
// <branchPrefix>/<taskId> from HEAD; the agent runs in the same subdirectory of it as cwd.
func (s *Server) makeWorktree(ctx context.Context, r *record) error {
	top, err := git(ctx, s.environ, r.Cwd, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("isolated needs cwd inside a git repository: %v", err)
	}
	top = strings.TrimSpace(top)
	head, err := git(ctx, s.environ, top, "rev-parse", "HEAD")
	if err != nil {
		return fmt.Errorf("isolated needs a repository with at least one commit (%v): commit first, or spawn without isolated", err)
	}
	branch := s.cfg.BranchPrefix + "/" + r.ID
	path := filepath.Join(s.store.dir, "worktrees", filepath.Base(top)+"-"+r.ID)
	if _, err := git(ctx, s.environ, top, "worktree", "add", "-b", branch, path, strings.TrimSpace(head)); err != nil {
		return err
	}
	r.Worktree = &Worktree{Path: path, Branch: branch, Repo: top, Base: strings.TrimSpace(head)}
	rc, _ := filepath.EvalSymlinks(r.Cwd)
	rt, _ := filepath.EvalSymlinks(top)
	r.WorkDir = path
	if rel, err := filepath.Rel(rt, rc); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		r.WorkDir = filepath.Join(path, rel)
	}
	return s.store.save(r)
}

// envelope is the text typed into the agent: the goal made self-contained, where to put the
// result and messages, and how to finish. A reviewer gets a read-only variant.
func envelope(r *record) string {
	first := firstLine(r.Prompt, 300)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", first)
	fmt.Fprintf(&b, "<agent-message from=\"herd:orchestrator\" to=%q>\n", r.Name)
	fmt.Fprintf(&b, "Assignment %s (role: %s) in %s.\n\n", r.ID, r.Role, r.WorkDir)
	b.WriteString("GOAL, CONSTRAINTS, ACCEPTANCE AND TESTS:\n")
	b.WriteString(strings.TrimSpace(r.Prompt))
	b.WriteString("\n\nRULES:\n")
	if r.Role == "reviewer" {
		b.WriteString("- You are a REVIEWER: read only. Do not edit, create or delete files, do not commit, do not run commands that change the checkout.\n")
		b.WriteString("- Report findings as BLOCKER / MAJOR / MINOR / NIT, each with file:line and the fix.\n")
	} else {
		b.WriteString("- Work only inside " + r.WorkDir + ". Do not commit or push unless the goal says so.\n")
		b.WriteString("- Run the tests the goal names (or the project's own) before you finish, and report the command and its outcome.\n")
	}
	fmt.Fprintf(&b, "- When you need a decision, append one JSON line to %s: {\"ts\":\"<RFC3339>\",\"type\":\"BLOCKED\",\"text\":\"<the question>\"} and wait for an ANSWER.\n", filepath.Join(r.ArtifactDir, inboxFile))
	b.WriteString("  Other types: REVIEW_REQUEST, NOTE, COMPLETE.\n")
	fmt.Fprintf(&b, "- At the end write %s: first the lines \"status: completed|blocked\", \"summary: <one line>\", \"tests: <command> (<outcome>)\", \"files: <changed files, comma separated>\", then a blank line and your report.\n", filepath.Join(r.ArtifactDir, "result.md"))
	fmt.Fprintf(&b, "- Your last message is: COMPLETE %s\n", filepath.Join(r.ArtifactDir, "result.md"))
	b.WriteString("</agent-message>")
	return b.String()
}
