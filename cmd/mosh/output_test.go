package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// jsonInvocations are a representative run of every Go verb with --json, in the order they run
// against one herd (a /bin/sh member api, then a task t-1 from its prompt). codes are the exit
// codes the run may end with; errorDoc says the run fails by design and its JSON is the
// {"error": …} document (there is no remote member to ask).
var jsonInvocations = []struct {
	path     string
	args     []string
	codes    []int
	errorDoc bool
	jq       []string // the --jq run, when the --json run cannot be repeated as is
	// volatile: the member moves between the two runs (a task ends, a reading changes), so
	// optional keys may come and go: only the document's kind is compared.
	volatile bool
}{
	{path: "mosh herd run", args: []string{"herd", "run", "--name", "api", "--json", "--", "/bin/sh"},
		jq: []string{"herd", "run", "--name", "web", "--jq=@this", "--", "/bin/sh"}},
	{path: "mosh herd start", args: []string{"--dry-run", "herd", "start", "claude", "--name", "cc", "--json"}},
	{path: "mosh herd prompt", args: []string{"herd", "prompt", "api", "echo hi", "--json"},
		jq: []string{"herd", "prompt", "web", "echo hi", "--jq=@this"}, volatile: true},
	{path: "mosh herd task", args: []string{"herd", "task", "t-1", "--json"}},
	{path: "mosh herd tasks", args: []string{"herd", "tasks", "--json"}},
	{path: "mosh herd log", args: []string{"herd", "log", "api", "--json"}},
	{path: "mosh herd stats", args: []string{"herd", "stats", "--json"}},
	{path: "mosh herd cost", args: []string{"herd", "cost", "--json"}},
	{path: "mosh herd top", args: []string{"herd", "top", "--json"}, volatile: true},
	{path: "mosh herd read", args: []string{"herd", "read", "api", "--json"}},
	{path: "mosh herd notify add", args: []string{"--dry-run", "herd", "notify", "add", "desktop", "--json"}},
	{path: "mosh herd notify list", args: []string{"herd", "notify", "list", "--json"}},
	{path: "mosh herd notify remove", args: []string{"herd", "notify", "remove", "n9", "--json"}, codes: []int{3}, errorDoc: true},
	{path: "mosh herd notify test", args: []string{"herd", "notify", "test", "n9", "--json"}, codes: []int{3}, errorDoc: true},
	{path: "mosh herd reply", args: []string{"herd", "reply", "q9", "yes", "--json"}, codes: []int{3}, errorDoc: true},
	{path: "mosh herd answer", args: []string{"herd", "answer", "api", "yes", "--json"}, codes: []int{1}, errorDoc: true},
	{path: "mosh herd send-keys", args: []string{"herd", "send-keys", "api", "--json", "--", "Enter"}},
	{path: "mosh herd interrupt", args: []string{"herd", "interrupt", "api", "--json"}, volatile: true},
	{path: "mosh herd explain", args: []string{"herd", "explain", "api", "--json"}, volatile: true},
	{path: "mosh herd report", args: []string{"herd", "report", "api", "working", "--json"}},
	{path: "mosh herd wait", args: []string{"herd", "wait", "api", "--state", "blocked", "--timeout", "1ms", "--json"}, codes: []int{0, 2}, volatile: true},
	{path: "mosh wait", args: []string{"wait", "api", "--state", "blocked", "--timeout", "1ms", "--json"}, codes: []int{0, 2}, volatile: true},
	{path: "mosh herd", args: []string{"herd", "--json"}},
	{path: "mosh herd ps", args: []string{"herd", "ps", "--json"}},
	{path: "mosh ps", args: []string{"ps", "--json"}},
	{path: "mosh herd status", args: []string{"herd", "status", "--json"}},
	{path: "mosh herd daemon status", args: []string{"herd", "daemon", "status", "--json"}},
	{path: "mosh herd daemon stop", args: []string{"--dry-run", "herd", "daemon", "stop", "--yes", "--json"}},
	{path: "mosh herd doctor", args: []string{"herd", "doctor", "--json"}, codes: []int{0, 5}},
	{path: "mosh herd kill", args: []string{"herd", "kill", "ghost", "--json"}, codes: []int{3}},
	{path: "mosh kill", args: []string{"kill", "ghost", "--json"}, codes: []int{3}},
	{path: "mosh herd prune", args: []string{"herd", "prune", "--json"}},
	{path: "mosh herd restore", args: []string{"herd", "restore", "--dry-run", "--json"}},
	{path: "mosh restore", args: []string{"restore", "--dry-run", "--json"}},
	{path: "mosh herd remote add", args: []string{"--dry-run", "herd", "remote", "add", "far", "http://127.0.0.1:9/", "--json"}},
	{path: "mosh herd remote list", args: []string{"herd", "remote", "list", "--json"}},
	{path: "mosh herd remote ping", args: []string{"herd", "remote", "ping", "ghost", "--json"}, codes: []int{3}, errorDoc: true},
	{path: "mosh herd remote card", args: []string{"herd", "remote", "card", "ghost", "--json"}, codes: []int{3}, errorDoc: true},
	{path: "mosh herd remote remove", args: []string{"herd", "remote", "remove", "ghost", "--json"}, codes: []int{3}, errorDoc: true},
	{path: "mosh herd token", args: []string{"herd", "token", "--json"}},
	{path: "mosh herd serve", args: []string{"--dry-run", "herd", "serve", "--port", "0", "--json"}},
	{path: "mosh commands", args: []string{"commands", "--json"}},
	{path: "mosh types", args: []string{"types", "--json"}},
	{path: "mosh install", args: []string{"install", "--json"}},
	{path: "mosh template", args: []string{"template", "--json"}},
	{path: "mosh template list", args: []string{"template", "list", "--json"}},
}

// Go verbs with --json that print no JSON document of their own, each for a reason.
var jsonExempt = map[string]string{
	"mosh herd mcp": "speaks JSON-RPC on stdin/stdout; --json is accepted for uniformity",
}

// Every Go verb with --json (walked from the command tree `mosh commands --json` lists) prints
// valid JSON for a representative run, and --jq filters that same document: its top-level keys
// (or its being an array) are the --json output's. The printing goes through the one output
// helper: no other file writes JSON or reads a --json flag (checked in the source).
func TestEveryJSONVerbPrintsThroughTheOutputHelper(t *testing.T) {
	e := newHerdEnv(t)
	var l commandsListing
	if err := json.Unmarshal([]byte(e.ok("commands", "--json")), &l); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range l.Verbs {
		if v.Origin != "go" || jsonExempt[v.Path] != "" {
			continue
		}
		for _, f := range v.Flags {
			if f.Name == "json" {
				want = append(want, v.Path)
			}
		}
	}
	var have []string
	for _, inv := range jsonInvocations {
		have = append(have, inv.path)
	}
	sort.Strings(want)
	sort.Strings(have)
	if !slices.Equal(want, have) {
		t.Fatalf("verbs with --json and the invocations here differ: add a representative run for each new verb\nverbs:       %v\ninvocations: %v", want, have)
	}

	for _, inv := range jsonInvocations {
		codes := inv.codes
		if codes == nil {
			codes = []int{0}
		}
		out, errs, code := e.run(inv.args...)
		if !slices.Contains(codes, code) || !json.Valid([]byte(out)) {
			t.Errorf("mosh %s: exit %d (want %v), stdout not one JSON document:\n%s\nstderr: %s", strings.Join(inv.args, " "), code, codes, out, errs)
			continue
		}
		var doc any
		_ = json.Unmarshal([]byte(out), &doc)
		obj, isObj := doc.(map[string]any)
		if _, isErr := obj["error"]; isObj && isErr != inv.errorDoc {
			t.Errorf("mosh %s: error document %v, want %v: %s", strings.Join(inv.args, " "), isErr, inv.errorDoc, out)
		}
		jqArgs := inv.jq
		if jqArgs == nil {
			jqArgs = slices.Clone(inv.args)
			jqArgs[slices.Index(jqArgs, "--json")] = "--jq=@this"
		}
		jout, jerrs, jcode := e.run(jqArgs...)
		if !slices.Contains(codes, jcode) || !json.Valid([]byte(jout)) || strings.Count(strings.TrimSpace(jout), "\n") != 0 {
			t.Errorf("mosh %s: exit %d, not one line of JSON:\n%s\nstderr: %s", strings.Join(jqArgs, " "), jcode, jout, jerrs)
			continue
		}
		var jdoc any
		_ = json.Unmarshal([]byte(jout), &jdoc)
		switch d := doc.(type) {
		case map[string]any:
			jobj, ok := jdoc.(map[string]any)
			if !ok || (!inv.volatile && !slices.Equal(sortedKeys(d), sortedKeys(jobj))) {
				t.Errorf("mosh %s: --jq @this gives %s, --json gave keys %v", strings.Join(jqArgs, " "), jout, sortedKeys(d))
			}
		case []any:
			if _, ok := jdoc.([]any); !ok {
				t.Errorf("mosh %s: --jq @this gives %s, --json gave an array", strings.Join(jqArgs, " "), jout)
			}
		}
	}

	// The source: writeJSON and writeRawJSON are called by the output helper (and jsonError,
	// which prints a failure as JSON) only; a --json flag is registered and read there only.
	helpers := map[string]bool{"output.go": true, "errjson.go": true}
	files, _ := filepath.Glob("*.go")
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") || helpers[path] {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := ""
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			}
			where := fset.Position(call.Pos()).String()
			switch name {
			case "writeJSON":
				t.Errorf("%s: writes JSON itself (use output)", where)
			case "writeRawJSON":
				t.Errorf("%s: writes the daemon's JSON itself (use output with rawResult)", where)
			case "BoolVar", "Bool", "BoolVarP", "BoolP", "Lookup", "GetBool":
				for _, a := range call.Args {
					if bl, ok := a.(*ast.BasicLit); ok && bl.Kind == token.STRING {
						if s, _ := strconv.Unquote(bl.Value); s == "json" {
							t.Errorf("%s: %s(%q) outside the output helper (use jsonFlag / jsonOn)", where, name, s)
						}
					}
				}
			case "Encode", "MarshalIndent":
				t.Errorf("%s: encodes JSON itself (use output)", where)
			}
			return true
		})
	}
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
