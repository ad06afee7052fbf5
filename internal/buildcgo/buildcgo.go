// Package buildcgo says whether this binary was built with cgo. mosh's ledger is SQLite through
// github.com/mattn/go-sqlite3, which is C compiled by cgo. Built without cgo (CGO_ENABLED=0, or no
// C compiler found, where Go turns cgo off by itself) that driver is a stub that fails on every
// open with its own text; mosh says so before it gets there, in its own words and with the fix.
package buildcgo

import "github.com/mosh-dev/mosh/exitcode"

// Problem and Fix are what mosh says when it was built without cgo and needs its ledger: the
// message of Err, and herd doctor's check.
const (
	Problem = "this mosh was built without cgo, so it has no SQLite"
	Fix     = "install a C compiler (Debian: build-essential; macOS: xcode-select --install) and rebuild " +
		"with CGO_ENABLED=1 (CGO_ENABLED=1 go build -o bin/mosh ./cmd/mosh)"
)

// Err is nil in a binary built with cgo; otherwise Problem and Fix as an infrastructure failure
// (exit 5).
func Err() error {
	if Enabled {
		return nil
	}
	return exitcode.New(exitcode.Infra, "%s: %s", Problem, Fix)
}
