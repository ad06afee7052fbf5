package cost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The fixtures are real records: Claude Code 2.1.332 (`claude -p "say fake-plain"`) and Codex
// 0.171.0 (`codex exec`) run against conformance/engines' fake model API, in /tmp/toph/proj
// (the attachment and world_state lines dropped to keep them small).
const fixtureCwd = "/tmp/toph/proj"

func at(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// home lays the fixtures out where the engines write them, under a HOME of the test's own.
func home(t *testing.T) (string, func(string) string) {
	t.Helper()
	h := t.TempDir()
	copyFile(t, "testdata/claude-session.jsonl", filepath.Join(h, ".claude", "projects", Slug(fixtureCwd), "1aa26627.jsonl"))
	copyFile(t, "testdata/codex-rollout.jsonl", filepath.Join(h, ".codex", "sessions", "2026", "12", "06", "rollout-2026-12-06T13-15-31-01a24b7e.jsonl"))
	return h, func(k string) string {
		if k == "HOME" {
			return h
		}
		return ""
	}
}

func TestClaudeTranscript(t *testing.T) {
	tb, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	_, getenv := home(t)
	m := Member{Name: "api", Engine: "claude", Cwd: fixtureCwd, Tasks: []Task{
		{ID: "t-1", Text: "say fake-plain", SubmittedMs: at("2026-12-06T13:15:04.000Z"), EndedMs: at("2026-12-06T13:15:06.000Z")},
		{ID: "t-0", Text: "earlier", SubmittedMs: at("2026-12-06T13:00:00.000Z"), EndedMs: at("2026-12-06T13:01:00.000Z")},
	}}
	c := tb.Member(m, getenv, 0, at("2026-12-06T14:00:00Z"))
	if c.Note != "" || len(c.Files) != 1 {
		t.Fatalf("files %v note %q", c.Files, c.Note)
	}
	if c.Tokens != (Tokens{Input: 12, Output: 4}) || c.TotalTokens != 16 || c.Responses != 1 || strings.Join(c.Models, ",") != "claude-opus-5-5" {
		t.Fatalf("member sum %+v", c.Sum)
	}
	if c.CostUSD == nil || *c.CostUSD != 0.000128 || c.CostSource != "engine" {
		t.Fatalf("Claude Code's own cost-state: %+v", c.Sum)
	}
	if len(c.Tasks) != 2 || c.Tasks[1].ID != "t-1" || c.Tasks[1].TotalTokens != 16 || c.Tasks[0].TotalTokens != 0 {
		t.Fatalf("per task: %+v", c.Tasks)
	}
	// --since after the response: nothing counted.
	c = tb.Member(m, getenv, at("2026-12-06T13:30:00Z"), at("2026-12-06T14:00:00Z"))
	if c.TotalTokens != 0 || len(c.Tasks) != 0 {
		t.Fatalf("since: %+v", c)
	}
	// Another directory: no session file, said so.
	m.Cwd = "/elsewhere"
	if c := tb.Member(m, getenv, 0, 0); c.TotalTokens != 0 || !strings.Contains(c.Note, "no claude session file") {
		t.Fatalf("elsewhere: %+v", c)
	}
}

func TestCodexRollout(t *testing.T) {
	h, getenv := home(t)
	tb, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	m := Member{Name: "web", Engine: "codex", Cwd: fixtureCwd, Tasks: []Task{{ID: "t-2", Text: "say fake-plain", SubmittedMs: at("2026-12-06T13:15:30Z")}}}
	c := tb.Member(m, getenv, 0, at("2026-12-06T14:00:00Z"))
	if c.Tokens != (Tokens{Input: 12, Output: 4}) || strings.Join(c.Models, ",") != "gpt-fake" || len(c.Tasks) != 1 || c.Tasks[0].TotalTokens != 16 {
		t.Fatalf("codex: %+v", c)
	}
	// Codex records no money, and no price is guessed.
	if c.CostUSD != nil || !strings.Contains(c.Note, "no price for [gpt-fake]") {
		t.Fatalf("codex money: %+v note %q", c.Sum, c.Note)
	}
	// With the user's price it is priced.
	if err := os.WriteFile(filepath.Join(h, "prices.json"), []byte(`{"gpt-fake": {"input": 1000, "output": 2000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tb, err = Load(h)
	if err != nil {
		t.Fatal(err)
	}
	c = tb.Member(m, getenv, 0, at("2026-12-06T14:00:00Z"))
	if c.CostUSD == nil || *c.CostUSD != 0.02 || c.CostSource != "prices" || c.Note != "" {
		t.Fatalf("priced: %+v %q", c.Sum, c.Note)
	}
	// A rollout of another directory is not this member's.
	m.Cwd = "/tmp/toph"
	if c := tb.Member(m, getenv, 0, 0); c.TotalTokens != 0 {
		t.Fatalf("other cwd: %+v", c)
	}
	// A broken prices file is an error that names it.
	if err := os.WriteFile(filepath.Join(h, "prices.json"), []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(h); err == nil || !strings.Contains(err.Error(), "prices.json") {
		t.Fatalf("bad prices: %v", err)
	}
}

func TestEnginesThatRecordNothingSaySo(t *testing.T) {
	tb, _ := Load("")
	_, getenv := home(t)
	for _, eng := range []string{"opencode", ""} {
		c := tb.Member(Member{Name: "x", Engine: eng, Cwd: fixtureCwd}, getenv, 0, 0)
		if c.CostUSD != nil || c.TotalTokens != 0 || !strings.Contains(c.Note, "records no usage") {
			t.Fatalf("%q: %+v", eng, c)
		}
	}
}

func TestStatedUsageOfAICalls(t *testing.T) {
	for note, want := range map[string]Record{
		`usage {"total_cost_usd":0.0021,"usage":{"input_tokens":7,"output_tokens":3}}`:           {CostUSD: 0.0021, HasCost: true, Tokens: Tokens{Input: 7, Output: 3}},
		`usage {"input_tokens":11,"output_tokens":2,"cache_read_input_tokens":5}`:                {Tokens: Tokens{Input: 11, Output: 2, CacheRead: 5}},
		`usage {"prompt_tokens":9,"completion_tokens":1}`:                                        {Tokens: Tokens{Input: 9, Output: 1}},
		`usage {"input_tokens":12,"input_tokens_details":{"cached_tokens":4},"output_tokens":5}`: {Tokens: Tokens{Input: 8, CacheRead: 4, Output: 5}},
	} {
		got, ok := StatedUsage(note)
		if !ok || got != want {
			t.Errorf("%s: %+v %v, want %+v", note, got, ok, want)
		}
	}
	for _, note := range []string{"", "usage {", "interrupted", `usage {"foo":1}`} {
		if _, ok := StatedUsage(note); ok {
			t.Errorf("%q states no usage", note)
		}
	}
	tb, _ := Load("")
	c := tb.Member(Member{Name: "ai-claude", Engine: "ai-claude", Tasks: []Task{
		{ID: "t-5", SubmittedMs: 10, EndedMs: 20, Note: `usage {"total_cost_usd":0.5,"usage":{"input_tokens":7,"output_tokens":3}}`},
		{ID: "t-6", SubmittedMs: 30, EndedMs: 40, Note: `usage {"total_cost_usd":0.25,"usage":{"input_tokens":1,"output_tokens":1}}`},
	}}, func(string) string { return "" }, 0, 100)
	if c.CostUSD == nil || *c.CostUSD != 0.75 || c.TotalTokens != 12 || len(c.Tasks) != 2 || *c.Tasks[1].CostUSD != 0.25 {
		t.Fatalf("ai calls: %+v", c)
	}
}
