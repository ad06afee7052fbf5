package herd

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The daemon lives under herd/internal: the compiler keeps packages outside herd/ from importing
// it, and this test keeps the adapters inside and beside herd/ honest too. An adapter (the
// script builtins, the A2A server, the MCP server, the CLI's packages) reaches the daemon only
// through herd.Client and the wire types; cmd/mosh starts a daemon only through herd/herdd, from
// one file.

const modulePath = "github.com/mosh-dev/mosh"

// goList runs `go list` in the module root with args and returns its stdout lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	return goListEnv(t, nil, args...)
}

// goListEnv is goList with env added to the test's environment (GOOS=darwin, …).
func goListEnv(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	cmd := exec.Command(gobin, append([]string{"list"}, args...)...)
	cmd.Dir = ".." // herd/ is one below the module root
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// adapterPatterns are the package patterns of the adapters that exist in this tree.
func adapterPatterns(t *testing.T) []string {
	var pats []string
	for _, dir := range []string{"builtins", "herd/a2aserve", "herd/mcp", "cmd/mosh/internal"} {
		if st, err := os.Stat(filepath.Join("..", dir)); err == nil && st.IsDir() {
			pats = append(pats, "./"+dir+"/...")
		}
	}
	if len(pats) < 2 {
		t.Fatalf("found only %v: the adapters moved? update adapterPatterns", pats)
	}
	return pats
}

func isDaemonPkg(p string) bool {
	return strings.HasPrefix(p, modulePath+"/herd/internal/") || p == modulePath+"/herd/herdd"
}

func TestAdaptersReachNoDaemonPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	lines := goList(t, append([]string{"-f", `{{.ImportPath}} {{join .Deps " "}}`}, adapterPatterns(t)...)...)
	for _, l := range lines {
		f := strings.Fields(l)
		for _, dep := range f[1:] {
			if isDaemonPkg(dep) {
				t.Errorf("%s reaches the daemon package %s: an adapter may use only herd.Client and the wire types (add what it needs to the client)", f[0], dep)
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("go list listed no adapter package")
	}
}

func TestCLIReachesTheDaemonOnlyThroughHerdd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	// No package of cmd/ imports herd/internal/... directly (tests included), and only cmd/mosh
	// imports herd/herdd.
	lines := goList(t, "-f", `{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}}|{{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./cmd/...")
	importers := 0
	for _, l := range lines {
		parts := strings.SplitN(l, "|", 4)
		if len(parts) != 4 {
			t.Fatalf("go list line %q", l)
		}
		pkg, dir, files, imports := parts[0], parts[1], strings.Fields(parts[2]), strings.Fields(parts[3])
		for _, imp := range imports {
			if strings.HasPrefix(imp, modulePath+"/herd/internal/") {
				t.Errorf("%s imports %s: start the daemon through herd/herdd, talk to it through herd.Client", pkg, imp)
			}
			if imp != modulePath+"/herd/herdd" {
				continue
			}
			if pkg != modulePath+"/cmd/mosh" {
				t.Errorf("%s imports herd/herdd: only cmd/mosh's `herd daemon` verb starts a daemon", pkg)
				continue
			}
			for _, f := range files {
				src, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(src, []byte(strconv.Quote(modulePath+"/herd/herdd"))) {
					importers++
				}
			}
		}
	}
	if importers != 1 {
		t.Errorf("%d files of cmd/mosh import herd/herdd, want exactly one (the `herd daemon` verb)", importers)
	}
}
