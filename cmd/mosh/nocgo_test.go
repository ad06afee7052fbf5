package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// mosh ships built with CGO_ENABLED=0 (README's quick start): every hook event starts a mosh
// process, and a binary that links libc pays the dynamic loader, libc's start-up and cgo's thread
// set-up on each (about half an empty Go binary's start-up again). No package mosh links may need
// cgo to work: with cgo allowed, the only packages with cgo files are the standard library's
// optional ones (net, os/user, runtime/cgo), which have pure-Go versions that CGO_ENABLED=0 selects.
// A dependency that needs cgo (mattn/go-sqlite3 did) builds with CGO_ENABLED=0 into a stub that
// fails at run time, so this is checked on the dependency list, not only by building.
func TestShippedBuildNeedsNoCgo(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if pkgs := strings.Fields(string(out)); len(pkgs) > 0 {
		t.Errorf("packages linked into mosh that use cgo: %s; mosh ships with CGO_ENABLED=0, where they "+
			"compile to stubs or not at all: use a pure-Go package instead", strings.Join(pkgs, ", "))
	}

	// The binary the end-to-end tests run is the shipped one: static, no program interpreter
	// (the dynamic loader) to start.
	if runtime.GOOS != "linux" {
		return
	}
	f, err := elf.Open(moshBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: it was linked dynamically (built with cgo), not as mosh ships", moshBin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s links %v: built with cgo, not as mosh ships", moshBin, libs)
	}
}
