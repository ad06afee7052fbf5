package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/cost"
)

// mosh herd cost reads a Claude member's real transcript (herd/cost/testdata: Claude Code
// 2.1.332 against the fake model API) where Claude Code keeps it for the member's directory, and
// says of a program that records nothing that it records nothing.
func TestHerdCost(t *testing.T) {
	e := newHerdEnv(t)
	var empty cost.Report
	if err := json.Unmarshal([]byte(e.ok("herd", "cost", "--json")), &empty); err != nil || len(empty.Members) != 0 {
		t.Fatalf("cost of no herd: %v %+v", err, empty)
	}
	e.ok("herd", "run", "--name", "api", "--engine", "claude", "--", "/bin/sh", "-c", "exec cat")
	e.ok("herd", "run", "--name", "sh", "--", "/bin/sh", "-c", "exec cat")
	b, err := os.ReadFile("../../herd/cost/testdata/claude-session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.home, ".claude", "projects", cost.Slug(e.home))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s1.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var r cost.Report
	out := e.ok("herd", "cost", "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Members) != 2 {
		t.Fatalf("cost --json: %v\n%s", err, out)
	}
	api, sh := r.Members[0], r.Members[1]
	if api.Name != "api" || api.TotalTokens != 16 || api.CostUSD == nil || *api.CostUSD != 0.000128 || api.CostSource != "engine" || len(api.Files) != 1 {
		t.Fatalf("api: %+v", api)
	}
	if sh.Name != "sh" || sh.CostUSD != nil || sh.TotalTokens != 0 || !strings.Contains(sh.Note, "records no usage") {
		t.Fatalf("sh: %+v", sh)
	}
	// The total has no money when a member that used tokens has none; here sh used none.
	if r.Total.TotalTokens != 16 || r.Total.CostUSD == nil {
		t.Fatalf("total: %+v", r.Total)
	}
	// Off a terminal: tab-separated rows.
	if tsv := e.ok("herd", "cost", "api"); !strings.Contains(tsv, "api\t-\t16\t12\t4\t0\t$0.000128\tcost from engine") {
		t.Fatalf("cost api:\n%s", tsv)
	}
	// --since after the record: nothing counted.
	if err := json.Unmarshal([]byte(e.ok("herd", "cost", "api", "--since", "1s", "--json")), &r); err != nil || r.Members[0].TotalTokens != 0 {
		t.Fatalf("--since: %v %+v", err, r)
	}
	// Bad input.
	if _, errs := e.expect(3, "herd", "cost", "ghost"); !strings.Contains(errs, "no member named ghost") {
		t.Fatalf("cost ghost: %q", errs)
	}
	e.expect(1, "herd", "cost", "Bad!")
	e.expect(1, "herd", "cost", "--since", "soon")
	if err := os.WriteFile(filepath.Join(e.home, "herd", "prices.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs := e.expect(1, "herd", "cost"); !strings.Contains(errs, "prices.json") {
		t.Fatalf("a broken prices file is named: %q", errs)
	}
}
