// Package scripts holds the bundled script verbs: every *.mosh file in this directory is
// embedded in the binary and becomes `mosh NAME` (or `mosh herd NAME`) as its header says
// (see runtime/scriptverb for the header syntax). scripts/examples/ is not embedded: those are
// examples the test suite runs, not verbs.
package scripts

import (
	"embed"
	"io/fs"
)

//go:embed *.mosh
var files embed.FS

// Verbs is the bundled verb directory; its root holds the .mosh files.
var Verbs fs.FS = files
