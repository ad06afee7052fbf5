package hookpath

import "syscall"

// unixSocket opens a unix stream socket closed on exec (darwin has no SOCK_CLOEXEC; nothing else
// runs in the process meanwhile: this is a package init).
func unixSocket() (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	return fd, err
}
