//go:build (linux || darwin) && !(linux && (amd64 || arm64))

package hookpath

import "syscall"

// exchange sends line to the daemon listening on sock and returns the first line that is not a
// notification (an answer); ok is false when there is none. The syscall package's calls (the net
// package is initialised late in the binary and this runs before it); deadline (nanoseconds)
// bounds each step, connect, send and every read, with SO_SNDTIMEO and SO_RCVTIMEO.
func exchange(sock string, line []byte, deadline int64) ([]byte, bool) {
	fd, err := unixSocket()
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	tv := syscall.NsecToTimeval(deadline)
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
	return readAnswer(func(p []byte) (int, bool) {
		for {
			n, err := syscall.Read(fd, p)
			if err != syscall.EINTR {
				return n, err == nil && n > 0
			}
		}
	})
}
