package herd

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mosh-dev/mosh/herd/state"
)

// EngineInfo is what an adapter may know of one engine of the engines table: how to find its
// executable and which model, thinking and extra-directory arguments it takes. The rest of the
// row (screens, hooks, keys) stays the daemon's.
type EngineInfo struct {
	Name           string            `json:"name"`
	Binaries       []string          `json:"binaries,omitempty"`
	ModelFlag      string            `json:"modelFlag,omitempty"`
	ModelAliases   map[string]string `json:"modelAliases,omitempty"`
	DefaultModel   string            `json:"defaultModel,omitempty"`
	ThinkingArgs   []string          `json:"thinkingArgs,omitempty"`
	ThinkingLevels []string          `json:"thinkingLevels,omitempty"`
	AddDirArgs     []string          `json:"addDirArgs,omitempty"`
}

// EngineProblem is one complaint about the user's engines table, with its fix.
type EngineProblem struct {
	Text string `json:"text"`
	Fix  string `json:"fix"`
}

// EnginesResult is the engines table of a herd as its daemon reads it, sorted by name.
type EnginesResult struct {
	Engines  []EngineInfo    `json:"engines"`
	Problems []EngineProblem `json:"problems"`
	keys     map[string]int  // name, alias or binary → index in Engines
}

// Engines reads the engines table of opts's herd — the embedded table with
// $MOSH_HOME/herd/engines.json applied, as HookPlans does — without needing a daemon. A home that
// cannot be resolved gives the embedded table.
func Engines(opts Options) *EnginesResult {
	dir := ""
	if o, err := opts.Resolve(); err == nil {
		dir = HerdDir(o.Home)
	}
	tab := state.Load(dir)
	r := &EnginesResult{Engines: []EngineInfo{}, Problems: []EngineProblem{}, keys: map[string]int{}}
	for _, p := range tab.Problems() {
		r.Problems = append(r.Problems, EngineProblem{Text: p.String(), Fix: p.Fix})
	}
	for _, n := range tab.Names() {
		e, _ := tab.Lookup(n)
		if e == nil {
			continue
		}
		r.keys[e.Name] = len(r.Engines)
		r.Engines = append(r.Engines, EngineInfo{Name: e.Name, Binaries: e.Binaries, ModelFlag: e.ModelFlag,
			ModelAliases: e.ModelAliases, DefaultModel: e.DefaultModel, ThinkingArgs: e.ThinkingArgs,
			ThinkingLevels: e.ThinkingLevels, AddDirArgs: e.AddDirArgs})
	}
	// Aliases and binary names, as the table's Lookup resolves them.
	for _, k := range tab.LookupNames() {
		if e, ok := tab.Lookup(k); ok {
			if _, taken := r.keys[k]; !taken {
				r.keys[k] = r.keys[e.Name]
			}
		}
	}
	return r
}

// Names lists the engines, sorted.
func (r *EnginesResult) Names() []string {
	out := make([]string, len(r.Engines))
	for i, e := range r.Engines {
		out[i] = e.Name
	}
	return out
}

// Resolve finds an engine by name, alias or binary basename (case-insensitive), with an error
// that names the fix.
func (r *EnginesResult) Resolve(name string) (*EngineInfo, error) {
	if i, ok := r.keys[strings.ToLower(filepath.Base(name))]; ok {
		return &r.Engines[i], nil
	}
	return nil, fmt.Errorf("unknown engine %q: use one of %s (or add it to engines.json in the herd directory)",
		name, strings.Join(r.Names(), ", "))
}
