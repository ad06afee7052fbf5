package platform

import "golang.org/x/sys/unix"

// extraWaitCall: the poll, select and epoll_wait calls amd64 has besides the p-variants.
func extraWaitCall(nr int) bool {
	return nr == unix.SYS_POLL || nr == unix.SYS_SELECT || nr == unix.SYS_EPOLL_WAIT
}
