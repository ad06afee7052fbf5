// Package cost reads what the herd's model calls used — tokens, and money where it is recorded —
// from the engines' own records: Claude Code's session transcripts (the file its hooks name as
// transcript_path), Codex's rollout files, and the usage an ai() call's engine or API stated
// (kept in the call's task note). Nothing is estimated from the screen. Where each engine keeps
// its records and how they read is data (records.json, embedded); prices are data too, and
// empty unless the user adds some ($MOSH_HOME/herd/prices.json): money comes from an engine
// that records it (Claude Code's cost-state), or from a price the user gave, or is unknown.
package cost

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

//go:embed records.json
var recordsJSON []byte

// Tokens are counts of one or more model responses.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Reasoning  int64 `json:"reasoning,omitempty"` // part of Output where the engine says so
}

// Total is every token counted once (reasoning is part of output).
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// Add adds u to t.
func (t *Tokens) Add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.Reasoning += u.Reasoning
}

// Record is one model response's usage (Tokens), or money the engine recorded (CostUSD), at a
// time (unix ms).
type Record struct {
	AtMs    int64
	Model   string
	Tokens  Tokens
	CostUSD float64 // engine-recorded money attributed to this moment (Claude's cost-state delta)
	HasCost bool
}

// Engine is records.json's entry for one engine.
type Engine struct {
	Format  string `json:"format"`
	RootEnv string `json:"rootEnv"`
	Home    string `json:"home"`
	Layout  string `json:"layout"`
}

// Price is USD per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// USD is the price of t.
func (p Price) USD(t Tokens) float64 {
	return (float64(t.Input)*p.Input + float64(t.Output)*p.Output + float64(t.CacheRead)*p.CacheRead + float64(t.CacheWrite)*p.CacheWrite) / 1e6
}

// Table is records.json with the user's prices merged in.
type Table struct {
	Engines map[string]Engine `json:"engines"`
	Prices  map[string]Price  `json:"prices"`
}

// Load reads the embedded table and merges herdDir/prices.json ({"model": {input, output, …}})
// when it exists; a bad prices file is an error that names it.
func Load(herdDir string) (Table, error) {
	var t Table
	if err := json.Unmarshal(recordsJSON, &t); err != nil {
		return t, fmt.Errorf("records.json: %v", err)
	}
	if t.Prices == nil {
		t.Prices = map[string]Price{}
	}
	if herdDir == "" {
		return t, nil
	}
	path := filepath.Join(herdDir, "prices.json")
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return t, nil
		}
		return t, err
	}
	var user map[string]Price
	if err := json.Unmarshal(b, &user); err != nil {
		return t, fmt.Errorf("%s: %v: it holds {\"MODEL\": {\"input\": USD per Mtok, \"output\": …, \"cacheRead\": …, \"cacheWrite\": …}}", path, err)
	}
	for k, v := range user {
		t.Prices[k] = v
	}
	return t, nil
}

// root is the engine's records directory for an environment.
func (e Engine) root(getenv func(string) string) string {
	if e.RootEnv != "" {
		if v := getenv(e.RootEnv); v != "" {
			return v
		}
	}
	home := getenv("HOME")
	if home == "" || e.Home == "" {
		return ""
	}
	return filepath.Join(home, e.Home)
}

// Slug is Claude Code's project directory name for cwd: every character outside [A-Za-z0-9]
// becomes '-'.
func Slug(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Files are the engine's record files for a member working in cwd that were written at or after
// sinceMs (a 5 s slack for clocks and file-system times).
func (e Engine) Files(getenv func(string) string, cwd string, sinceMs int64) []string {
	root := e.root(getenv)
	if root == "" || cwd == "" {
		return nil
	}
	since := time.UnixMilli(sinceMs).Add(-5 * time.Second)
	recent := func(path string) bool {
		fi, err := os.Stat(path)
		return err == nil && !fi.ModTime().Before(since)
	}
	var out []string
	switch e.Layout {
	case "cwd-slug":
		matches, _ := filepath.Glob(filepath.Join(root, "projects", Slug(cwd), "*.jsonl"))
		for _, m := range matches {
			if recent(m) {
				out = append(out, m)
			}
		}
	case "dated":
		_ = filepath.WalkDir(filepath.Join(root, "sessions"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(d.Name(), ".jsonl") {
				return nil
			}
			if recent(path) && codexCwd(path) == filepath.Clean(cwd) {
				out = append(out, path)
			}
			return nil
		})
	}
	return out
}

// Read reads one record file of the engine's format.
func (e Engine) Read(path string) ([]Record, error) {
	switch e.Format {
	case "claude-transcript":
		return readClaude(path)
	case "codex-rollout":
		return readCodex(path)
	}
	return nil, fmt.Errorf("records.json: unknown format %q", e.Format)
}

func scanLines(path string, each func(line []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 256<<10), 64<<20)
	for sc.Scan() {
		each(sc.Bytes())
	}
	return sc.Err()
}

func ms(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// readClaude: one record per assistant message (Claude writes a line per content block, each with
// the message's usage: the last line of a message id counts), and one money record per
// cost-state line (the growth of the session's totalCostUSD since the previous one, at the time
// of the last line before it).
func readClaude(path string) ([]Record, error) {
	var out []Record
	byID := map[string]int{}
	var lastAt int64
	var lastCost float64
	err := scanLines(path, func(line []byte) {
		var l struct {
			Type         string  `json:"type"`
			Timestamp    string  `json:"timestamp"`
			TotalCostUSD float64 `json:"totalCostUSD"`
			Message      struct {
				ID    string `json:"id"`
				Model string `json:"model"`
				Usage *struct {
					Input      int64 `json:"input_tokens"`
					Output     int64 `json:"output_tokens"`
					CacheRead  int64 `json:"cache_read_input_tokens"`
					CacheWrite int64 `json:"cache_creation_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &l) != nil {
			return
		}
		if at := ms(l.Timestamp); at > 0 {
			lastAt = at
		}
		switch l.Type {
		case "assistant":
			u := l.Message.Usage
			if u == nil {
				return
			}
			r := Record{AtMs: lastAt, Model: l.Message.Model, Tokens: Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}}
			if i, ok := byID[l.Message.ID]; ok && l.Message.ID != "" {
				out[i] = r
				return
			}
			byID[l.Message.ID] = len(out)
			out = append(out, r)
		case "cost-state":
			if d := l.TotalCostUSD - lastCost; d > 0 {
				out = append(out, Record{AtMs: lastAt, CostUSD: d, HasCost: true})
			}
			lastCost = l.TotalCostUSD
		}
	})
	return out, err
}

type codexUsage struct {
	Input     int64 `json:"input_tokens"`
	Cached    int64 `json:"cached_input_tokens"`
	CacheW    int64 `json:"cache_write_input_tokens"`
	Output    int64 `json:"output_tokens"`
	Reasoning int64 `json:"reasoning_output_tokens"`
}

// readCodex: one record per token_usage_record (a response's usage), the model from the last
// turn_context. Codex counts cached input inside input_tokens: it is split out here.
func readCodex(path string) ([]Record, error) {
	var out []Record
	model := ""
	err := scanLines(path, func(line []byte) {
		var l struct {
			Type      string `json:"type"`
			Timestamp string `json:"timestamp"`
			Payload   struct {
				Model string      `json:"model"`
				Usage *codexUsage `json:"usage"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil {
			return
		}
		switch l.Type {
		case "turn_context":
			if l.Payload.Model != "" {
				model = l.Payload.Model
			}
		case "token_usage_record":
			u := l.Payload.Usage
			if u == nil {
				return
			}
			out = append(out, Record{AtMs: ms(l.Timestamp), Model: model, Tokens: Tokens{
				Input: max(0, u.Input-u.Cached), CacheRead: u.Cached, CacheWrite: u.CacheW, Output: u.Output, Reasoning: u.Reasoning}})
		}
	})
	return out, err
}

// codexCwd is the working directory a rollout file's session_meta names ("" when none).
func codexCwd(path string) string {
	cwd := ""
	done := false
	_ = scanLines(path, func(line []byte) {
		if done {
			return
		}
		done = true // session_meta is the first line
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Cwd string `json:"cwd"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) == nil && l.Type == "session_meta" && l.Payload.Cwd != "" {
			cwd = filepath.Clean(l.Payload.Cwd)
		}
	})
	return cwd
}

// StatedUsage reads the usage an ai() call's engine or API stated, as its task note keeps it
// ("usage {…}"): Claude Code's {total_cost_usd, usage:{…}}, the Messages API's {input_tokens,
// output_tokens, cache_…}, the Responses and Chat APIs' {input_tokens|prompt_tokens,
// output_tokens|completion_tokens, …}. ok is false when the note states none.
func StatedUsage(note string) (r Record, ok bool) {
	i := strings.Index(note, "usage {")
	if i < 0 {
		return r, false
	}
	raw := []byte(note[i+len("usage "):])
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return r, false
	}
	if c, found := top["total_cost_usd"]; found {
		if json.Unmarshal(c, &r.CostUSD) == nil {
			r.HasCost = true
		}
	}
	if inner, found := top["usage"]; found {
		var m map[string]json.RawMessage
		if json.Unmarshal(inner, &m) == nil {
			top = m
		}
	}
	num := func(keys ...string) int64 {
		for _, k := range keys {
			var v int64
			if b, found := top[k]; found && json.Unmarshal(b, &v) == nil {
				return v
			}
		}
		return 0
	}
	r.Tokens = Tokens{Input: num("input_tokens", "prompt_tokens"), Output: num("output_tokens", "completion_tokens"),
		CacheRead: num("cache_read_input_tokens"), CacheWrite: num("cache_creation_input_tokens")}
	if d, found := top["input_tokens_details"]; found {
		var x struct {
			Cached int64 `json:"cached_tokens"`
		}
		if json.Unmarshal(d, &x) == nil && x.Cached > 0 {
			r.Tokens.CacheRead, r.Tokens.Input = x.Cached, max(0, r.Tokens.Input-x.Cached)
		}
	}
	return r, r.HasCost || r.Tokens.Total() > 0
}
