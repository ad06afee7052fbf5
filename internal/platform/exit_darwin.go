package platform

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// WatchExit returns a channel that is closed once process pid has ended (at once when it is
// already gone), and stop, which ends the watch; it works for any process, not only a child.
// macOS: a kqueue with EVFILT_PROC NOTE_EXIT on the process and EVFILT_READ on the cancel pipe.
func WatchExit(pid int) (<-chan struct{}, func(), error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, nil, err
	}
	unix.CloseOnExec(kq)
	var p [2]int
	syscall.ForkLock.RLock()
	err = unix.Pipe(p[:])
	if err == nil {
		unix.CloseOnExec(p[0])
		unix.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		unix.Close(kq)
		return nil, nil, err
	}
	changes := make([]unix.Kevent_t, 2)
	unix.SetKevent(&changes[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	changes[0].Fflags = unix.NOTE_EXIT
	unix.SetKevent(&changes[1], p[0], unix.EVFILT_READ, unix.EV_ADD)
	if _, err := unix.Kevent(kq, changes, nil, nil); err != nil {
		unix.Close(kq)
		unix.Close(p[0])
		unix.Close(p[1])
		if errors.Is(err, unix.ESRCH) {
			return gone()
		}
		return nil, nil, err
	}
	done, stop := exitWatch(p[0], p[1], func(int) bool {
		ev := make([]unix.Kevent_t, 1)
		for {
			n, err := unix.Kevent(kq, nil, ev, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err == nil && n > 0 && ev[0].Filter == unix.EVFILT_PROC
		}
	}, func() { unix.Close(kq) })
	return done, stop, nil
}
