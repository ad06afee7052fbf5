//go:build linux || darwin

package hookpath

import (
	"bytes"
	"syscall"
	"time"
)

// reportDeadline bounds each step of the exchange (connect, send, every read), as the ordinary
// report bounds the whole of it: a hung daemon must not hold the engine's turn.
const reportDeadline = 3 * time.Second

// maxAnswer bounds the answer line read (a report's answer is a few hundred bytes).
const maxAnswer = 64 << 10

// exchange sends line to the daemon listening on sock and returns the first line that is not a
// notification (an answer); ok is false when there is none. Raw system calls:
// the net package is initialised late in the binary and this runs before it.
func exchange(sock string, line []byte, deadline time.Duration) ([]byte, bool) {
	fd, err := unixSocket()
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	tv := syscall.NsecToTimeval(deadline.Nanoseconds())
	if syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv) != nil ||
		syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv) != nil {
		return nil, false
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		return nil, false
	}
	for len(line) > 0 {
		n, err := syscall.Write(fd, line)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return nil, false
		}
		line = line[n:]
	}
	buf := make([]byte, 0, 1024)
	for {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			ans := buf[:i]
			if !bytes.HasPrefix(ans, []byte(`{"jsonrpc":"2.0","method":`)) {
				return ans, true
			}
			buf = append(buf[:0], buf[i+1:]...)
			continue
		}
		if len(buf) >= maxAnswer {
			return nil, false
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return nil, false
		}
		buf = buf[:len(buf)+n]
	}
}
