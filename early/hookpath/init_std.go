//go:build !(linux && (amd64 || arm64))

package hookpath

import (
	"io"
	"os"
)

// Here the fast path keeps the standard library (os): its init runs once os is initialised.
func init() {
	if code, ok := ServeTo(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, stdoutTTY); ok {
		os.Exit(code)
	}
}

var errEOF = io.EOF

// readFileAtMost reads at most n bytes of path.
func readFileAtMost(path string, n int) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := readAtMost(f, n)
	return b, err == nil
}
