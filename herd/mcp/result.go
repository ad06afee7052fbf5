package mcp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mosh-dev/mosh/herd"
	"github.com/mosh-dev/mosh/herd/vocab"
)

// AgentResult statuses (agentresult.schema.json). idle is an observation of a member this
// adapter did not spawn.
const (
	statusCompleted = "completed"
	statusBlocked   = "blocked"
	statusRunning   = "running"
	statusFailed    = "failed"
	statusGone      = "gone"
	statusIdle      = "idle"
)

// Next actions: what the host should do with the result.
const (
	nextReview  = "review"  // completed: read the evidence, then ACCEPT / REVIEW_FINDINGS
	nextAnswer  = "answer"  // blocked: ask the user, then message_agent kind ANSWER
	nextWait    = "wait"    // running: get_agent_result again
	nextInspect = "inspect" // failed: read_agent / the error, then message or close
	nextRespawn = "respawn" // gone: the agent exited; spawn a new one
	nextNone    = "none"    // observation of a foreign member
)

// AgentResult is the one result shape (schemaVersion 1).
type AgentResult struct {
	SchemaVersion int         `json:"schemaVersion"`
	TaskID        string      `json:"taskId"`
	ClientTaskID  string      `json:"clientTaskId,omitempty"`
	Status        string      `json:"status"`
	RecordStatus  string      `json:"recordStatus,omitempty"` // the owned record's status (interrupted, closed…)
	Owned         bool        `json:"owned"`
	Role          string      `json:"role"`
	Agent         AgentInfo   `json:"agent"`
	HerdStatus    string      `json:"herdStatus"`          // the member's state (working, blocked, done, idle, unknown, gone)
	BlockedOn     string      `json:"blockedOn,omitempty"` // permission | question | menu
	HerdTask      string      `json:"herdTask,omitempty"`  // the ledger task (t-N)
	SessionPath   string      `json:"sessionPath,omitempty"`
	Summary       string      `json:"summary"`
	FinalMessage  string      `json:"finalMessage"`
	FinalSource   string      `json:"finalMessageSource,omitempty"` // hook | screen | remote | error | pane
	FinalTrunc    bool        `json:"finalMessageTruncated,omitempty"`
	ResultText    string      `json:"resultText,omitempty"`
	Result        *ResultFile `json:"result,omitempty"`
	Diff          *DiffInfo   `json:"diff,omitempty"`
	Tests         string      `json:"tests,omitempty"`
	Files         []string    `json:"files"`
	Worktree      *Worktree   `json:"worktree,omitempty"`
	ArtifactDir   string      `json:"artifactDir,omitempty"`
	Inbox         *InboxInfo  `json:"inbox,omitempty"`
	NextAction    string      `json:"nextAction"`
	Evidence      []string    `json:"evidence"`
	Error         string      `json:"error,omitempty"`
	Timings       Timings     `json:"timings"`
	Cwd           string      `json:"cwd,omitempty"`
	Delivered     *Delivery   `json:"delivered,omitempty"` // message_agent: how the text went in
}

// AgentInfo names the agent.
type AgentInfo struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Model    string `json:"model,omitempty"`
	Thinking string `json:"thinking,omitempty"`
	Machine  string `json:"machine,omitempty"`
	Pid      int    `json:"pid,omitempty"`
	Alive    bool   `json:"alive"`
}

// ResultFile is the child's result.md.
type ResultFile struct {
	Path   string            `json:"path"`
	Exists bool              `json:"exists"`
	Text   string            `json:"text,omitempty"`
	Meta   map[string]string `json:"meta,omitempty"` // status, summary, tests, files
}

// DiffInfo is the work the agent left in git, against the baseline HEAD taken before it started.
type DiffInfo struct {
	BaselineHead string   `json:"baselineHead"`
	Stat         string   `json:"stat"`
	Files        []string `json:"files"`
	Untracked    []string `json:"untracked"`
	Patch        string   `json:"patch"`
	PatchPath    string   `json:"patchPath"`
	PatchBytes   int      `json:"patchBytes"` // the whole patch's size, before the cap
	Truncated    bool     `json:"truncated"`
	DirtyAtStart []string `json:"dirtyAtStart"`
	Error        string   `json:"error,omitempty"`
}

// InboxInfo: the child's messages file and how many wait unread.
type InboxInfo struct {
	Path    string `json:"path"`
	Pending int    `json:"pending"`
}

// Timings in unix ms.
type Timings struct {
	CreatedMs int64 `json:"createdMs,omitempty"`
	StartedMs int64 `json:"startedMs,omitempty"`
	SettledMs int64 `json:"settledMs,omitempty"`
	ElapsedMs int64 `json:"elapsedMs"`
}

// harvest builds the AgentResult of an owned record from the herd (member row, ledger task) and
// the artifacts. It updates the record's status when it changed.
func (s *Server) harvest(ctx context.Context, r *record) *AgentResult {
	if ctx.Err() != nil {
		// The caller gave up (the host canceled the call): the record still gets its status.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
	}
	res := &AgentResult{SchemaVersion: 1, TaskID: r.ID, ClientTaskID: r.ClientTaskID, Owned: true, Role: r.Role,
		Agent:    AgentInfo{Name: r.Name, Kind: r.Kind, Model: r.Model, Thinking: r.Thinking, Machine: r.Machine},
		HerdTask: r.HerdTask, ArtifactDir: r.ArtifactDir, Worktree: r.Worktree, Cwd: r.WorkDir, Files: []string{}, Evidence: []string{}}
	m := s.member(ctx, r.Name)
	res.HerdStatus = herd.StateGone
	if m != nil {
		res.HerdStatus, res.BlockedOn, res.Agent.Pid, res.Agent.Alive = m.State, m.BlockedOn, m.Pid, m.Alive
	}
	var task *herd.Task
	if r.HerdTask != "" {
		if t, err := s.c.Task(ctx, r.HerdTask); err == nil {
			task = t
		} else {
			res.Evidence = append(res.Evidence, fmt.Sprintf("herd task %s unreadable: %v", r.HerdTask, err))
		}
	}
	res.Status = statusOf(r, m, task)
	if task != nil && task.Artifact != nil {
		res.FinalMessage, res.FinalTrunc = truncChars(task.Artifact.Text, s.cfg.MaxResultChars)
		res.FinalTrunc = res.FinalTrunc || task.Artifact.Truncated
		res.FinalSource = task.Artifact.Source
	}
	res.Error = r.Error
	if r.Status == recInterrupted && res.Error == "" {
		res.Error = "interrupted by interrupt_agent: the turn was canceled; the agent waits at its prompt (message_agent to redirect it)"
	}
	if task != nil && res.Error == "" && vocab.State(task.State).IsTaskEnd() {
		res.Error = fmt.Sprintf("herd task %s ended %s", task.ID, task.State)
		if task.Note != "" {
			res.Error += ": " + task.Note
		}
	}

	// result.md
	rp := filepath.Join(r.ArtifactDir, "result.md")
	rf := &ResultFile{Path: rp}
	if b, err := os.ReadFile(rp); err == nil {
		rf.Exists = true
		rf.Meta, rf.Text = parseResultMD(string(b))
		res.ResultText, _ = truncChars(string(b), s.cfg.MaxResultChars)
		rf.Text = res.ResultText
	}
	res.Result = rf
	res.Tests = rf.Meta["tests"]
	res.Summary = rf.Meta["summary"]
	if res.Summary == "" {
		res.Summary = firstLine(res.FinalMessage, 200)
	}

	// diff
	if r.BaselineHead != "" && (r.Worktree == nil || !r.Worktree.Removed) {
		res.Diff = gitDiff(ctx, s.environ, r.WorkDir, r.BaselineHead, filepath.Join(r.ArtifactDir, "diff.patch"), s.cfg.MaxDiffBytes)
		res.Diff.DirtyAtStart = nonNil(r.DirtyAtStart)
		res.Files = append(append([]string{}, res.Diff.Files...), res.Diff.Untracked...)
	}
	if len(res.Files) == 0 && rf.Meta["files"] != "" {
		for _, f := range strings.Split(rf.Meta["files"], ",") {
			if f = strings.TrimSpace(f); f != "" {
				res.Files = append(res.Files, f)
			}
		}
	}

	// inbox
	ip := filepath.Join(r.ArtifactDir, inboxFile)
	res.Inbox = &InboxInfo{Path: ip, Pending: pendingInbox(ip, r.InboxOffset)}

	res.SessionPath = findTranscript(s.getenv, r.Kind, r.WorkDir, r.CreatedMs)

	// record bookkeeping
	now := time.Now().UnixMilli()
	if r.Status == recRunning || r.Status == statusBlocked || r.Status == statusCompleted {
		if res.Status != r.Status && (res.Status != statusRunning) {
			st := res.Status
			_ = s.store.update(r.ID, r, func(cur *record) {
				if cur.HerdTask != r.HerdTask || cur.Status == recInterrupted || cur.Status == recClosed {
					return // changed meanwhile (a follow-up turn, an interrupt, a close): not ours to settle
				}
				cur.Status = st
				if settledStatus(st) && cur.SettledMs == 0 {
					cur.SettledMs = now
				}
			})
		}
	}
	if settledStatus(res.Status) || res.Status == statusBlocked {
		s.slots.release(r.ID)
	}
	res.RecordStatus = r.Status
	res.Timings = Timings{CreatedMs: r.CreatedMs, StartedMs: r.StartedMs, SettledMs: r.SettledMs}
	end := now
	if r.SettledMs != 0 {
		end = r.SettledMs
	}
	res.Timings.ElapsedMs = end - r.CreatedMs
	res.NextAction = nextFor(res.Status)
	res.Evidence = append(res.Evidence, evidence(res, task)...)
	return res
}

// statusOf decides the AgentResult status of an owned task.
func statusOf(r *record, m *herd.Member, t *herd.Task) string {
	gone := m == nil || m.State == herd.StateGone || !m.Alive
	switch {
	case r.Status == recClosed:
		return statusGone
	case r.Status == recInterrupted:
		return statusFailed
	case r.Status == statusFailed && t == nil:
		return statusFailed
	case t == nil:
		if gone {
			if r.Status == recStarting && r.Error != "" {
				return statusFailed
			}
			return statusGone
		}
		if m.State == herd.StateBlocked {
			return statusBlocked
		}
		return statusRunning
	}
	if t.Open {
		if gone {
			return statusGone
		}
		if t.State == herd.StateBlocked {
			return statusBlocked
		}
		return statusRunning
	}
	switch t.State {
	case herd.StateDone, herd.StateIdle:
		return statusCompleted
	case herd.StateGone:
		return statusGone
	case herd.StateBlocked:
		return statusBlocked
	}
	return statusFailed
}

func nextFor(status string) string {
	switch status {
	case statusCompleted:
		return nextReview
	case statusBlocked:
		return nextAnswer
	case statusRunning:
		return nextWait
	case statusFailed:
		return nextInspect
	case statusGone:
		return nextRespawn
	}
	return nextNone
}

func evidence(res *AgentResult, t *herd.Task) []string {
	var ev []string
	if t != nil {
		line := fmt.Sprintf("herd task %s: %s", t.ID, t.State)
		if t.BlockedOn != "" {
			line += " (" + t.BlockedOn + ")"
		}
		line += fmt.Sprintf(" after %s", (time.Duration(t.DurationMs) * time.Millisecond).Round(time.Millisecond))
		ev = append(ev, line)
		if t.Artifact != nil {
			ev = append(ev, fmt.Sprintf("final message: %d chars from the %s", t.Artifact.Chars, t.Artifact.Source))
		}
	}
	if res.Result != nil {
		if res.Result.Exists {
			ev = append(ev, "result.md: "+res.Result.Path)
		} else {
			ev = append(ev, "result.md: not written")
		}
	}
	if d := res.Diff; d != nil {
		switch {
		case d.Error != "":
			ev = append(ev, "diff: "+d.Error)
		case d.Stat == "" && len(d.Untracked) == 0:
			ev = append(ev, "diff: no changes since "+short(d.BaselineHead))
		default:
			line := "diff: " + strings.TrimSpace(lastLine(d.Stat))
			if len(d.Untracked) > 0 {
				line += fmt.Sprintf("; %d untracked", len(d.Untracked))
			}
			if d.Truncated {
				line += fmt.Sprintf("; patch truncated at %d of %d bytes", len(d.Patch), d.PatchBytes)
			}
			ev = append(ev, line)
		}
	}
	if res.Tests != "" {
		ev = append(ev, "tests: "+res.Tests)
	}
	if res.Worktree != nil {
		ev = append(ev, fmt.Sprintf("worktree: %s on %s", res.Worktree.Path, res.Worktree.Branch))
	}
	if res.Inbox != nil && res.Inbox.Pending > 0 {
		ev = append(ev, fmt.Sprintf("inbox: %d unread message(s) (inbox tool)", res.Inbox.Pending))
	}
	if res.SessionPath != "" {
		ev = append(ev, "transcript: "+res.SessionPath)
	}
	if res.Error != "" {
		ev = append(ev, "error: "+res.Error)
	}
	return ev
}

// render is the model-facing text: header, evidence, final message.
func render(res *AgentResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] task %s — %s %s (%s)", res.Status, res.TaskID, res.Agent.Kind, res.Agent.Name, res.HerdStatus)
	if res.HerdTask != "" {
		fmt.Fprintf(&b, " herd task %s", res.HerdTask)
	}
	fmt.Fprintf(&b, "; next: %s\n", res.NextAction)
	for _, e := range res.Evidence {
		b.WriteString("- " + e + "\n")
	}
	if res.FinalMessage != "" {
		b.WriteString("\nFinal message:\n" + res.FinalMessage + "\n")
	}
	if res.Status == statusBlocked {
		b.WriteString("\nThe agent is blocked on a question: ask the user, then call message_agent with kind ANSWER. Never answer for them.\n")
	}
	return b.String()
}

// parseResultMD reads leading "key: value" metadata (optionally fenced by --- lines) of result.md.
func parseResultMD(s string) (map[string]string, string) {
	meta := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	fenced := false
	first := true
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if first && line == "---" {
			fenced, first = true, false
			continue
		}
		first = false
		if line == "" || (fenced && line == "---") {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		k = strings.ToLower(strings.TrimSpace(strings.TrimLeft(k, "-* ")))
		if !ok || strings.ContainsAny(k, " \t") {
			break
		}
		switch k {
		case "status", "summary", "tests", "files":
			meta[k] = strings.TrimSpace(v)
		}
	}
	return meta, s
}

// gitDiff reads the work left since base in dir: tracked changes (stat, files, patch), untracked
// files (added to the patch as new files); the patch is written to patchPath, both capped at max.
func gitDiff(ctx context.Context, env []string, dir, base, patchPath string, max int) *DiffInfo {
	d := &DiffInfo{BaselineHead: base, PatchPath: patchPath, Files: []string{}, Untracked: []string{}}
	stat, err := git(ctx, env, dir, "diff", "--stat", base)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	d.Stat = strings.TrimRight(stat, "\n")
	if names, err := git(ctx, env, dir, "diff", "--name-only", base); err == nil {
		d.Files = lines(names)
	}
	if un, err := git(ctx, env, dir, "ls-files", "--others", "--exclude-standard"); err == nil {
		d.Untracked = lines(un)
	}
	patch, _ := git(ctx, env, dir, "diff", "--binary", base)
	var buf bytes.Buffer
	buf.WriteString(patch)
	for _, f := range d.Untracked {
		cmd := exec.CommandContext(ctx, "git", "-C", dir, "diff", "--binary", "--no-index", "--", "/dev/null", f)
		cmd.Env = env
		out, _ := cmd.Output() // exit 1 = differences
		buf.Write(out)
	}
	d.PatchBytes = buf.Len()
	p := buf.Bytes()
	if len(p) > max {
		p = p[:max]
		for len(p) > 0 && !utf8.Valid(p[len(p)-1:]) && !utf8.Valid(p) {
			p = p[:len(p)-1]
		}
		d.Truncated = true
	}
	d.Patch = string(p)
	if err := writeAtomic(patchPath, p); err != nil {
		d.Error = "cannot write " + patchPath + ": " + err.Error()
	}
	return d
}

// git runs git in dir with env (the client's environment, Server.environ).
func git(ctx context.Context, env []string, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(append([]string(nil), env...), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func lines(s string) []string {
	out := []string{}
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// truncChars keeps the first max characters (runes).
func truncChars(s string, max int) (string, bool) {
	if utf8.RuneCountInString(s) <= max {
		return s, false
	}
	r := []rune(s)
	return string(r[:max]), true
}

func firstLine(s string, max int) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(l, "●•⏺ "))
		if l != "" {
			out, _ := truncChars(l, max)
			return out
		}
	}
	return ""
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// writeAtomic replaces path with b (0600) in one rename: a reader never sees it half written.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
