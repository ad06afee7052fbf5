package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

func (s *Server) registerMore() {
	addTool(s, messageDef, s.message)
	addTool(s, interruptDef, s.interrupt)
	addTool(s, inboxDef, s.inbox)
	addTool(s, readDef, s.readAgent)
	addTool(s, closeDef, s.closeAgent)
	addTool(s, doctorDef, s.doctor)
}

// ---- message_agent ----

type messageIn struct {
	Target    string  `json:"target" jsonschema:"Task id, herd task id (t-N) or agent name."`
	Message   string  `json:"message" jsonschema:"The text."`
	Machine   *string `json:"machine,omitempty" jsonschema:"A remote member's name or host on the roster."`
	Kind      *string `json:"kind,omitempty" jsonschema:"Protocol header: NOTE, REVIEW_FINDINGS, ACCEPT, REJECT or ANSWER."`
	Round     *int64  `json:"round,omitempty" jsonschema:"Review round for REVIEW_FINDINGS (default 1)."`
	Wait      *bool   `json:"wait,omitempty" jsonschema:"Wait for the target's turn to settle (default false)."`
	TimeoutMs *int64  `json:"timeout_ms,omitempty" jsonschema:"Wait budget in ms (default 600000)."`
}

var messageDef = toolDef{name: "message_agent",
	desc: "Send a follow-up, review findings, an accept/reject or an answer to an agent, wrapped in <agent-message from=\"herd:orchestrator\">. " +
		"When the target is blocked on a question, the message is delivered as the answer (typed as is). Returns the target's AgentResult.",
	allowed: map[string]string{
		"target":     "a task id (tk…), a herd task id (t-N) or an agent name",
		"message":    "a non-empty string",
		"machine":    "a remote member's name or host on the roster",
		"kind":       "NOTE, REVIEW_FINDINGS, ACCEPT, REJECT or ANSWER",
		"round":      "an integer 1..1000",
		"wait":       "true or false",
		"timeout_ms": "an integer >= 1 (milliseconds), clamped to 10000..3600000",
	},
	mins:     map[string]float64{"round": 1, "timeout_ms": 1},
	enums:    map[string][]any{"kind": {"NOTE", "REVIEW_FINDINGS", "ACCEPT", "REJECT", "ANSWER"}},
	defaults: map[string]any{"kind": "NOTE", "round": 1, "wait": false, "timeout_ms": defaultWaitMs},
}

// reviewPrologue is REVIEW_FINDINGS' standard instruction around the findings.
const reviewPrologue = "Fix every BLOCKER and MAJOR finding below, address each MINOR and NIT (or say why not), re-run the tests, update result.md, and reply COMPLETE <path of result.md>."

// Delivery says how message_agent delivered the text.
type Delivery struct {
	Kind     string `json:"kind"`
	As       string `json:"as"` // prompt | answer | queued
	HerdTask string `json:"herdTask,omitempty"`
	Text     string `json:"text,omitempty"`
}

// wrapMessage is the text typed for a message that is not an answer to a blocked agent.
func wrapMessage(to, kind string, round int64, msg string) string {
	header := kind
	body := strings.TrimSpace(msg)
	if kind == "REVIEW_FINDINGS" {
		header = fmt.Sprintf("REVIEW_FINDINGS round %d", round)
		body = reviewPrologue + "\n\n" + body
	}
	return fmt.Sprintf("%s\n<agent-message from=\"herd:orchestrator\" to=%q>\n%s\n</agent-message>", header+": "+firstLine(msg, 200), to, body)
}

func (s *Server) message(ctx context.Context, in messageIn) (any, string, error) {
	if strings.TrimSpace(in.Message) == "" {
		return nil, "", &paramError{param: "message", allowed: messageDef.allowed["message"], got: "an empty message"}
	}
	if err := herd.CheckPromptText(in.Message); err != nil {
		return nil, "", &paramError{param: "message", allowed: "text (newlines and tabs are fine): " + err.Error()}
	}
	kind := "NOTE"
	if in.Kind != nil {
		switch *in.Kind {
		case "NOTE", "REVIEW_FINDINGS", "ACCEPT", "REJECT", "ANSWER":
			kind = *in.Kind
		default:
			return nil, "", &paramError{param: "kind", allowed: messageDef.allowed["kind"], got: fmt.Sprintf("%q", *in.Kind)}
		}
	}
	round, err := intParam("round", in.Round, 1, 1, 1000, false, messageDef.allowed["round"])
	if err != nil {
		return nil, "", err
	}
	ms, err := intParam("timeout_ms", in.TimeoutMs, defaultWaitMs, minTimeoutMs, maxTimeoutMs, true, messageDef.allowed["timeout_ms"])
	if err != nil {
		return nil, "", err
	}
	t, err := s.resolve(ctx, in.Target, deref(in.Machine))
	if err != nil {
		return nil, "", err
	}
	if t.member == nil || t.member.State == herd.StateGone {
		return nil, "", fmt.Errorf("%s is gone (its process exited): nothing was sent; spawn_agent a new one", t.name)
	}
	d := &Delivery{Kind: kind}
	var pr *herd.PromptResult
	if t.member.State == herd.StateBlocked {
		// The target waits on a question: the text is its answer, typed as is (a wrapped message
		// would land in the dialog as keystrokes), through the daemon's answer path.
		d.As, d.Text = "answer", in.Message
		pr, err = s.c.Prompt(ctx, t.name, in.Message, herd.PromptOptions{Answer: true})
	} else {
		d.As, d.Text = "prompt", wrapMessage(t.name, kind, round, in.Message)
		pr, err = s.c.Prompt(ctx, t.name, d.Text, herd.PromptOptions{})
	}
	if err != nil {
		return nil, "", fmt.Errorf("delivering to %s: %v", t.name, err)
	}
	if pr.Queued {
		d.As = "queued"
	}
	d.HerdTask = pr.Task
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	var res *AgentResult
	if t.rec != nil {
		r := t.rec
		pending := envelopePending(r)
		_ = s.store.update(r.ID, r, func(cur *record) {
			if pr.Task != "" && !pending {
				cur.HerdTask = pr.Task // the follow-up turn is now the task's
			}
			if cur.Status != recClosed {
				cur.Status = recRunning
				cur.SettledMs = 0
			}
			cur.Error = ""
		})
		if pending {
			// The agent was held by a dialog before its task: now that it is answered, type the
			// envelope (once it reads idle; a new dialog leaves it blocked again).
			_, _ = s.c.Wait(ctx, []string{t.name}, herd.WaitOptions{States: []string{herd.StateIdle, herd.StateDone, herd.StateWorking},
				Timeout: min(time.Until(deadline), 30*time.Second)})
			if _, err := s.typeEnvelope(ctx, r, deadline); err != nil {
				_ = s.store.update(r.ID, r, func(cur *record) { cur.Status, cur.Error = statusFailed, err.Error() })
			}
		}
		if boolOr(in.Wait, false) {
			s.waitTask(ctx, r, deadline)
		}
		res = s.harvest(ctx, r)
		if res.Status == statusRunning {
			s.watch(r) // the record moves on by itself when the turn ends
		}
	} else {
		if boolOr(in.Wait, false) && pr.Task != "" {
			s.waitTask(ctx, &record{Name: t.name, HerdTask: pr.Task}, deadline)
		}
		t.member = s.member(ctx, t.name)
		res = s.observe(ctx, t, 80)
	}
	res.Delivered = d
	return res, fmt.Sprintf("delivered %s to %s as %s (herd task %s)\n\n", kind, t.name, d.As, orNone(pr.Task)) + render(res), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ---- interrupt_agent ----

type interruptIn struct {
	Target string `json:"target" jsonschema:"Task id, herd task id (t-N) or agent name of an owned agent."`
}

var interruptDef = toolDef{name: "interrupt_agent",
	desc:    "Cancel an owned agent's current turn (the engine's interrupt keys, Escape first). The agent, its transcript and the record remain; the record becomes interrupted. Use message_agent to redirect it.",
	allowed: map[string]string{"target": "a task id (tk…), a herd task id (t-N) or an agent name"},
}

func (s *Server) interrupt(ctx context.Context, in interruptIn) (any, string, error) {
	t, err := s.resolve(ctx, in.Target, "")
	if err != nil {
		return nil, "", err
	}
	if t.rec == nil {
		return nil, "", fmt.Errorf("%s was not spawned by this adapter: only owned agents are interrupted (list_agents shows owned ones); use `mosh herd send-keys %s Escape` yourself if you mean it", t.name, t.name)
	}
	if t.member == nil || t.member.State == herd.StateGone {
		return nil, "", fmt.Errorf("%s is gone: nothing to interrupt", t.name)
	}
	ir, err := s.c.Interrupt(ctx, t.name)
	if err != nil {
		return nil, "", fmt.Errorf("interrupting %s: %v", t.name, err)
	}
	r := t.rec
	_ = s.store.update(r.ID, r, func(cur *record) {
		cur.Status = recInterrupted
		cur.SettledMs = time.Now().UnixMilli()
	})
	s.slots.release(r.ID)
	res := s.harvest(ctx, r)
	keys := strings.Join(ir.Keys, " ")
	if len(ir.Then) > 0 {
		keys += ", then " + strings.Join(ir.Then, " ")
	}
	res.Evidence = append(res.Evidence, fmt.Sprintf("interrupt: sent %s; herd task %s closed %s", keys, orNone(ir.Task), orNone(ir.TaskState)))
	return res, render(res), nil
}

// ---- close_agent ----

type closeIn struct {
	Target         string `json:"target" jsonschema:"Task id, herd task id (t-N) or agent name of an owned agent."`
	Force          *bool  `json:"force,omitempty" jsonschema:"Close even while working; remove a dirty worktree (default false)."`
	RemoveWorktree *bool  `json:"remove_worktree,omitempty" jsonschema:"Remove the isolated task's worktree first (the branch stays; default false)."`
}

var closeDef = toolDef{name: "close_agent",
	desc: "Close an owned agent (stop its process). Refuses agents this adapter did not spawn, and a working agent unless force. " +
		"With remove_worktree an isolated task's worktree is removed first (a dirty one needs force); the branch and the transcript stay.",
	allowed:  map[string]string{"target": "a task id (tk…), a herd task id (t-N) or an agent name", "force": "true or false", "remove_worktree": "true or false"},
	defaults: map[string]any{"force": false, "remove_worktree": false},
}

func (s *Server) closeAgent(ctx context.Context, in closeIn) (any, string, error) {
	t, err := s.resolve(ctx, in.Target, "")
	if err != nil {
		return nil, "", err
	}
	if t.rec == nil {
		return nil, "", fmt.Errorf("%s was not spawned by this adapter: only owned agents are closed (list_agents marks the others readOnly)", t.name)
	}
	force := boolOr(in.Force, false)
	r := t.rec
	if t.member != nil && t.member.State == herd.StateWorking && !force {
		return nil, "", fmt.Errorf("%s is working (task %s): nothing was closed; interrupt_agent first, wait with get_agent_result, or pass force:true", t.name, r.ID)
	}
	var notes []string
	if boolOr(in.RemoveWorktree, false) {
		wt := r.Worktree
		switch {
		case wt == nil:
			return nil, "", fmt.Errorf("task %s has no worktree (it was not spawned with isolated:true): call again without remove_worktree", r.ID)
		case wt.Removed:
			notes = append(notes, "worktree already removed")
		default:
			if st, err := git(ctx, s.environ, wt.Path, "status", "--porcelain"); err == nil && strings.TrimSpace(st) != "" && !force {
				return nil, "", fmt.Errorf("the worktree %s has uncommitted changes (%d paths): nothing was closed; get_agent_result shows the diff, "+
					"commit or copy what you need, or pass force:true to discard them", wt.Path, len(lines(st)))
			}
			args := []string{"worktree", "remove", wt.Path}
			if force {
				args = []string{"worktree", "remove", "--force", wt.Path}
			}
			if _, err := git(ctx, s.environ, wt.Repo, args...); err != nil {
				return nil, "", fmt.Errorf("removing the worktree: %v", err)
			}
			wt.Removed = true
			notes = append(notes, "worktree "+wt.Path+" removed; branch "+wt.Branch+" kept")
		}
	}
	if t.member != nil && t.member.State != herd.StateGone {
		if _, err := s.c.Kill(ctx, []string{t.name}, false); err != nil {
			return nil, "", fmt.Errorf("stopping %s: %v", t.name, err)
		}
		notes = append(notes, "agent "+t.name+" stopped")
	}
	removed := r.Worktree != nil && r.Worktree.Removed
	if err := s.store.update(r.ID, r, func(cur *record) {
		cur.Status = recClosed
		cur.ClosedMs = time.Now().UnixMilli()
		if cur.SettledMs == 0 {
			cur.SettledMs = cur.ClosedMs
		}
		if removed && cur.Worktree != nil {
			cur.Worktree.Removed = true
		}
	}); err != nil {
		return nil, "", err
	}
	s.slots.release(r.ID)
	res := s.harvest(ctx, r)
	res.Evidence = append(res.Evidence, notes...)
	return res, render(res), nil
}

// ---- doctor ----

type doctorIn struct{}

var doctorDef = toolDef{name: "doctor", desc: "Environment self-check: the herd daemon, this adapter's config and directories, git, the engines on PATH, model aliases. Returns {ok, checks[], next[], aliases[], runtime}.", readOnly: true}

// DoctorResult is doctor's result.
type DoctorResult struct {
	OK      bool               `json:"ok"`
	Checks  []herd.DoctorCheck `json:"checks"`
	Next    []string           `json:"next"`
	Aliases []ModelAlias       `json:"aliases"`
	Runtime map[string]any     `json:"runtime"`
}

// ModelAlias is one engines-table alias.
type ModelAlias struct {
	Kind  string `json:"kind"`
	Alias string `json:"alias"`
	Model string `json:"model"`
}

func (s *Server) doctor(ctx context.Context, _ doctorIn) (any, string, error) {
	out := DoctorResult{Checks: []herd.DoctorCheck{}, Next: []string{}, Aliases: []ModelAlias{}}
	add := func(name, level, detail, fix string) {
		out.Checks = append(out.Checks, herd.DoctorCheck{Name: name, Level: level, Detail: detail, Fix: fix})
		if fix != "" && level != "ok" {
			out.Next = append(out.Next, fix)
		}
	}
	if dr, err := s.c.Doctor(ctx); err != nil {
		add("herd.daemon", "fail", "the herd daemon does not answer: "+err.Error(), "run `mosh herd doctor` and `mosh herd daemon status`")
	} else {
		add("herd.daemon", "ok", "the herd daemon answers ("+dr.Dir+")", "")
		for _, c := range dr.Checks {
			if c.Level != "ok" {
				add("herd."+c.Name, c.Level, c.Detail, c.Fix)
			}
		}
	}
	if len(s.cfgErr) > 0 {
		add("mcp.config", "warn", strings.Join(s.cfgErr, "; "), "fix "+ConfigPath(s.home))
	} else {
		add("mcp.config", "ok", "config "+ConfigPath(s.home)+" (missing = defaults)", "")
	}
	if s.cfg.Enabled {
		add("mcp.enabled", "ok", "spawning is enabled", "")
	} else {
		add("mcp.enabled", "warn", "spawning is disabled", "set \"enabled\": true in "+ConfigPath(s.home))
	}
	for _, a := range s.cfg.AllowCwd {
		if st, err := os.Stat(a); err != nil || !st.IsDir() {
			add("mcp.allowCwd", "warn", "allowCwd entry "+a+" is not a directory", "fix allowCwd in "+ConfigPath(s.home))
		}
	}
	if fi, err := os.Stat(s.store.dir); err != nil || fi.Mode().Perm() != 0o700 {
		add("mcp.dir", "fail", fmt.Sprintf("%s is not a private directory (%v)", s.store.dir, err), "chmod 700 "+s.store.dir)
	} else {
		add("mcp.dir", "ok", "task records in "+s.store.dir, "")
	}
	if p, err := exec.LookPath("git"); err != nil {
		add("git", "warn", "git is not on PATH: no diff evidence, no isolated worktrees", "install git")
	} else {
		add("git", "ok", p, "")
	}
	tab := s.engines()
	for _, pr := range tab.Problems {
		add("engines.table", "warn", pr.Text, pr.Fix)
	}
	names := tab.Names()
	for i := range tab.Engines {
		eng := &tab.Engines[i]
		n := eng.Name
		if len(eng.Binaries) == 0 || n == "shell" || n == "gradient" {
			continue
		}
		bin := ""
		for _, b := range eng.Binaries {
			if p, err := herd.LookPath(b, s.cwd, s.environ); err == nil { // the caller's PATH, as the daemon starts it
				bin = p
				break
			}
		}
		level, detail, fix := "ok", n+": "+bin, ""
		if bin == "" {
			level, detail = "warn", n+": "+strings.Join(eng.Binaries, "/")+" not on PATH"
			if n == s.cfg.DefaultKind {
				fix = "install " + n + " or set \"defaultKind\" in " + ConfigPath(s.home)
				level = "fail"
			}
		}
		add("engine."+n, level, detail, fix)
		keys := make([]string, 0, len(eng.ModelAliases))
		for k := range eng.ModelAliases {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out.Aliases = append(out.Aliases, ModelAlias{Kind: n, Alias: k, Model: eng.ModelAliases[k]})
		}
	}
	out.OK = true
	for _, c := range out.Checks {
		if c.Level == "fail" {
			out.OK = false
		}
	}
	ver := s.ver
	if ver == "" {
		ver = "dev"
	}
	out.Runtime = map[string]any{"version": ver, "go": runtime.Version(), "pid": os.Getpid(), "toolPrefix": s.prefix, "home": s.home,
		"mcpDir": s.store.dir, "socket": s.c.Socket(), "defaultKind": s.cfg.DefaultKind, "maxParallelAgents": s.cfg.MaxParallelAgents,
		"running": s.slots.count(), "engines": names}
	var b strings.Builder
	fmt.Fprintf(&b, "doctor: ok=%v\n", out.OK)
	for _, c := range out.Checks {
		fmt.Fprintf(&b, "%-5s %s: %s\n", c.Level, c.Name, c.Detail)
	}
	for _, n := range out.Next {
		b.WriteString("next: " + n + "\n")
	}
	return out, b.String(), nil
}
