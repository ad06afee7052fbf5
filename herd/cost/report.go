package cost

import (
	"fmt"
	"slices"
	"sort"
)

// Task is a ledger task as cost needs it.
type Task struct {
	ID          string
	Text        string
	SubmittedMs int64
	EndedMs     int64 // 0 while open
	Note        string
}

// Member is a herd member as cost needs it: where its engine wrote, and its tasks.
type Member struct {
	Name      string
	Engine    string
	Cwd       string
	CreatedMs int64
	Tasks     []Task
}

// Sum is what a member or a task used: tokens by kind and in all, the models, and money with
// where it came from (engine: the engine recorded it; prices: tokens × a price the user gave);
// CostUSD is nil when neither is there.
type Sum struct {
	Tokens      Tokens   `json:"tokens"`
	TotalTokens int64    `json:"totalTokens"`
	Models      []string `json:"models,omitempty"`
	CostUSD     *float64 `json:"costUSD"`
	CostSource  string   `json:"costSource,omitempty"`
	Responses   int      `json:"responses"`
}

// TaskCost is one task's use.
type TaskCost struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Sum
}

// MemberCost is one member's use, and its tasks'.
type MemberCost struct {
	Name   string `json:"name"`
	Engine string `json:"engine"`
	Sum
	// Files are the engine's record files read.
	Files []string `json:"files,omitempty"`
	// Note says why there is nothing, or what is missing (no price for a model).
	Note  string     `json:"note,omitempty"`
	Tasks []TaskCost `json:"tasks"`
}

// Report is `mosh herd cost`.
type Report struct {
	SinceMs int64        `json:"sinceMs,omitempty"`
	Members []MemberCost `json:"members"`
	Total   Sum          `json:"total"`
}

// summer accumulates records into a Sum.
type summer struct {
	s          Sum
	engineCost float64
	hasEngine  bool
	byModel    map[string]Tokens
}

func (a *summer) add(r Record) {
	if r.HasCost {
		a.engineCost += r.CostUSD
		a.hasEngine = true
	}
	if r.Tokens.Total() == 0 {
		return
	}
	a.s.Tokens.Add(r.Tokens)
	a.s.Responses++
	if a.byModel == nil {
		a.byModel = map[string]Tokens{}
	}
	t := a.byModel[r.Model]
	t.Add(r.Tokens)
	a.byModel[r.Model] = t
}

// done prices the sum: the engine's own money when it recorded some; else every model's tokens
// at the user's price; else unknown (the unpriced models are returned).
func (a *summer) done(prices map[string]Price) (Sum, []string) {
	s := a.s
	s.TotalTokens = s.Tokens.Total()
	for m := range a.byModel {
		if m != "" {
			s.Models = append(s.Models, m)
		}
	}
	sort.Strings(s.Models)
	if a.hasEngine {
		v := a.engineCost
		s.CostUSD, s.CostSource = &v, "engine"
		return s, nil
	}
	var usd float64
	var unpriced []string
	for m, t := range a.byModel {
		p, ok := prices[m]
		if !ok {
			unpriced = append(unpriced, orUnknown(m))
			continue
		}
		usd += p.USD(t)
	}
	sort.Strings(unpriced)
	if len(unpriced) == 0 && len(a.byModel) > 0 {
		s.CostUSD, s.CostSource = &usd, "prices"
	}
	return s, unpriced
}

func orUnknown(m string) string {
	if m == "" {
		return "(unnamed model)"
	}
	return m
}

// Member reads one member's records and sums them per task and in all, counting only records at
// or after sinceMs. A record belongs to the task whose turn was running then (from its
// submission to its end, or to the next task's submission while open); one outside every task
// (a title request at start-up) counts for the member only. nowMs closes an open task.
func (t Table) Member(m Member, getenv func(string) string, sinceMs, nowMs int64) MemberCost {
	out := MemberCost{Name: m.Name, Engine: m.Engine, Tasks: []TaskCost{}}
	var recs []Record
	e, known := t.Engines[m.Engine]
	switch {
	case known:
		out.Files = e.Files(getenv, m.Cwd, m.CreatedMs)
		for _, f := range out.Files {
			rs, err := e.Read(f)
			if err != nil {
				out.Note = fmt.Sprintf("cannot read %s: %v", f, err)
			}
			recs = append(recs, rs...)
		}
		if len(out.Files) == 0 {
			out.Note = fmt.Sprintf("no %s session file for %s found under %s", m.Engine, m.Cwd, e.root(getenv))
		}
	default:
		for _, tk := range m.Tasks {
			if r, ok := StatedUsage(tk.Note); ok {
				r.AtMs = max(tk.SubmittedMs, 1)
				recs = append(recs, r)
			}
		}
		if len(recs) == 0 {
			out.Note = fmt.Sprintf("%s records no usage that mosh reads (records.json names the engines that do)", orEngine(m.Engine))
		}
	}
	tasks := slices.Clone(m.Tasks)
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].SubmittedMs < tasks[j].SubmittedMs })
	sums := make([]summer, len(tasks))
	var all summer
	for _, r := range recs {
		if r.AtMs < sinceMs {
			continue
		}
		all.add(r)
		if i := taskAt(tasks, r.AtMs, nowMs); i >= 0 {
			sums[i].add(r)
		}
	}
	var unpriced []string
	out.Sum, unpriced = all.done(t.Prices)
	for i, tk := range tasks {
		if tk.EndedMs != 0 && tk.EndedMs < sinceMs {
			continue // ended before the window
		}
		s, _ := sums[i].done(t.Prices)
		out.Tasks = append(out.Tasks, TaskCost{ID: tk.ID, Text: tk.Text, Sum: s})
	}
	if len(unpriced) > 0 && out.Note == "" {
		out.Note = fmt.Sprintf("%s records tokens, not money, and there is no price for %v: add it to $MOSH_HOME/herd/prices.json", orEngine(m.Engine), unpriced)
	}
	return out
}

func orEngine(e string) string {
	if e == "" {
		return "this program"
	}
	return e
}

// taskAt is the index of the task running at atMs, -1 when none was.
func taskAt(tasks []Task, atMs, nowMs int64) int {
	for i := len(tasks) - 1; i >= 0; i-- {
		tk := tasks[i]
		if atMs < tk.SubmittedMs {
			continue
		}
		end := tk.EndedMs
		if end == 0 {
			end = nowMs
			if i+1 < len(tasks) {
				end = tasks[i+1].SubmittedMs
			}
		}
		if atMs <= end {
			return i
		}
		return -1
	}
	return -1
}

// Totals sums the members' sums into the report's total (money only when every member's is known).
func (r *Report) Totals() {
	var t Sum
	known, usd := true, 0.0
	models := map[string]bool{}
	for _, m := range r.Members {
		t.Tokens.Add(m.Tokens)
		t.Responses += m.Responses
		for _, x := range m.Models {
			models[x] = true
		}
		if m.CostUSD != nil {
			usd += *m.CostUSD
		} else if m.Responses > 0 {
			known = false
		}
	}
	t.TotalTokens = t.Tokens.Total()
	for x := range models {
		t.Models = append(t.Models, x)
	}
	sort.Strings(t.Models)
	if known {
		t.CostUSD = &usd
	}
	r.Total = t
}
