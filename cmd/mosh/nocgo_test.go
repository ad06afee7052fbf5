package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/internal/buildcgo"
)

// mosh's ledger is SQLite through github.com/mattn/go-sqlite3, which needs cgo. A mosh built
// without it (CGO_ENABLED=0, or where Go finds no C compiler and turns cgo off by itself) links the
// driver's stub, whose every open fails with the driver's own text. Such a binary says so at once in
// mosh's words, with the fix, from every verb that needs the ledger (exit 5, infrastructure), and
// herd doctor fails its sqlite check; it never starts a daemon.
func TestBuiltWithoutCgoSaysSoWithTheFix(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "mosh-nocgo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	s := newSandbox(t)
	want := "mosh: " + buildcgo.Problem + ": " + buildcgo.Fix + "\n"
	for _, args := range [][]string{
		{"herd", "tasks"},                   // a ledger read: the client would start the daemon
		{"herd", "run", "b1", "--", "bash"}, // a member: the same
		{"herd", "daemon", "--foreground"},  // the daemon itself
	} {
		s.runCmd(exec.Command(bin, args...), "").expect(t, strings.Join(args, " "), 5, "", want)
	}
	if _, err := os.Stat(filepath.Join(s.moshHome(), "herd", "daemon.log")); !os.IsNotExist(err) {
		t.Errorf("a daemon was started (daemon.log: %v)", err)
	}

	o := s.runCmd(exec.Command(bin, "herd", "doctor", "--json"), "")
	if o.code != 5 {
		t.Fatalf("herd doctor: exit %d, want 5\n%s%s", o.code, o.stdout, o.stderr)
	}
	var r struct {
		Checks []struct{ Name, Level, Detail, Fix string }
	}
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("herd doctor --json: %v\n%s", err, o.stdout)
	}
	found := false
	for _, c := range r.Checks {
		if c.Name == "sqlite" {
			found = c.Level == "fail" && c.Detail == buildcgo.Problem && c.Fix == buildcgo.Fix
			if !found {
				t.Errorf("herd doctor's sqlite check: %+v", c)
			}
		}
	}
	if !found {
		t.Errorf("herd doctor has no failing sqlite check:\n%s", o.stdout)
	}
}
