//go:build !cgo

package buildcgo

// Enabled: this binary was built without cgo, so mattn/go-sqlite3 is a stub without SQLite.
const Enabled = false
