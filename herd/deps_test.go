package herd

import (
	"slices"
	"strings"
	"testing"
)

// heavyPackages are what a program that drives a herd must not link: the ledger and its SQLite
// driver (either one), the VT emulator and the screen built on it, the JavaScript engine, and the
// remote-member connections with the A2A SDK under them. They belong to the daemon
// (herd/internal/...) and the runtime, never to the client.
var heavyPackages = []string{
	"modernc.org/sqlite",
	"github.com/mattn/go-sqlite3",
	"github.com/charmbracelet/x/vt",
	modulePath + "/herd/screen",
	modulePath + "/ledger",
	"github.com/dop251/goja",
	modulePath + "/herd/remote",
	"github.com/a2aproject/a2a-go",
}

// heavy says whether pkg is one of heavyPackages or a package inside one of them
// (modernc.org/sqlite/lib). herd/screen/snapshot, the plain picture of a screen that the
// engines table's classifier reads, is not the emulator.
func heavy(pkg string) bool {
	if pkg == modulePath+"/herd/screen/snapshot" {
		return false
	}
	for _, h := range heavyPackages {
		if pkg == h || strings.HasPrefix(pkg, h+"/") {
			return true
		}
	}
	return false
}

// The packages an importer uses to drive a herd (the client and its wire types, the vocabulary)
// link no SQLite, no VT emulator and no goja: a program that imports them to prompt a member
// builds without cgo and stays small. The test names the import chain that reaches a heavy
// package, on Linux and on macOS (platform files may import differently).
func TestClientLinksNothingHeavy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	roots := []string{modulePath + "/herd", modulePath + "/herd/vocab"}
	for _, goos := range []string{"linux", "darwin"} {
		lines := goListEnv(t, []string{"GOOS=" + goos}, append([]string{"-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, roots...)...)
		imports := map[string][]string{}
		for _, l := range lines {
			f := strings.Fields(l)
			imports[f[0]] = f[1:]
		}
		for _, root := range roots {
			if _, ok := imports[root]; !ok {
				t.Fatalf("GOOS=%s: go list -deps did not list %s", goos, root)
			}
			for _, chain := range heavyChains(root, imports) {
				t.Errorf("GOOS=%s: the client package %s links %s through %s: move what needs it under herd/internal/ or give the client a plain type",
					goos, root, chain[len(chain)-1], strings.Join(chain, " → "))
			}
		}
	}
}

// heavyChains lists, for each heavy package reachable from root, the shortest import chain from
// root to it (breadth first over imports).
func heavyChains(root string, imports map[string][]string) [][]string {
	parent := map[string]string{root: ""}
	queue := []string{root}
	var chains [][]string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if heavy(p) {
			chain := []string{p}
			for q := parent[p]; q != ""; q = parent[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			chains = append(chains, chain)
			continue // one chain per heavy package is enough
		}
		for _, im := range imports[p] {
			if _, seen := parent[im]; !seen {
				parent[im] = p
				queue = append(queue, im)
			}
		}
	}
	return chains
}

// The chain search itself: a heavy package two hops down is found with its path, and a package
// that only shares a heavy one's prefix is not taken for it.
func TestHeavyChains(t *testing.T) {
	imports := map[string][]string{
		"a":                                  {"b", modulePath + "/herd/screen/snapshot", "modernc.org/sqlitex"},
		"b":                                  {"c"},
		"c":                                  {"modernc.org/sqlite/lib"},
		"modernc.org/sqlite/lib":             nil,
		"modernc.org/sqlitex":                nil,
		modulePath + "/herd/screen/snapshot": nil,
	}
	got := heavyChains("a", imports)
	want := [][]string{{"a", "b", "c", "modernc.org/sqlite/lib"}}
	if len(got) != 1 || !slices.Equal(got[0], want[0]) {
		t.Fatalf("heavyChains = %v, want %v", got, want)
	}
	imports["b"] = []string{"c", modulePath + "/herd/screen"}
	if got := heavyChains("a", imports); len(got) != 2 || got[0][len(got[0])-1] != modulePath+"/herd/screen" {
		t.Fatalf("heavyChains with herd/screen = %v", got)
	}
}
