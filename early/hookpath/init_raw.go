//go:build linux && (amd64 || arm64)

package hookpath

import (
	"0.mosh/early/lite"
	"0.mosh/early/sys"
)

func init() {
	args, getenv, ok := FromProc(sys.ReadFile)
	if !ok || len(args) < 1 {
		return
	}
	if code, ok := ServeTo(args[1:], getenv, fdReader(0), fdWriter(1), func() bool { return sys.IsTerminal(1) }); ok {
		// exit_group at once, not os.Exit (os is not initialised yet, and may not be imported):
		// this skips the runtime's exit hooks, which flush a -cover binary's counters and end a
		// -race binary with its report. Neither matters for this path: nothing but this package's
		// code ran, and everything it printed went out by write(2), not through a buffer.
		sys.ExitGroup(code)
	}
}

var errEOF error = &lite.Error{Text: "EOF"}

// fdReader reads a file descriptor through the raw layer: a blocking read (restarted on a
// signal), or one waited for with ppoll when the descriptor was inherited nonblocking.
type fdReader int

func (fd fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, e := sys.ReadWait(int(fd), p)
	if e != 0 {
		return 0, e
	}
	if n == 0 {
		return 0, errEOF
	}
	return n, nil
}

// fdWriter writes all of p to a file descriptor; standard output closed at the other end ends
// the process by SIGPIPE, as os.Stdout's Write does.
type fdWriter int

func (fd fdWriter) Write(p []byte) (int, error) {
	if e := sys.WriteAll(int(fd), p, -1); e != 0 {
		if e == sys.EPIPE && (fd == 1 || fd == 2) {
			sys.RaiseSIGPIPE()
		}
		return 0, e
	}
	return len(p), nil
}

// readFileAtMost reads at most n bytes of path (more is an error only when the caller says so).
func readFileAtMost(path string, n int) ([]byte, bool) {
	fd, e := sys.Open(path)
	if e != 0 {
		return nil, false
	}
	defer sys.Close(fd)
	b, err := readAtMost(fdReader(fd), n)
	return b, err == nil
}
