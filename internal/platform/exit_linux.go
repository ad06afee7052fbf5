package platform

import (
	"errors"

	"golang.org/x/sys/unix"
)

// WatchExit returns a channel that is closed once process pid has ended (at once when it is
// already gone), and stop, which ends the watch; it works for any process, not only a child.
// Linux: a pidfd.
func WatchExit(pid int) (<-chan struct{}, func(), error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return gone()
	}
	if err != nil {
		return nil, nil, err
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	done, stop := exitWatch(p[0], p[1], func(cancel int) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(cancel), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err == nil && fds[0].Revents != 0
		}
	}, func() { unix.Close(fd) })
	return done, stop, nil
}
