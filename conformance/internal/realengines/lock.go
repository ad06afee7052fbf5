// Package realengines holds what the suites that run the real coding-agent CLIs share.
package realengines

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Lock makes the suites that drive real engines (conformance/engines, conformance/mcp,
// conformance/eval) take turns on this machine: `go test ./...` runs packages side by side,
// and two suites each starting Node-based engines at once load a 2-core CI machine enough to
// change the timing the suites measure. The lock is a flock on a file in the temp folder,
// released when the test ends (or its process dies).
func Lock(t testing.TB) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "mosh-real-engines-"+strconv.Itoa(os.Getuid())+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("real-engine lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("real-engine lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}
