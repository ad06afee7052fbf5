//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Windows builds main_windows.go alone (it says mosh needs Linux or macOS and exits 5): every
// other file of this command carries //go:build !windows, or the windows build meets it and
// fails with a wall of undefined names.
func TestEveryFileButTheWindowsMainIsNotForWindows(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "main_windows.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "//go:build !windows\n") {
			t.Errorf("cmd/mosh/%s does not start with //go:build !windows: add it (the Windows build is main_windows.go alone)", f)
		}
	}
}
