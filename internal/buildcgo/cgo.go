//go:build cgo

package buildcgo

// Enabled: this binary was built with cgo, so it links SQLite.
const Enabled = true
