package mcp

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/mosh-dev/mosh/herd"
)

func (s *Server) register() {
	addTool(s, spawnDefFor(s.cfg), s.spawn)
	addTool(s, getDef, s.getResult)
	addTool(s, listDef, s.list)
	s.registerMore()
}

// member is the roster row of name, nil when the herd does not know it.
func (s *Server) member(ctx context.Context, name string) *herd.Member {
	ms, err := s.c.List(ctx)
	if err != nil {
		return nil
	}
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

var herdTaskRE = regexp.MustCompile(`^t-\d+$`)

// target is a resolved target: an owned record, or a foreign member.
type target struct {
	rec    *record
	member *herd.Member // the roster row (nil when the member is gone)
	name   string
}

// resolve finds a target by task id, herd task id (t-N) or member name. machine, when set, must
// match a remote member's name or host.
func (s *Server) resolve(ctx context.Context, tgt, machine string) (*target, error) {
	if tgt == "" {
		return nil, &paramError{param: "target", allowed: "a task id (tk…), a herd task id (t-N) or an agent name", got: "an empty target"}
	}
	var rec *record
	name := tgt
	switch {
	case validTaskID(tgt):
		r, err := s.store.load(tgt)
		if err != nil {
			return nil, fmt.Errorf("no owned task %s in %s (pruned by retention, or another MOSH_HOME): list_agents shows what exists", tgt, s.store.dir)
		}
		rec, name = r, r.Name
	case herdTaskRE.MatchString(tgt):
		if r := s.store.byHerdTask(tgt); r != nil {
			rec, name = r, r.Name
		} else {
			t, err := s.c.Task(ctx, tgt)
			if err != nil {
				return nil, fmt.Errorf("no herd task %s: %v", tgt, err)
			}
			name = t.Member
		}
	default:
		if !herd.ValidName(tgt) {
			return nil, &paramError{param: "target", allowed: "a task id (tk…), a herd task id (t-N) or an agent name", got: fmt.Sprintf("%q", tgt)}
		}
		rec = s.store.byName(tgt)
	}
	t := &target{rec: rec, name: name, member: s.member(ctx, name)}
	if machine != "" {
		if t.member == nil || t.member.Remote == nil || (t.member.Name != machine && t.member.Remote.Host != machine) {
			return nil, fmt.Errorf("%s is not an agent on machine %q: machine names a remote member (its name or host) already on the roster (`mosh herd remote add`); list_agents with machine shows them", name, machine)
		}
	}
	if t.rec == nil && t.member == nil {
		return nil, fmt.Errorf("no agent or task %q: list_agents shows the fleet", tgt)
	}
	return t, nil
}

// ---- get_agent_result ----

type getIn struct {
	Target    string  `json:"target" jsonschema:"Task id, herd task id (t-N) or agent name."`
	Wait      *bool   `json:"wait,omitempty" jsonschema:"Wait until idle/done/blocked; default true while the task runs."`
	TimeoutMs *int64  `json:"timeout_ms,omitempty" jsonschema:"Wait budget in ms (default 600000)."`
	Lines     *int64  `json:"lines,omitempty" jsonschema:"Screen tail lines for an agent without a task artifact (default 80)."`
	Machine   *string `json:"machine,omitempty" jsonschema:"A remote member's name or host (owned tasks remember theirs)."`
}

// Defaults of the waiting tools, in their input schemas and in their code.
const (
	defaultWaitMs = 600000 // get_agent_result and message_agent
	defaultLines  = 80     // get_agent_result's screen tail
)

var getDef = toolDef{name: "get_agent_result",
	desc: "Harvest a task's AgentResult, optionally waiting until it settles. For an agent this adapter did not spawn it returns an observation (status idle, nextAction none) and never re-submits anything.",
	allowed: map[string]string{
		"target":     "a task id (tk…), a herd task id (t-N) or an agent name",
		"wait":       "true or false",
		"timeout_ms": "an integer >= 1 (milliseconds), clamped to 10000..3600000",
		"lines":      "an integer 1..10000",
		"machine":    "a remote member's name or host on the roster",
	},
	mins:     map[string]float64{"timeout_ms": 1, "lines": 1},
	defaults: map[string]any{"wait": true, "timeout_ms": defaultWaitMs, "lines": defaultLines},
	readOnly: true,
}

func (s *Server) getResult(ctx context.Context, in getIn) (any, string, error) {
	ms, err := intParam("timeout_ms", in.TimeoutMs, defaultWaitMs, minTimeoutMs, maxTimeoutMs, true, getDef.allowed["timeout_ms"])
	if err != nil {
		return nil, "", err
	}
	lines, err := intParam("lines", in.Lines, defaultLines, 1, 10000, false, getDef.allowed["lines"])
	if err != nil {
		return nil, "", err
	}
	t, err := s.resolve(ctx, in.Target, deref(in.Machine))
	if err != nil {
		return nil, "", err
	}
	if t.rec != nil {
		return s.resultOf(ctx, t.rec, boolOr(in.Wait, true), time.Now().Add(time.Duration(ms)*time.Millisecond))
	}
	res := s.observe(ctx, t, int(lines))
	return res, render(res), nil
}

// observe is the AgentResult of a foreign member: its state, its last task's answer (or the
// screen tail), nextAction none. Nothing is typed.
func (s *Server) observe(ctx context.Context, t *target, lines int) *AgentResult {
	res := &AgentResult{SchemaVersion: 1, Status: statusIdle, Owned: false, Role: "worker", NextAction: nextNone,
		Agent: AgentInfo{Name: t.name}, Files: []string{}, Evidence: []string{"observation: not spawned by this adapter; read-only"}}
	m := t.member
	res.HerdStatus = herd.StateGone
	if m != nil {
		res.Agent.Kind, res.Agent.Pid, res.Agent.Alive, res.HerdStatus, res.BlockedOn, res.Cwd = m.Engine, m.Pid, m.Alive, m.State, m.BlockedOn, m.Cwd
		if m.Remote != nil {
			res.Agent.Machine = m.Remote.Host
		}
		res.Timings.CreatedMs = m.CreatedMs
		res.Timings.ElapsedMs = m.AgeMs
	}
	if tasks, err := s.c.Tasks(ctx, herd.TasksFilter{Member: t.name, Limit: 1}); err == nil && len(tasks) > 0 {
		last := tasks[len(tasks)-1]
		res.HerdTask = last.ID
		res.TaskID = last.ID
		if full, err := s.c.Task(ctx, last.ID); err == nil && full.Artifact != nil {
			res.FinalMessage, res.FinalTrunc = truncChars(full.Artifact.Text, s.cfg.MaxResultChars)
			res.FinalSource = full.Artifact.Source
			res.Evidence = append(res.Evidence, fmt.Sprintf("last herd task %s: %s; final message from the %s", full.ID, full.State, full.Artifact.Source))
		}
	}
	if res.TaskID == "" {
		res.TaskID = t.name
	}
	if res.FinalMessage == "" && m != nil && m.Alive {
		if rr, err := s.c.Read(ctx, t.name, lines); err == nil {
			res.FinalMessage, res.FinalTrunc = truncChars(rr.Screen, s.cfg.MaxResultChars)
			res.FinalSource = "pane"
			res.Evidence = append(res.Evidence, fmt.Sprintf("pane tail: last %d lines", lines))
		}
	}
	res.Summary = firstLine(res.FinalMessage, 200)
	return res
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ---- list_agents ----

type listIn struct {
	OwnedOnly *bool   `json:"owned_only,omitempty" jsonschema:"Only agents this adapter spawned (default false)."`
	Machine   *string `json:"machine,omitempty" jsonschema:"Only the remote members of that machine (a remote member's name or host)."`
}

var listDef = toolDef{name: "list_agents",
	desc:     "Fleet view: every herd member, owned (spawned by this adapter, with its task) or foreign (read-only).",
	allowed:  map[string]string{"owned_only": "true or false", "machine": "a remote member's name or host on the roster"},
	defaults: map[string]any{"owned_only": false},
	readOnly: true,
}

// FleetRow is one list_agents row.
type FleetRow struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"` // engine
	State      string `json:"state"`
	BlockedOn  string `json:"blockedOn,omitempty"`
	Owned      bool   `json:"owned"`
	ReadOnly   bool   `json:"readOnly"`
	TaskID     string `json:"taskId,omitempty"`
	Status     string `json:"status,omitempty"` // the owned record's status
	Role       string `json:"role,omitempty"`
	HerdTask   string `json:"herdTask,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	Machine    string `json:"machine,omitempty"`
	Alive      bool   `json:"alive"`
	AgeMs      int64  `json:"ageMs"`
	Autonomous bool   `json:"autonomous"`
}

// FleetList is list_agents' result.
type FleetList struct {
	Agents []FleetRow `json:"agents"`
}

func (s *Server) list(ctx context.Context, in listIn) (any, string, error) {
	ms, err := s.c.List(ctx)
	if err != nil {
		return nil, "", err
	}
	recs := map[string]*record{}
	for _, r := range s.store.all() { // newest first: the newest record of a name wins
		if _, ok := recs[r.Name]; !ok {
			recs[r.Name] = r
		}
	}
	machine := deref(in.Machine)
	out := FleetList{Agents: []FleetRow{}}
	var b strings.Builder
	for _, m := range ms {
		if machine != "" && (m.Remote == nil || (m.Name != machine && m.Remote.Host != machine)) {
			continue
		}
		row := FleetRow{Name: m.Name, Kind: m.Engine, State: m.State, BlockedOn: m.BlockedOn, Cwd: m.Cwd, Alive: m.Alive, AgeMs: m.AgeMs, Autonomous: m.Autonomous}
		if m.Remote != nil {
			row.Machine, row.Cwd = m.Remote.Host, ""
		}
		if r, ok := recs[m.Name]; ok && r.Status != recClosed && r.CreatedMs <= m.CreatedMs {
			row.Owned, row.TaskID, row.Status, row.Role, row.HerdTask = true, r.ID, r.Status, r.Role, r.HerdTask
		} else {
			row.ReadOnly = true
		}
		if boolOr(in.OwnedOnly, false) && !row.Owned {
			continue
		}
		out.Agents = append(out.Agents, row)
		owned := "foreign"
		if row.Owned {
			owned = "owned " + row.TaskID
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", row.Name, row.Kind, row.State, owned)
	}
	if machine != "" && len(out.Agents) == 0 {
		return nil, "", fmt.Errorf("no remote members on machine %q: machine names a remote member (its name or host) on the roster; `mosh herd remote list` shows them", machine)
	}
	if b.Len() == 0 {
		b.WriteString("no agents\n")
	}
	return out, b.String(), nil
}
