//go:build linux && (amd64 || arm64)

package hookpath

import "0.mosh/early/sys"

// exchange sends line to the daemon listening on sock and returns the first line that is not a
// notification (an answer); ok is false when there is none. Raw system calls (../sys) on a
// nonblocking socket: deadline (nanoseconds) bounds the whole exchange, connect, send and the
// reads together, against CLOCK_MONOTONIC, so that neither a daemon that accepts and never
// answers nor one that trickles notifications, nor the runtime's preemption signals, hold the
// engine's turn longer.
func exchange(sock string, line []byte, deadline int64) ([]byte, bool) {
	end := sys.Monotonic() + deadline
	fd, e := sys.DialUnix(sock, end)
	if e != 0 {
		return nil, false
	}
	defer sys.Close(fd)
	if sys.WriteAll(fd, line, end) != 0 {
		return nil, false
	}
	return readAnswer(func(p []byte) (int, bool) {
		n, e := sys.ReadDeadline(fd, p, end)
		return n, e == 0 && n > 0
	})
}
