package herd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/herd/state"
)

// Engines resolves every name the table's Lookup does to the same engine, and carries the user's
// engines.json (a new engine, a problem) as the daemon reads it.
func TestEnginesResolvesAsTheTable(t *testing.T) {
	home := t.TempDir()
	dir := HerdDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	user := `{"engines": [{"name": "mine", "binaries": ["my-agent"], "aliases": ["Mine2"], "modelFlag": "--model", "modelAliases": {"big": "mine-big-1"}},
	{"name": "broken", "prompt": "("}]}`
	if err := os.WriteFile(filepath.Join(dir, "engines.json"), []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	r := Engines(Options{Home: home})
	tab := state.Load(dir)
	if strings.Join(r.Names(), ",") != strings.Join(tab.Names(), ",") {
		t.Fatalf("names %v, table %v", r.Names(), tab.Names())
	}
	for _, k := range tab.LookupNames() {
		want, _ := tab.Lookup(k)
		got, err := r.Resolve(k)
		if err != nil || got.Name != want.Name {
			t.Fatalf("Resolve(%q) = %v, %v; the table says %s", k, got, err, want.Name)
		}
	}
	if e, err := r.Resolve("/usr/bin/MY-AGENT"); err != nil || e.Name != "mine" || e.ModelAliases["big"] != "mine-big-1" {
		t.Fatalf("Resolve by binary path = %+v, %v", e, err)
	}
	if _, err := r.Resolve("nosuch"); err == nil || !strings.Contains(err.Error(), "engines.json") {
		t.Fatalf("unknown engine: %v", err)
	}
	if len(r.Problems) != len(tab.Problems()) {
		t.Fatalf("problems %v, table %v", r.Problems, tab.Problems())
	}
}
